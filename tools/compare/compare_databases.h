// The two-database comparison (`llmbench compare BASE CAND`), from the arguments to the report:
// parsing each side (DB, DB:RUN_ID, DB:ID,ID,... or DB:all), loading its runs (engine runs, or
// serving runs level by level), collapsing several runs per side into one sample per run, and
// choosing the verdict rule (threshold only with one run per side, unless repetitions are
// declared independent). The CLI and the HTML report's compare view (tools/report) both call
// it, so they match cases, decide and warn identically on the same two databases.
// Not here: printing (tools/report/compare_output.h), the interleaved gate (compare_gate.h).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tools/compare/compare_report.h"

namespace llmbench {

struct DatabaseCompareOptions {
  std::string base, cand;     // the arguments: DB, DB:RUN_ID, DB:ID,ID,... or DB:all
  CompareSettings settings;   // alpha, threshold, metrics (threshold_only, runs_as_unit are set)
  bool repetitions_independent = false;
  bool serving = false;       // force the serving mode (else: when both hold only serving runs)
};

struct DatabaseComparison {
  // The loaded sides (the report points into them, so they stay put).
  std::unique_ptr<LoadedRun> base, cand;
  CompareReport report;
  bool serving = false;
  // `info:` lines: the serving mode, runs as the unit, matching that ignored threads,
  // environment notes that are no warning. The warnings are report.warnings.
  std::vector<std::string> info;
};

// Throws BadInput naming the side ("BASE", "CAND") for a missing file or run.
DatabaseComparison compare_databases(const DatabaseCompareOptions& o);

}  // namespace llmbench
