// The NVTX ranges CUPTI recorded (CUPTI_ACTIVITY_KIND_MARKER, which sees NVTX only when
// NVTX_INJECTION64_PATH names libcupti before the process's first NVTX call) checked against
// the ranges llmbench pushed, so a device run shows that Nsight would see llmbench's names and
// nesting without running Nsight (issue 44 section 2). What llmbench pushed is the traced
// repetition's records (OpScope pushes one range per record, in the "llmbench" domain), except
// the ops recorded from a replayed graph, which push none (OpRecord::replayed). Only at --trace
// ops: at steps every op still pushes its range but only the steps are records.
// Plain C++, tested on synthetic marker records (tests/engine/test_activity_attribution.cpp);
// the CUPTI timer reads the records (cupti_timer.cpp).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/model/trace.h"

namespace llmbench {

// One marker record of a push/pop range: its start (with its name) or its end, by range id.
struct NvtxMarker {
  std::uint32_t id = 0;
  bool start = false;
  std::int64_t ts_ns = 0;
  std::string name;        // a start's
  bool in_domain = false;  // the record names the llmbench domain (an end may name none)
};

struct NvtxCheck {
  int pushed = 0;     // ranges llmbench pushed in the traced repetition
  int recorded = 0;   // llmbench-domain ranges CUPTI recorded, start and end paired
  int unpaired = 0;   // llmbench-domain starts without an end, ends without a start
  std::vector<std::string> differences;  // the first few, each naming the range's index
  bool ok() const { return pushed == recorded && unpaired == 0 && differences.empty(); }
  // One line: "nvtx: CUPTI recorded N of N ranges llmbench pushed, names and nesting equal", or
  // what differs.
  std::string summary() const;
};

// `records` in the order they began; `markers` in any order. A range's depth is the number of
// llmbench ranges open around it, by the markers' times (at one instant ends come before starts,
// the later-opened range ending first), compared with the record's depth.
NvtxCheck check_nvtx(const std::vector<OpRecord>& records, const std::vector<NvtxMarker>& markers);

}  // namespace llmbench
