// `llmbench compare BASE CAND [--metric LIST|all] [--alpha A] [--threshold PCT] [--format ...]`
// and `llmbench compare --run BASE_BIN CAND_BIN --config PROFILE`: a performance-regression
// gate. Each side is a result database, optionally DB:RUN_ID (default: its latest run) or
// several runs (DB:ID,ID or DB:all), opened read-only; --run instead runs two binaries in
// randomised interleaved rounds (compare_rounds.h). Cases are matched by configuration and
// each metric gets a Hodges-Lehmann ratio; which rule decides depends on the unit of
// replication (compare_verdict.h):
//   - one run per side (the default with two databases): the threshold alone -- slower when the
//     ratio is worse than 1 + --threshold -- with a warning, because repetitions of one run
//     share that minute's machine state and are no independent samples;
//   - several runs per side, interleaved rounds, or --repetitions-independent: the change must
//     be significant (Mann-Whitney / paired test, p < --alpha) AND worse than the threshold.
// Exit code 1 when any metric of any case regresses, 3 when nothing regressed but the
// comparison could not decide (too few samples or rounds; --allow-inconclusive makes that 0),
// 0 otherwise, 2 for bad input. Warnings and environment differences go to stderr, one line each.
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <random>

#include "kernels/common/error.h"
#include "tools/cli/commands.h"
#include "tools/cli/metric_flags.h"
#include "tools/report/compare_output.h"
#include "tools/compare/compare_databases.h"
#include "tools/store/run_reader.h"
#include "tools/compare/compare_report.h"
#include "tools/compare/compare_rounds.h"
#include "tools/compare/compare_runs.h"
#include "tools/report/gate_output.h"
#include "tools/compare/compare_sequential.h"
#include "tools/history/history_import.h"
#include "tools/store/store.h"

namespace llmbench {

namespace {

struct CompareOptions {
  std::string base, cand;
  std::string metrics = "ttft,tpot,e2e";
  double alpha = 0.05;
  double threshold_pct = 5.0;
  std::string format = "table";
  // Interleaved mode (--run).
  std::vector<std::string> run_bins;  // BASE_BIN CAND_BIN
  std::string config;
  std::string rounds = "auto";  // "auto": until decided (compare_sequential.h), or a number
  int max_rounds = 30;
  std::string history;  // --history H.db: append the gate's points (tools/history)
  std::optional<std::string> commit, commit_time, branch;
  std::optional<int> repeat, warmup;
  std::string db;  // "": a new temporary directory (gate_db_path)
  std::optional<std::uint64_t> seed;
  std::vector<std::string> sweep_args;
  bool quiet = false;
  bool repetitions_independent = false;
  bool serving = false;  // compare `llmbench load` runs (load_run), level by level
  bool allow_inconclusive = false;
  bool threshold_gate = false;  // one run per side: gate on the threshold alone (exit 1)
};

// The exit code of a comparison: 1 on a regression; 3 when it could not decide (too few
// samples or rounds, or nothing decided: compare_report.h) unless --allow-inconclusive; else 0.
// The inconclusive warning itself is among the report's warnings, printed already.
int compare_exit_code(bool regressed, bool inconclusive, const CompareOptions& o) {
  if (regressed) return 1;
  if (inconclusive && !o.allow_inconclusive) return 3;
  return 0;
}

// Where the gate's databases and log go: beside --db when given, else in a new directory under
// $TMPDIR (or /tmp), so a gate never litters the current directory. Printed on stderr.
std::string gate_db_path(const CompareOptions& o) {
  if (!o.db.empty()) return o.db;
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/llmbench-gate.XXXXXX";
  if (!mkdtemp(dir.data()))
    throw Error(fmt::format("cannot create a temporary directory for the gate ({}): {}", dir,
                            std::strerror(errno)));
  return dir + "/gate.db";
}

CompareSettings settings_from(const CompareOptions& o) {
  CompareSettings s;
  if (!(o.alpha > 0 && o.alpha < 1))
    throw BadInput(fmt::format("--alpha: expected a number in (0, 1), got {}", o.alpha));
  if (!(o.threshold_pct >= 0) || o.threshold_pct > 1e6)
    throw BadInput(fmt::format("--threshold: expected a percentage >= 0, got {}", o.threshold_pct));
  s.alpha = o.alpha;
  s.threshold = o.threshold_pct / 100.0;
  s.metrics = parse_metrics("--metric", o.metrics);
  s.threshold_gate = o.threshold_gate;
  return s;
}

// `compare --run BASE_BIN CAND_BIN --config PROFILE`: rounds, then the paired decision.
int run_interleaved(const CompareOptions& o, const CompareSettings& settings) {
  if (o.config.empty()) throw BadInput("--run needs --config PROFILE (the profile both sides run)");
  if (!o.base.empty() || !o.cand.empty())
    throw BadInput("--run runs both sides itself: give BASE_BIN CAND_BIN to --run, not databases");
  const bool adaptive = o.rounds == "auto";
  int fixed_rounds = 0;
  if (!adaptive) {
    std::size_t used = 0;
    try {
      fixed_rounds = std::stoi(o.rounds, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != o.rounds.size() || fixed_rounds < 1 || fixed_rounds > 1000)
      throw BadInput(fmt::format("--rounds: expected auto or 1 to 1000, got '{}'", o.rounds));
  }
  if (o.max_rounds < 2 || o.max_rounds > 1000)
    throw BadInput(fmt::format("--max-rounds: expected 2 to 1000, got {}", o.max_rounds));
  SequentialGate sequential(o.max_rounds, settings);
  RoundsOptions ro;
  ro.base_bin = o.run_bins.at(0);
  ro.cand_bin = o.run_bins.at(1);
  ro.profile = o.config;
  ro.rounds = adaptive ? o.max_rounds : fixed_rounds;
  if (adaptive)
    ro.after_round = [&](const std::vector<GateRound>& r) { return sequential.after_round(r); };
  ro.repeat = o.repeat;
  ro.warmup = o.warmup;
  ro.extra_args = o.sweep_args;
  ro.db = gate_db_path(o);
  if (o.db.empty())
    fmt::print(stderr, "info: the gate's databases and log go to {} (--db to choose)\n",
               ro.db.substr(0, ro.db.rfind('/')));
  ro.order_seed = o.seed ? *o.seed : std::uint64_t(std::random_device{}()) << 32 | std::random_device{}();
  // Progress on a terminal only (one line, rewritten); CI logs get the result alone.
  const bool tty = !o.quiet && isatty(STDERR_FILENO);
  if (tty) ro.progress = [](const std::string& line) { fmt::print(stderr, "\r{}   ", line); };
  const RoundsResult rounds = [&] {
    try {
      return run_rounds(ro);
    } catch (const BadInput&) {  // refused before any round: leave no empty directory behind
      if (o.db.empty()) {
        std::error_code ec;
        std::filesystem::remove(std::filesystem::path(ro.db).parent_path(), ec);
      }
      throw;
    }
  }();
  if (tty) fmt::print(stderr, "\r\033[K");
  GateReport report = build_gate_report(rounds.rounds, settings);
  report.order_seed = ro.order_seed;
  if (adaptive) sequential.apply(report);
  store_gate_result(rounds.gate_db, rounds.gate_id, report);
  if (!o.history.empty() && report.rounds_complete > 0) {
    PointContext ctx{o.commit, o.commit_time, o.branch, std::nullopt, /*live=*/true};
    ResultStore history(o.history);
    const int added = append_history(
        history.db(), points_from_gate(report, rounds.rounds, o.config,
                                       fmt::format("{}:gate {}", ref_path(rounds.gate_db), rounds.gate_id),
                                       ctx));
    fmt::print(stderr, "info: {} point(s) appended to the history {}\n", added, o.history);
  }
  if (adaptive) fmt::print(stderr, "info: {}\n", report.stopping);
  for (const SideRun& s : rounds.runs)
    if (s.exit_code != 0)
      fmt::print(stderr, "warning: round {} {}: exit code {}{} (log: {})\n", s.round,
                 s.base ? "base" : "candidate", s.exit_code,
                 s.run ? "" : ", no run read back", rounds.log_path);
  for (const auto& w : report.warnings) fmt::print(stderr, "warning: {}\n", w);
  if (o.format == "json" || o.format == "csv") fmt::print(stderr, "{}\n", noise_floor_text(report));
  print_gate_report(std::cout, o.format, report, rounds);
  std::cout.flush();
  if (report.rounds_complete == 0)
    throw BadInput("no round completed on both sides (the children's output is in " + rounds.log_path + ")");
  return compare_exit_code(report.regressed(), report.inconclusive(), o);
}

int run_compare(const CompareOptions& o) {
  const CompareSettings settings = settings_from(o);
  if (!o.run_bins.empty()) return run_interleaved(o, settings);
  if (o.base.empty() || o.cand.empty())
    throw BadInput(std::string("compare: ") + (o.base.empty() ? "base" : "cand") +
                   " is missing: expected BASE CAND databases, or --run BASE_BIN CAND_BIN "
                   "--config PROFILE");
  DatabaseCompareOptions dco;
  dco.base = o.base;
  dco.cand = o.cand;
  dco.settings = settings;
  dco.repetitions_independent = o.repetitions_independent;
  dco.serving = o.serving;
  const DatabaseComparison cmp = compare_databases(dco);
  const CompareReport& report = cmp.report;
  for (const auto& w : report.warnings) fmt::print(stderr, "warning: {}\n", w);
  for (const auto& line : cmp.info) fmt::print(stderr, "info: {}\n", line);
  print_report(std::cout, o.format, report);
  std::cout.flush();
  return compare_exit_code(report.regressed(), report.inconclusive(), o);
}

}  // namespace

void add_compare_command(CLI::App& root, CommandContext& ctx) {
  auto o = std::make_shared<CompareOptions>();
  CLI::App* cmd = root.add_subcommand(
      "compare", "Compare two runs with statistics; exit 1 when a case regresses, 3 when the "
                 "comparison cannot decide (CI gate)");
  cmd->footer(
      "Examples:\n  llmbench compare --run base/llmbench head/llmbench --config "
      "profiles/ci-smoke.toml --rounds 20\n  llmbench compare base.db head.db\n  llmbench "
      "compare base.db:all head.db:all --metric ttft,tpot --threshold 10\n  llmbench compare "
      "base.db head.db --format json\n  llmbench compare --serving vllm.db llmbench.db");
  cmd->add_option("base", o->base,
                  "Base result database: DB or DB:RUN_ID (default: latest run), or several runs "
                  "as DB:ID,ID,... or DB:all (one sample per run)");
  cmd->add_option("cand", o->cand, "Candidate result database, the same forms");
  cmd->add_option("--run", o->run_bins,
                  "Interleaved mode: run BASE_BIN and CAND_BIN (two llmbench binaries) in "
                  "randomised rounds and decide on the per-round paired ratios")
      ->expected(2)
      ->type_name("BASE_BIN CAND_BIN");
  cmd->add_option("--config", o->config, "With --run: the profile both sides sweep");
  cmd->add_option("--rounds", o->rounds,
                  "With --run: rounds (each runs both sides once), or auto: until every metric is "
                  "decided by the sequential rule (docs/ci.md) or --max-rounds ran out (exit 3)")
      ->capture_default_str();
  cmd->add_option("--max-rounds", o->max_rounds, "With --rounds auto: the most rounds")
      ->capture_default_str();
  cmd->add_option("--history", o->history,
                  "With --run: append the gate's points (the candidate's medians, verdicts, noise "
                  "floor) to this history database (llmbench history)");
  cmd->add_option("--commit", o->commit, "With --history: the candidate's commit (default: "
                                         "GITHUB_SHA, CI_COMMIT_SHA, else its build's)");
  cmd->add_option("--commit-time", o->commit_time,
                  "With --history: the commit's time, ISO 8601 (default: when the run started)");
  cmd->add_option("--branch", o->branch, "With --history: the branch (default: GITHUB_HEAD_REF, "
                                         "GITHUB_REF_NAME, CI_COMMIT_REF_NAME, else '')");
  cmd->add_option("--repeat", o->repeat, "With --run: measured repetitions per case and round "
                                         "(default: the profile's)");
  cmd->add_option("--warmup", o->warmup, "With --run: warm-up repetitions per case and round "
                                         "(default: the profile's)");
  cmd->add_option("--db", o->db, "With --run: the gate database (rounds, samples, verdicts); "
                                 "the sides' runs go to X.base.db and X.cand.db and the children's "
                                 "output to X.db.log beside it (default: a new directory under "
                                 "$TMPDIR or /tmp, printed)");
  cmd->add_flag("--allow-inconclusive", o->allow_inconclusive,
                "Exit 0 instead of 3 when the comparison could not decide (too few samples or "
                "rounds for any verdict); the warning is still printed");
  cmd->add_flag("--threshold-gate", o->threshold_gate,
                "Two databases with one run per side: gate on the threshold alone (exit 1 when a "
                "metric's whole interval is beyond it). Without it such a comparison is no valid "
                "test and exits 3");
  cmd->add_option("--seed", o->seed, "With --run: seed of the randomised A/B order "
                                     "(default: random, printed)");
  cmd->add_option("--sweep-arg", o->sweep_args,
                  "With --run: an extra flag for both sides' `sweep` (repeatable, e.g. "
                  "--sweep-arg=--threads --sweep-arg=1)")
      ->allow_extra_args(false);
  cmd->add_flag("--quiet", o->quiet, "With --run: no progress on stderr");
  cmd->add_flag("--repetitions-independent", o->repetitions_independent,
                "Two databases: treat repetitions as independent and require p < alpha (the "
                "rule before interleaved rounds; false-alarms when the two runs saw different "
                "machine load). Default: threshold-only verdict with a warning");
  cmd->add_flag("--serving", o->serving,
                "Compare serving runs (llmbench load; DB:ID is a load_run id) level by level; "
                "automatic when both databases hold only serving runs");
  cmd->add_option("--metric", o->metrics,
                  "Comma-separated metrics: ttft, tpot, e2e, throughput, or all")
      ->capture_default_str();
  cmd->add_option("--alpha", o->alpha, "Significance level of the two-sided Mann-Whitney U test")
      ->capture_default_str();
  cmd->add_option("--threshold", o->threshold_pct,
                  "Smallest change that counts, in percent (a regression must be significant "
                  "and worse than this)")
      ->capture_default_str();
  cmd->add_option("--format", o->format, "table|md|csv|json")
      ->check(CLI::IsMember({"table", "md", "csv", "json"}))
      ->capture_default_str();
  cmd->callback([o, &ctx] { ctx.exit_code = run_compare(*o); });
}

}  // namespace llmbench
