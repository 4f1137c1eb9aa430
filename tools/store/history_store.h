// History over commits (docs/ci.md, "History"): the history_series and history_point tables of
// the one schema (schema_sql_v7.cpp, version 12). A series is one metric of one case of one suite
// on one machine (the fingerprint: CPU model, ISA path, threads, GPU, driver), so a series never
// mixes machines; a point is one commit's value with its interval, noise floor and gate verdict.
// Here: the plain rows, appending them (idempotent per source) and reading every series back in
// order. Not here: where points come from (tools/history/history_import.h) or change points.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tools/store/sqlite_db.h"

namespace llmbench {

struct SeriesKey {
  std::string suite, case_label, metric;
  std::string cpu, cpu_isa, gpu, driver;
  int threads = 0;
  std::optional<bool> higher_is_better;  // nullopt: unknown (CSV)

  // "suite / case / metric": what outputs name a series by ("csv / NAME" for a CSV series).
  std::string name() const;
  // "CPU (isa), N threads, GPU driver D"; "" when nothing is known (CSV).
  std::string machine() const;
};

struct HistoryPoint {
  std::string commit, branch;
  std::string time;  // ISO 8601; orders the series (ties: insertion order)
  double value = 0;
  std::optional<double> ci_low, ci_high, noise_pct;
  std::optional<std::string> verdict;
  std::string source;      // run | load | gate | csv
  std::string source_ref;  // what it came from; a point is stored once per series and source_ref
};

struct HistorySeries {
  std::int64_t id = 0;
  SeriesKey key;
  std::vector<HistoryPoint> points;  // ordered by time, then insertion
};

// Appends points to their series (created when new) in one transaction; a point whose series
// already holds its source_ref is skipped (re-importing a database adds nothing). Returns the
// number of points added.
int append_history(Db& db, const std::vector<std::pair<SeriesKey, HistoryPoint>>& points);

// Every series with its points, series in id order.
std::vector<HistorySeries> read_history(Db& db);

}  // namespace llmbench
