// What a run records about itself and its environment (the `run` table's row): the command
// line, build, commit, host, CPU/GPU, threads, and the peaks MBU/MFU divide by.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "engine/bench/metrics.h"

namespace llmbench {

struct RunInfo {
  std::string started_at;      // UTC, ISO 8601
  std::string command_line;
  std::string version;         // llmbench version
  std::string git_commit;      // of the source tree at configure time
  std::string build_type;      // CMAKE_BUILD_TYPE
  std::string host;            // hostname
  std::string cpu;             // CPU model
  std::string gpu;             // "" without a GPU backend
  std::string driver;          // GPU driver version, "" on CPU
  int threads = 0;
  Peaks peaks;
  // The plan the run executes (tools/store/case_key.h): what `--resume` matches on.
  std::string plan_key;
  int n_cases = 0;
  std::string profile;  // the --config / sweep profile, "" if none
  std::string shard;    // "K/N", "" when not sharded
  std::string sweep_key;  // plan key of the unsharded plan: equal for every shard of a sweep
};

// Fills everything but command_line, threads and peaks.
RunInfo current_run_info();

class Db;
// The stored row of run `run_id` (the columns a schema-version-1 database already had, plus
// the sweep columns where the database has them), or nullopt when there is no such run.
std::optional<RunInfo> read_run_info(Db& db, std::int64_t run_id);
std::string utc_now_iso8601();

}  // namespace llmbench
