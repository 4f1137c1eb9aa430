// The result store: an SQLite database that accumulates runs (append, like a lab notebook).
// Opening one brings it to the one schema of every llmbench database (schema.h,
// docs/schema.md); ResultStore writes the run tables (run, bench_case, bench_sample,
// bench_step), one transaction per case so an interrupted sweep keeps every finished case. A
// case's traced repetition goes to the trace tables (process, thread, track, event) in the
// same transaction. The load, serve and gate writers open their databases through it too.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "engine/bench/bench_case.h"
#include "tools/store/run_info.h"
#include "tools/store/schema.h"
#include "tools/store/setup_lock.h"
#include "tools/store/sqlite_db.h"

namespace llmbench {

class ResultStore {
 public:
  // Opens or creates the database and brings its schema to kSchemaVersion (migrate_schema).
  // Throws BadInput when the file is not an SQLite database, is not llmbench's, or has a newer
  // schema.
  explicit ResultStore(const std::string& path);

  // Inserts the run row (status 'running'); returns its id.
  std::int64_t begin_run(const RunInfo& info);
  // Sets the run's status without finishing it ('running' again when resumed).
  void set_run_status(std::int64_t run_id, const std::string& status);
  // The peaks the run's metrics divide by.
  Peaks run_peaks(std::int64_t run_id);
  // The run's row (what begin_run stored).
  RunInfo run_info(std::int64_t run_id);
  // Sets the run's final status ('complete' or 'interrupted') and finished_at.
  void finish_run(std::int64_t run_id, const std::string& status);
  // The latest run executing the plan `plan_key` (what --resume continues), if any.
  std::optional<std::int64_t> find_run(const std::string& plan_key);
  // The case keys (tools/store/case_key.h) stored for a run: the cases --resume skips.
  std::set<std::string> stored_case_keys(std::int64_t run_id);
  // Inserts one case (and its samples and steps) in one transaction; returns the case id.
  // case_index: its place in the unsharded plan (-1: not from a plan; stored as NULL).
  std::int64_t add_case(std::int64_t run_id, const CaseResult& result, int case_index = -1);

  Db& db() { return db_; }

 private:
  // The case's trace: one thread track, and its records as events (in add_case's transaction).
  void write_trace(std::int64_t run_id, std::int64_t case_id, const CaseResult& c);

  SetupLock setup_lock_;  // held from before the database is opened to the end of the constructor
  Db db_;
};

}  // namespace llmbench
