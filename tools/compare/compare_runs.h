// Runs as the unit of the two-database mode: `llmbench compare BASE.db:all CAND.db:all` (or
// DB:1,2,3) loads several runs per side and compares them with one sample per run (each run's
// median per case and metric), so the Mann-Whitney test counts runs, not repetitions (which
// share a run's machine state). With one run per side there is no valid test (compare_report.h,
// one_run_warning). Not here: loading one run (tools/store/run_reader.h), the verdicts (compare_verdict.h).
#pragma once
#include <string>
#include <vector>

#include "tools/store/run_reader.h"

namespace llmbench {

// "x.db:all" -> every run of x.db in id order (the shards of a merged sweep once); "x.db:1,2,5" -> those runs; anything else is
// parse_side's single run. Throws BadInput (naming `what`) for a missing file or run.
std::vector<SideSpec> parse_sides(const std::string& arg, const std::string& what);

// One LoadedRun whose samples are per-run medians: the cases of the first run, each matched
// by configuration (label, then occurrence) in every run; a case's metric gets one value per
// run that has it with status ok. The run row is the first run's; `path` names the runs
// ("x.db runs 1-20"). A case is status ok when at least one run has it ok.
LoadedRun collapse_runs(const std::vector<LoadedRun>& runs);

}  // namespace llmbench
