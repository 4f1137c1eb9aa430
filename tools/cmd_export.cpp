// `llmbench export FORMAT ...`: writes what a result database holds in another tool's format,
// one sub-subcommand per format, each registered by one add_export_* line below.
//   llmbench export chrome DB [--run N] -o trace.json[.gz]   (Perfetto UI, chrome://tracing)
//   llmbench export gbench DB [--run N] -o results.json      (Google Benchmark's compare.py)
// Output is written to a temporary file and renamed, so a failure leaves no partial file.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <iostream>
#include <memory>

#include "kernels/common/error.h"
#include "tools/commands.h"
#include "tools/export_chrome.h"
#include "tools/export_gbench.h"
#include "tools/file_io.h"
#include "tools/query_runner.h"

namespace llmbench {

namespace {

struct ChromeOptions {
  std::string db, out;
  std::optional<std::int64_t> run;
};

int export_chrome(const ChromeOptions& o) {
  auto db = open_query_db(o.db);  // read-only, never created
  const ChromeExport e = export_chrome_trace(*db, o.db, o.run);
  if (o.out == "-") {
    std::cout << e.json;
  } else {
    write_file_atomically(o.out, e.json, has_gz_suffix(o.out));
  }
  fmt::print(stderr, "exported run {}: {} events and {} flows on {} traced cases to {}\n",
             e.run_id, e.events, e.flows, e.tracks, o.out == "-" ? "stdout" : o.out);
  return 0;
}

void add_export_chrome(CLI::App& export_cmd, CommandContext& ctx) {
  auto o = std::make_shared<ChromeOptions>();
  CLI::App* cmd = export_cmd.add_subcommand(
      "chrome", "A run's trace as Chrome trace-event JSON (Perfetto UI, chrome://tracing)");
  cmd->add_option("db", o->db, "SQLite database written by llmbench run")->required();
  cmd->add_option("--run", o->run, "run.id to export (default: the latest run with a trace)");
  cmd->add_option("-o,--output", o->out, "Output file (.json, or .json.gz to compress; - for stdout)")
      ->required();
  cmd->callback([o, &ctx] { ctx.exit_code = export_chrome(*o); });
}

}  // namespace

void add_export_command(CLI::App& root, CommandContext& ctx) {
  CLI::App* export_cmd =
      root.add_subcommand("export", "Write a database's traces or results in another format");
  export_cmd->require_subcommand(1);
  add_export_chrome(*export_cmd, ctx);
  add_export_gbench(export_cmd, ctx);
}

}  // namespace llmbench
