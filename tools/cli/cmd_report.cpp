// `llmbench report DB[:RUN] [DB2[:RUN] | --compare DB2[:RUN]] [--run N] [-o report.html]`: one
// self-contained HTML page with the charts of a run or load run (tools/report/report_data.h for the numbers, report_html.h for the page) and,
// with a second database or run, the compare view. Read-only on the databases.
#include <CLI/CLI.hpp>

#include <chrono>
#include <iostream>
#include <memory>
#include <optional>

#include "engine/checkpoint/atomic_file.h"
#include "kernels/common/error.h"
#include "tools/cli/commands.h"
#include "tools/report/report_data.h"
#include "tools/report/report_history.h"
#include "tools/report/report_html.h"

namespace llmbench {

namespace {

struct ReportCliOptions {
  std::string db, db2, out = "report.html";
  std::int64_t run = 0;  // 0: the latest run group
  bool quiet = false;
};

int run_report_command(const ReportCliOptions& o) {
  if (o.db.empty())
    throw BadInput("report: expected a result database: llmbench report DB [DB2] -o report.html "
                   "(DB: the .db file written by llmbench run, sweep or load; DB:N picks run N; "
                   "DB2 adds the compare view)");
  const auto t0 = std::chrono::steady_clock::now();
  if (o.db2.empty() && o.run == 0 && is_history_database(o.db)) {
    // A history database (llmbench history, --history): its series over commits.
    const std::string html = render_history_html(o.db, CheckOptions{});
    write_file_atomically(o.out, html, "report: -o");
    if (!o.quiet) std::cerr << "report: wrote " << o.out << " (history, " << html.size() / 1024 << " KiB)\n";
    return 0;
  }
  const std::string chartjs = load_chartjs();
  ReportOptions ro;
  ro.db = o.db;
  ro.db2 = o.db2;
  if (o.run > 0) ro.run = o.run;
  const auto data = build_report_data(ro);
  const std::string html = render_report_html(data, chartjs);
  // Whole or not at all: a failed write leaves no half page (and keeps an older one intact).
  write_file_atomically(o.out, html, "report: -o");
  if (!o.quiet) {
    int charts = 0;
    for (const auto& s : data["sections"]) charts += int(s["charts"].size());
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cerr << "report: wrote " << o.out << " (" << charts << " charts, "
              << data["omitted"].size() << " sections not shown, " << html.size() / 1024
              << " KiB, " << int(secs * 1000) << " ms)\n";
  }
  return 0;
}

}  // namespace

void add_report_command(CLI::App& root, CommandContext& ctx) {
  auto o = std::make_shared<ReportCliOptions>();
  CLI::App* cmd = root.add_subcommand(
      "report", "Write one self-contained HTML page of charts (sweep, roofline, op time, "
                "timeline, serving, compare) from a result database");
  cmd->footer(
      "Runs: DB:N is run group N or load run N, whichever exists (both: refused as ambiguous); "
      "DB:run:N and DB:load:N say which. DB alone: the latest run and every load run.\n"
      "Examples:\n  llmbench report llmbench.db -o report.html\n  llmbench report llmbench.db "
      "--run 3\n  llmbench report base.db head.db -o compare.html\n  llmbench report x.db:1 "
      "x.db:2\n  llmbench report serving.db:load:1 --compare serving.db:load:2");
  cmd->add_option("db", o->db,
                  "Result database: DB, DB:N, DB:run:N or DB:load:N (default: the latest run "
                  "and every load run)");
  auto* pos2 = cmd->add_option("db2", o->db2,
                               "Second database or run (as DB) to compare against: adds the "
                               "compare view (DB is the base)");
  cmd->add_option("--compare", o->db2, "The same as DB2: the candidate side of the compare view")
      ->excludes(pos2);
  cmd->add_option("--run", o->run,
                  "Run of DB to report, as DB:N (run group or load run; default: the latest)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("-o,--output", o->out, "HTML file to write")->capture_default_str();
  cmd->add_flag("--quiet", o->quiet, "Print nothing on success");
  cmd->callback([o, &ctx] { ctx.exit_code = run_report_command(*o); });
}

}  // namespace llmbench
