// Environment differences between the two runs of `llmbench compare`, from their `run` rows:
// a warning when a difference can change timings by itself (build type, CPU model, GPU model,
// GPU driver, thread count), an info line when it is expected or harmless (llmbench version,
// git commit, host name). Clock frequencies are not recorded in the run table, so they cannot
// be compared (docs/metrics.md, "compare").
#pragma once
#include <string>
#include <vector>

#include "tools/store/run_reader.h"

namespace llmbench {

struct EnvNote {
  bool warning = true;  // false: informational
  std::string field;    // "build_type", "cpu", ...: the run table's column
  std::string base, cand;
  // "build_type differs: base 'Release', candidate 'Debug'"
  std::string text() const;
};

// One note per differing field, warnings first, in the order listed above.
std::vector<EnvNote> environment_notes(const RunInfo& base, const RunInfo& cand);

}  // namespace llmbench
