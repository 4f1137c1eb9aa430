// --history on run, sweep and load (see history_flags.h).
#include "tools/cli/history_flags.h"

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "tools/history/history_import.h"
#include "tools/store/store.h"

namespace llmbench {

void add_history_flags(CLI::App* cmd, HistoryFlags& f) {
  const std::string group = "History (docs/ci.md)";
  cmd->add_option("--history", f.history,
                  "Also append this run's medians to a history database (llmbench history)")
      ->type_name("PATH")->group(group);
  cmd->add_option("--commit", f.commit, "With --history: the commit measured (default: "
                                        "GITHUB_SHA, CI_COMMIT_SHA, else this build's)")
      ->group(group);
  cmd->add_option("--commit-time", f.commit_time,
                  "With --history: the commit's time, ISO 8601 (default: when the run started)")
      ->group(group);
  cmd->add_option("--branch", f.branch, "With --history: the branch (default: GITHUB_HEAD_REF, "
                                        "GITHUB_REF_NAME, CI_COMMIT_REF_NAME, else '')")
      ->group(group);
}

void append_latest_run(const HistoryFlags& f, const std::string& db, bool serving) {
  if (f.history.empty()) return;
  PointContext ctx{f.commit, f.commit_time, f.branch, std::nullopt, /*live=*/true};
  const LoadedRun run = serving ? read_serving_run(SideSpec{db, std::nullopt}, "DB")
                                : read_bench_run(SideSpec{db, std::nullopt}, "DB");
  const std::string ref = fmt::format("{}:{} {}", ref_path(db), serving ? "load_run" : "run", run.run.id);
  const HistoryRows rows = serving ? points_from_load_run(run, ref, ctx) : points_from_run(run, ref, ctx);
  ResultStore store(f.history);
  const int added = append_history(store.db(), rows);
  fmt::print(stderr, "info: {} point(s) appended to the history {}\n", added, f.history);
}

}  // namespace llmbench
