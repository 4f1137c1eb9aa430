// Where history points come from (docs/ci.md, "History"): a run or load run read back from a
// result database, a gate (`compare --run`, live or read back from its gate database), or a CSV
// file with the header `series,commit,time,value`. Each becomes (series key, point) pairs for
// tools/store/history_store.h. Not here: storing them (history_store.h), change points
// (history_check.h).
//
// A point's commit: PointContext::commit when given (--commit), else, for points appended
// live (run/load/compare --history), GITHUB_SHA or CI_COMMIT_SHA when set, else the commit the
// measuring build recorded in its run row (its own build's commit). `history add` of stored
// databases skips the environment (a backfill names each run's own commit). Its time: --commit-time
// when given, else the CSV row's, else when the run started (UTC ISO 8601). Its branch: --branch,
// else GITHUB_HEAD_REF / GITHUB_REF_NAME / CI_COMMIT_REF_NAME (live only), else ''.
// Values: a run's or load level's case contributes each metric's median over its repetitions
// with a distribution-free 95% interval of the median (order statistics at n/2 -+ 0.98 sqrt(n),
// clamped to the sample); a gate contributes the candidate's median over rounds (of each
// round's median), the paired ratio's interval applied to the base's median, its A/A noise
// floor and its verdict.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tools/compare/compare_gate.h"
#include "tools/store/history_store.h"
#include "tools/store/run_reader.h"

namespace llmbench {

struct PointContext {
  std::optional<std::string> commit, commit_time, branch, suite;
  bool live = false;  // appended by the command that measured it: the CI variables apply
};

using HistoryRows = std::vector<std::pair<SeriesKey, HistoryPoint>>;

// The commit and branch a live point gets when neither flag is given (see above); nullopt when
// no variable is set.
std::optional<std::string> commit_from_environment();
std::optional<std::string> branch_from_environment();

// The suite of a run: its profile's file name without directory and ".toml"; "run" when none.
std::string suite_of(const std::string& profile);

// The name a source_ref gives a file: absolute and normalised, so importing it again from
// another directory or by another spelling adds nothing.
std::string ref_path(const std::string& path);

// The points of one engine run (every ok case x TTFT, TPOT, e2e, throughput).
HistoryRows points_from_run(const LoadedRun& run, const std::string& source_ref,
                            const PointContext& ctx);
// The points of one load run (read_serving_run's cases, one per level); source "load".
HistoryRows points_from_load_run(const LoadedRun& run, const std::string& source_ref,
                                 const PointContext& ctx);
// The points of one gate: every compared case and metric of `g`, fingerprinted by the
// candidate's first complete round.
HistoryRows points_from_gate(const GateReport& g, const std::vector<GateRound>& rounds,
                             const std::string& profile, const std::string& source_ref,
                             const PointContext& ctx);

// Every run, load run and gate stored in the database at `path` (opened read-only). A gate's
// rounds are read back from its side databases and decided again with the default settings,
// keeping the verdicts the gate stored. Throws BadInput when the file is not an llmbench database.
HistoryRows points_from_database(const std::string& path, const PointContext& ctx);

// A CSV file `series,commit,time,value` (header first, exactly those names; time ISO 8601 as
// YYYY-MM-DD[THH:MM[:SS][Z|+HH:MM]]; value a finite number). Series key: case_label = series,
// suite "csv", no machine, direction unknown. Throws BadInput naming the file and line.
HistoryRows points_from_csv(const std::string& path);

}  // namespace llmbench
