// Writing `llmbench load` results to the SQLite store (docs/schema.md, "Serving benchmark
// tables"): one load_run row per invocation, then per finished level one load_level row with
// its load_request and load_chunk rows in one transaction, so an interrupted sweep keeps every
// level finished before the interruption. The schema itself (tables since version 6) lives in
// tools/store/schema_sql.cpp with the other tables and migrations.
#pragma once
#include <cstdint>
#include <string>

#include "tools/load/load_client.h"
#include "tools/load/load_plan.h"
#include "tools/store/store.h"

namespace llmbench {

struct LoadRunInfo {
  std::string command_line, label, url, endpoint, model, server_cmd, prompt_kind;
  std::string lengths;  // file workloads: where the lengths came from ("" for random)
};

class LoadStore {
 public:
  // Opens or creates the database (migrating it to the current schema, as `run` does).
  explicit LoadStore(const std::string& path);

  std::int64_t begin_run(const LoadPlan& plan, const LoadRunInfo& info);
  // Stores one finished level, its requests and their chunks, in one transaction; returns the
  // level id. `started_unix_ns`: wall clock at the level's origin.
  std::int64_t add_level(std::int64_t run_id, const LevelSpec& level, int max_in_flight,
                         const std::vector<RequestRecord>& requests, std::int64_t duration_ns,
                         std::int64_t started_unix_ns);
  void finish_run(std::int64_t run_id, const std::string& status);

  Db& db() { return store_.db(); }

 private:
  ResultStore store_;
};

}  // namespace llmbench
