// `llmbench export FORMAT ...`: writes what a result database holds in another tool's format,
// one sub-subcommand per format, each registered by one add_export_* line below.
//   llmbench export chrome DB [--run N] -o trace.json[.gz]   (Perfetto UI, chrome://tracing)
//   llmbench export gbench DB [--run N] -o results.json      (Google Benchmark's compare.py)
// Output is written to a temporary file and renamed, so a failure leaves no partial file.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <iostream>
#include <memory>

#include "engine/checkpoint/atomic_file.h"
#include "kernels/common/error.h"
#include "tools/cli/metric_flags.h"
#include "tools/cli/commands.h"
#include "tools/trace_io/export_chrome.h"
#include "tools/trace_io/export_gbench.h"
#include "tools/trace_io/file_io.h"
#include "tools/query/query_runner.h"

namespace llmbench {

namespace {

struct ChromeOptions {
  std::string db, out;
  std::optional<std::int64_t> run;
};

// The missing-argument lines, as the rest of the CLI words them.
void require_db_and_output(const std::string& format, const std::string& db,
                           const std::string& out) {
  if (db.empty())
    throw BadInput("export " + format + ": expected a result database: llmbench export " +
                   format + " DB -o " + (format == "chrome" ? "trace.json" : "results.json") +
                   " (DB: the .db file written by llmbench run)");
  if (out.empty())
    throw BadInput("export " + format + ": expected -o/--output FILE (the file to write; - for stdout)");
}

int export_chrome(const ChromeOptions& o) {
  require_db_and_output("chrome", o.db, o.out);
  auto db = open_query_db(o.db);  // read-only, never created
  const ChromeExport e = export_chrome_trace(*db, o.db, o.run);
  if (o.out == "-") {
    std::cout << e.json;
  } else {
    write_output_file(o.out, e.json, has_gz_suffix(o.out));
  }
  fmt::print(stderr, "exported run {}: {} events and {} flows on {} traced cases to {}\n",
             e.run_id, e.events, e.flows, e.tracks, o.out == "-" ? "stdout" : o.out);
  return 0;
}

void add_export_chrome(CLI::App& export_cmd, CommandContext& ctx) {
  auto o = std::make_shared<ChromeOptions>();
  CLI::App* cmd = export_cmd.add_subcommand(
      "chrome", "A run's trace as Chrome trace-event JSON (Perfetto UI, chrome://tracing)");
  cmd->footer("Examples:\n  llmbench export chrome llmbench.db -o trace.json.gz");
  cmd->add_option("db", o->db, "SQLite database written by llmbench run");
  cmd->add_option("--run", o->run, "run.id to export (default: the latest run with a trace)");
  cmd->add_option("-o,--output", o->out,
                  "Output file (.json, or .json.gz to compress; - for stdout); required");
  cmd->callback([o, &ctx] { ctx.exit_code = export_chrome(*o); });
}

struct GbenchOptions {
  std::string db;
  std::int64_t run_id = 0;  // 0: the latest run
  std::string metrics = "ttft,tpot,e2e";
  std::string output;
};

// Only times fit Google Benchmark's rows; "all" means every time metric.
std::vector<Metric> time_metrics(const std::string& text) {
  std::vector<Metric> out;
  for (Metric m : parse_metrics("--metric", text)) {
    if (!metric_info(m).higher_is_better) {
      out.push_back(m);
    } else if (text.find(metric_info(m).name) != std::string::npos) {
      throw BadInput(std::string("--metric: ") + metric_info(m).name +
                     " is not a time; Google Benchmark's format holds ttft, tpot and e2e");
    }
  }
  return out;
}

int run_export_gbench(const GbenchOptions& o) {
  require_db_and_output("gbench", o.db, o.output);
  const std::vector<Metric> metrics = time_metrics(o.metrics);
  if (o.run_id < 0) throw BadInput("--run: expected a run id >= 1");
  SideSpec spec{o.db, std::nullopt};
  if (o.run_id > 0) spec.run_id = o.run_id;
  const LoadedRun run = read_bench_run(spec, "DB");
  const auto doc = gbench_json(run, metrics);
  if (o.output == "-")
    std::cout << doc.dump(2) << "\n";
  else
    write_file_atomically(o.output, doc.dump(2) + "\n", "-o");
  if (o.output != "-")
    fmt::print(stderr, "wrote {} rows ({} benchmarks) of run {} to {}\n", doc["benchmarks"].size(),
               doc["benchmarks"].empty() ? 0 : doc["benchmarks"].back()["family_index"].get<int>() + 1,
               run.run.id, o.output);
  return 0;
}

void add_export_gbench(CLI::App* export_cmd, CommandContext& ctx) {
  auto o = std::make_shared<GbenchOptions>();
  CLI::App* cmd = export_cmd->add_subcommand(
      "gbench", "Per-repetition samples of one run as Google Benchmark JSON (for its compare.py)");
  cmd->footer("Examples:\n  llmbench export gbench llmbench.db -o results.json\n  llmbench export gbench llmbench.db --run 2 --metric ttft -o -");
  cmd->add_option("db", o->db, "Result database written by llmbench run (opened read-only)");
  cmd->add_option("--run", o->run_id, "Run id (default: the latest run)");
  cmd->add_option("--metric", o->metrics, "Comma-separated time metrics: ttft, tpot, e2e, or all")
      ->capture_default_str();
  cmd->add_option("-o,--output", o->output, "Output JSON file ('-' for stdout); required");
  cmd->callback([o, &ctx] { ctx.exit_code = run_export_gbench(*o); });
}

}  // namespace

void add_export_command(CLI::App& root, CommandContext& ctx) {
  CLI::App* export_cmd =
      root.add_subcommand("export", "Write a database's traces or results in another format");
  export_cmd->footer("Examples:\n  llmbench export chrome llmbench.db -o trace.json\n  llmbench export gbench llmbench.db -o results.json");
  add_export_chrome(*export_cmd, ctx);
  add_export_gbench(export_cmd, ctx);
  // No format (or an unknown one): one line naming the formats, as the rest of the CLI does.
  export_cmd->allow_extras();
  export_cmd->callback([export_cmd] {
    if (!export_cmd->get_subcommands().empty()) return;
    const std::vector<std::string> extra = export_cmd->remaining();
    throw BadInput(
        (extra.empty() ? std::string("export: expected a subcommand naming the format")
                       : "export: unknown format '" + extra.front() + "'") +
        ": chrome (a run's trace as Chrome trace-event JSON for Perfetto UI) or gbench (a run's "
        "samples as Google Benchmark JSON), e.g. llmbench export chrome llmbench.db -o "
        "trace.json");
  });
}

}  // namespace llmbench
