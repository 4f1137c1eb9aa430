// What a run records about itself and its environment: the command line, build, commit,
// host, CPU/GPU, threads, and the peaks MBU/MFU divide by. One struct for the `run` table's
// row (llmbench run / sweep) and the `load_run` table's (llmbench load), which share the
// environment columns (kRunEnvColumns); this file is the one place that writes and reads them.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "engine/bench/metrics.h"

namespace llmbench {

struct RunInfo {
  std::int64_t id = 0;         // run.id (load_run.id for a serving run); 0 before it is stored
  std::string started_at;      // UTC, ISO 8601
  std::string command_line;
  std::string version;         // llmbench version
  std::string git_commit;      // of the source tree at configure time
  std::string build_type;      // CMAKE_BUILD_TYPE
  std::string host;            // hostname
  std::string cpu;             // CPU model
  std::string cpu_isa;         // the CPU kernels' ISA path and any decode op class off it
                               // (cpu::cpu_dispatch_description); "" unknown
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
class Stmt;
// The environment columns `run` and `load_run` share, in the order bind_run_env and
// read_run_env use.
inline constexpr const char* kRunEnvColumns =
    "started_at, command_line, llmbench_version, git_commit, build_type, host, cpu";
inline constexpr int kRunEnvColumnCount = 7;
// Binds kRunEnvColumns from `r` to parameters first .. first + 6.
void bind_run_env(Stmt& s, int first, const RunInfo& r);
// Reads kRunEnvColumns from result columns first .. first + 6 into `r`.
void read_run_env(const Stmt& s, int first, RunInfo& r);

// The stored row of run `run_id` (the columns a schema-version-1 database already had, plus
// the sweep columns where the database has them), or nullopt when there is no such run.
std::optional<RunInfo> read_run_info(Db& db, std::int64_t run_id);
// The environment of load run `load_run_id` (the load_run table; gpu, driver, threads and
// peaks stay empty), or nullopt when there is no such load run.
std::optional<RunInfo> read_load_run_info(Db& db, std::int64_t load_run_id);
std::string utc_now_iso8601();

}  // namespace llmbench
