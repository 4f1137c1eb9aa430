// The two-database comparison (see compare_databases.h).
#include "tools/compare/compare_databases.h"

#include <fmt/core.h>

#include "kernels/common/error.h"
#include "tools/compare/compare_runs.h"

namespace llmbench {

namespace {

// One run: that run. Several (DB:all, DB:1,2,3): one sample per run, a valid test over runs.
LoadedRun load_engine_side(const std::string& arg, const std::string& what, std::size_t& n_runs) {
  const std::vector<SideSpec> specs = parse_sides(arg, what);
  n_runs = specs.size();
  if (specs.size() == 1) return read_bench_run(specs.front(), what);
  std::vector<LoadedRun> runs;
  for (const SideSpec& s : specs) runs.push_back(read_bench_run(s, what));
  return collapse_runs(runs);
}

LoadedRun load_serving_side(const std::string& arg, const std::string& what, std::size_t& n_runs) {
  const std::vector<SideSpec> specs = parse_sides(arg, what);
  if (specs.size() != 1)
    throw BadInput(what + ": serving runs compare one load run per side (DB or DB:LOAD_RUN_ID)");
  n_runs = 1;
  return read_serving_run(specs.front(), what);
}

}  // namespace

DatabaseComparison compare_databases(const DatabaseCompareOptions& o) {
  DatabaseComparison out;
  // Serving runs (`llmbench load`): asked for, or the only runs both databases hold.
  out.serving = o.serving || (serving_only(parse_side(o.base).path) &&
                              serving_only(parse_side(o.cand).path));
  std::size_t n_base = 0, n_cand = 0;
  auto load = out.serving ? load_serving_side : load_engine_side;
  out.base = std::make_unique<LoadedRun>(load(o.base, "BASE", n_base));
  out.cand = std::make_unique<LoadedRun>(load(o.cand, "CAND", n_cand));
  if (out.serving)
    out.info.push_back("serving runs (llmbench load): levels matched by load and lengths; one "
                       "sample per ok request (throughput: its output tokens / E2EL)");
  const bool runs_as_unit = n_base > 1 && n_cand > 1;
  CompareSettings s = o.settings;
  // One run on either side: no valid test, the threshold alone (unless told otherwise).
  s.threshold_only = !runs_as_unit && !o.repetitions_independent;
  s.runs_as_unit = runs_as_unit;
  if (runs_as_unit)
    out.info.push_back(fmt::format("runs as the unit: {} base and {} candidate runs, one sample "
                                   "per run (its median per case and metric)", n_base, n_cand));
  out.report = build_report(*out.base, *out.cand, s, out.serving);
  for (const EnvNote& n : out.report.env)
    if (!n.warning) out.info.push_back(n.text());
  if (out.report.threads_ignored)
    out.info.push_back("each run used one thread count; cases are matched ignoring threads");
  return out;
}

}  // namespace llmbench
