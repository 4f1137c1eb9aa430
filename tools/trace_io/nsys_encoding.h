// How an Nsight Systems SQLite export encodes what the reader needs: process and thread ids
// packed into one global id, NVTX event type numbers, CUPTI's copy-kind labels, versioned API
// names, and NULL-able integer columns. The reader itself (tables, tracks, slices) is
// import_nsys.cpp; this file holds no SQL.
#pragma once
#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "tools/store/sqlite_db.h"

namespace llmbench {

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel"; other names unchanged.
std::string strip_api_version(const std::string& name);

// nsys serialises process and thread ids into one "global id": pid in bits 24..47, tid in 0..23.
inline std::int64_t nsys_pid_of(std::int64_t global_id) { return (global_id >> 24) & 0xFFFFFF; }
inline std::int64_t nsys_tid_of(std::int64_t global_tid) { return global_tid & 0xFFFFFF; }

// NVTX event types (ENUM_NSYS_EVENT_TYPE); read from the export when it has that table.
struct NsysNvtxTypes {
  std::int64_t mark = 34, push_pop = 59, start_end = 60, domain_create = 75;
  // Types that name things (categories, threads, domains) rather than being events.
  std::set<std::int64_t> metadata = {33, 39, 75, 76};
};

// CUPTI_ACTIVITY_MEMCPY_KIND labels, as nsys writes them in ENUM_CUDA_MEMCPY_OPER.
inline constexpr const char* kNsysCopyKinds[] = {
    "Unknown",         "Host-to-Device",  "Device-to-Host",   "Host-to-Array",
    "Array-to-Host",   "Array-to-Array",  "Array-to-Device",  "Device-to-Array",
    "Device-to-Device", "Host-to-Host",   "Peer-to-Peer"};

// Column `i` of the current row, or nullopt when it is NULL.
std::optional<std::int64_t> nsys_opt_int(const Stmt& s, int i);

}  // namespace llmbench
