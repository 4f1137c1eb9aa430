// `llmbench compare BASE CAND [--metric LIST|all] [--alpha A] [--threshold PCT] [--format ...]`:
// a statistical performance-regression gate. Each side is a result database, optionally
// DB:RUN_ID (default: its latest run), opened read-only. Cases are matched by configuration,
// each metric's per-repetition samples compared with a Mann-Whitney U test and a Hodges-Lehmann
// ratio, and a case regresses only when the change is significant at --alpha and worse than
// --threshold percent (compare_verdict.h). Exit code 1 when any metric of any case regresses,
// 0 otherwise, 2 for bad input. Environment differences go to stderr, one line each.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <iostream>
#include <memory>

#include "kernels/common/error.h"
#include "tools/cli/commands.h"
#include "tools/cli/metric_flags.h"
#include "tools/report/compare_output.h"
#include "tools/compare/compare_report.h"

namespace llmbench {

namespace {

struct CompareOptions {
  std::string base, cand;
  std::string metrics = "ttft,tpot,e2e";
  double alpha = 0.05;
  double threshold_pct = 5.0;
  std::string format = "table";
};

CompareSettings settings_from(const CompareOptions& o) {
  CompareSettings s;
  if (!(o.alpha > 0 && o.alpha < 1))
    throw BadInput(fmt::format("--alpha: expected a number in (0, 1), got {}", o.alpha));
  if (!(o.threshold_pct >= 0) || o.threshold_pct > 1e6)
    throw BadInput(fmt::format("--threshold: expected a percentage >= 0, got {}", o.threshold_pct));
  s.alpha = o.alpha;
  s.threshold = o.threshold_pct / 100.0;
  s.metrics = parse_metrics("--metric", o.metrics);
  return s;
}

int run_compare(const CompareOptions& o) {
  const CompareSettings settings = settings_from(o);
  const LoadedRun base = load_run(parse_side(o.base), "BASE");
  const LoadedRun cand = load_run(parse_side(o.cand), "CAND");
  const CompareReport report = build_report(base, cand, settings);
  for (const auto& n : report.env)
    fmt::print(stderr, "{}: {}\n", n.warning ? "warning" : "info", n.text());
  if (report.threads_ignored)
    fmt::print(stderr, "info: each run used one thread count; cases are matched ignoring threads\n");
  print_report(std::cout, o.format, report);
  std::cout.flush();
  return report.regressed() ? 1 : 0;
}

}  // namespace

void add_compare_command(CLI::App& root, CommandContext& ctx) {
  auto o = std::make_shared<CompareOptions>();
  CLI::App* cmd = root.add_subcommand(
      "compare", "Compare two runs with statistics; exit 1 when a case regresses (CI gate)");
  cmd->add_option("base", o->base, "Base result database, DB or DB:RUN_ID (default: latest run)")
      ->required();
  cmd->add_option("cand", o->cand, "Candidate result database, DB or DB:RUN_ID")->required();
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
