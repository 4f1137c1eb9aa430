// `llmbench history add H.db INPUT...` and `llmbench history check H.db`: history over commits
// (docs/ci.md, "History"). add appends the runs, load runs and gates of result or gate databases
// and the rows of CSV files (`series,commit,time,value`) to H.db (created when missing; a source
// already imported adds nothing). check finds the change points of every series (E-divisive
// means with a permutation test) and exits 1 when a regression lies in the newest --recent
// commits of a series, else 0; 2 for bad input.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <filesystem>
#include <iostream>
#include <memory>

#include "kernels/common/error.h"
#include "tools/cli/commands.h"
#include "tools/history/history_check.h"
#include "tools/history/history_import.h"
#include "tools/history/history_output.h"
#include "tools/store/schema.h"
#include "tools/store/store.h"

namespace llmbench {

namespace {

struct AddOptions {
  std::string history;
  std::vector<std::string> inputs;
  std::optional<std::string> commit, commit_time, branch, suite;
  bool quiet = false;
};

struct CheckCliOptions {
  std::string history;
  int recent = 5;
  std::string format = "table";
  bool higher_is_better = false;
  double max_p = 0.01;
  int permutations = 199;
  int min_size = 3;
  double min_change_pct = 0;
};

bool is_csv(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
  return ext == ".csv";
}

int run_add(const AddOptions& o) {
  PointContext ctx;
  ctx.commit = o.commit;
  ctx.commit_time = o.commit_time;
  ctx.branch = o.branch;
  ctx.suite = o.suite;
  HistoryRows rows;
  for (const std::string& in : o.inputs) {
    if (!std::filesystem::exists(in)) throw BadInput(fmt::format("input '{}' does not exist", in));
    HistoryRows r = is_csv(in) ? points_from_csv(in) : points_from_database(in, ctx);
    if (!o.quiet) fmt::print(stderr, "read {}: {} point(s)\n", in, r.size());
    rows.insert(rows.end(), r.begin(), r.end());
  }
  ResultStore store(o.history);
  const int added = append_history(store.db(), rows);
  if (!o.quiet)
    fmt::print(stderr, "{}: {} point(s) added, {} already there\n", o.history, added,
               rows.size() - std::size_t(added));
  return 0;
}

int run_check(const CheckCliOptions& o) {
  if (o.recent < 0) throw BadInput(fmt::format("--recent: expected 0 or more, got {}", o.recent));
  if (!(o.max_p > 0 && o.max_p <= 1))
    throw BadInput(fmt::format("--max-p: expected a number in (0, 1], got {}", o.max_p));
  if (o.permutations < 1 || o.permutations > 100000)
    throw BadInput(fmt::format("--permutations: expected 1 to 100000, got {}", o.permutations));
  if (o.min_size < 2) throw BadInput(fmt::format("--min-size: expected 2 or more, got {}", o.min_size));
  if (!(o.min_change_pct >= 0))
    throw BadInput(fmt::format("--min-change: expected a percentage >= 0, got {}", o.min_change_pct));
  auto db = open_read_only(o.history);
  add_schema_stand_ins(*db);
  CheckOptions c;
  c.recent = o.recent;
  c.higher_is_better = o.higher_is_better;
  c.min_change = o.min_change_pct / 100.0;
  c.detector.max_p = o.max_p;
  c.detector.permutations = o.permutations;
  c.detector.min_size = o.min_size;
  const CheckResult r = check_history(read_history(*db), c);
  print_check(std::cout, o.format, r, c);
  std::cout.flush();
  return r.failed() ? 1 : 0;
}

}  // namespace

void add_history_command(CLI::App& root, CommandContext& ctx) {
  CLI::App* cmd = root.add_subcommand(
      "history", "History over commits: append results, gates and CSV series; find change points");
  cmd->require_subcommand(1);
  cmd->footer("Examples:\n  llmbench history add H.db results.db gate.db\n  llmbench history add "
              "H.db series.csv\n  llmbench history check H.db --recent 5 --format md");

  auto a = std::make_shared<AddOptions>();
  CLI::App* add = cmd->add_subcommand(
      "add", "Append the runs, load runs and gates of databases, and CSV rows, to a history database");
  add->add_option("history", a->history, "The history database (created when missing)")->required();
  add->add_option("inputs", a->inputs,
                  "Result or gate databases, or CSV files with the header series,commit,time,value")
      ->required();
  add->add_option("--commit", a->commit, "The commit of every point (default: each run's own)");
  add->add_option("--commit-time", a->commit_time,
                  "The commit's time, ISO 8601, which orders the series (default: when each run "
                  "started)");
  add->add_option("--branch", a->branch, "The branch of every point (default: '')");
  add->add_option("--suite", a->suite, "The suite of every series (default: each run's profile)");
  add->add_flag("--quiet", a->quiet, "Print nothing on success");
  add->callback([a, &ctx] { ctx.exit_code = run_add(*a); });

  auto c = std::make_shared<CheckCliOptions>();
  CLI::App* check = cmd->add_subcommand(
      "check", "Change points of every series (E-divisive means, permutation test); exit 1 when "
               "a regression lies in the newest --recent commits");
  check->add_option("history", c->history, "The history database")->required();
  check->add_option("--recent", c->recent,
                    "Newest commits of a series in which a regression change point fails the check")
      ->capture_default_str();
  check->add_option("--format", c->format, "table|md|json")
      ->check(CLI::IsMember({"table", "md", "json"}))
      ->capture_default_str();
  check->add_flag("--higher-is-better", c->higher_is_better,
                  "For series that do not know their direction (CSV): higher values are better "
                  "(default: higher is worse)");
  check->add_option("--max-p", c->max_p, "Largest permutation p-value of a change point")
      ->capture_default_str();
  check->add_option("--permutations", c->permutations, "Permutations per test")
      ->capture_default_str();
  check->add_option("--min-size", c->min_size, "Fewest points on either side of a change")
      ->capture_default_str();
  check->add_option("--min-change", c->min_change_pct,
                    "Smallest change reported, in percent of the value before")
      ->capture_default_str();
  check->callback([c, &ctx] { ctx.exit_code = run_check(*c); });
}

}  // namespace llmbench
