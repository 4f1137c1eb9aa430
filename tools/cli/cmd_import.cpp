// `llmbench import nsys FILE.sqlite --db DB` and `llmbench import chrome FILE.json[.gz] --db DB`:
// brings a trace of another tool into the store's trace tables so the same SQL and bundled
// queries run on it. The file is read completely before the database is opened, so bad input
// (exit 2, one `error:` line naming the file) never touches it; the import is written in one
// transaction, and a database file the import created is removed again if writing fails.
// Records the reader could not use are counted on one stderr line and stored with the import.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <numeric>

#include "kernels/common/error.h"
#include "tools/cli/commands.h"
#include "tools/trace_io/import_chrome.h"
#include "tools/trace_io/import_nsys.h"
#include "tools/store/sqlite_db.h"
#include "tools/store/store.h"
#include "tools/store/trace_writer.h"

namespace llmbench {

namespace {

namespace fs = std::filesystem;

struct ImportOptions {
  std::string file;
  std::string db = "llmbench.db";
  int max_decompressed_mb = 1024;  // chrome: a gzip file may inflate to this much
};

void remove_database(const std::string& db) {
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(db + suffix, ec);
}

int run_import(const std::string& format, const ImportOptions& o, const CommandContext& ctx) {
  if (o.file.empty())
    throw BadInput("import " + format + ": expected the file to import: llmbench import " +
                   format + (format == "nsys" ? " FILE.sqlite" : " FILE.json") + " --db DB");
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  if (o.max_decompressed_mb < 1 || o.max_decompressed_mb > 1 << 20)
    throw BadInput("--max-decompressed-mb: expected an integer in [1, 1048576], got " +
                   std::to_string(o.max_decompressed_mb));
  ReadTrace r = format == "nsys"
                    ? read_nsys_export(o.file)
                    : read_chrome_trace(o.file, std::size_t(o.max_decompressed_mb) << 20);
  const auto t1 = clock::now();

  std::error_code ec;
  if (fs::exists(o.db, ec) && fs::equivalent(o.db, o.file, ec))
    throw BadInput("--db '" + o.db + "' is the file being imported; give another database");
  ImportSource source{format, o.file, std::int64_t(fs::file_size(o.file, ec)), ctx.command_line};
  const bool existed = fs::exists(o.db, ec);
  ImportCounts counts;
  try {
    ResultStore store(o.db);
    counts = write_import(store.db(), r.trace, r.index, source);
  } catch (const std::exception& e) {
    if (!existed) remove_database(o.db);  // leave no half-made database behind
    // A full disk (or a file size limit): one line, not an SQL dump with exit 1.
    if (auto reason = write_failure_reason(e))
      throw BadInput("--db '" + o.db + "': cannot write the import (" + *reason + "); " +
                     (existed ? "the database is as it was" : "nothing was created"));
    throw;
  }
  const auto t2 = clock::now();

  const auto& skipped = r.trace.skipped;
  if (!skipped.empty()) {
    const std::int64_t total = std::accumulate(
        skipped.begin(), skipped.end(), std::int64_t(0),
        [](std::int64_t a, const auto& kv) { return a + kv.second; });
    fmt::print(stderr, "import: skipped {} input record{}: {}\n", total, total == 1 ? "" : "s",
               describe_counts(skipped));
  }
  const double read_s = std::chrono::duration<double>(t1 - t0).count(),
               write_s = std::chrono::duration<double>(t2 - t1).count();
  fmt::print("imported {} events, {} flows, {} counter values on {} tracks from {} '{}' as "
             "import {} into {} (read {:.2f} s, write {:.2f} s)\n",
             counts.events, counts.flows, counts.counters, counts.tracks, format, o.file,
             counts.import_id, o.db, read_s, write_s);
  if (!r.trace.notes.empty()) fmt::print("notes: {}\n", describe_counts(r.trace.notes));
  return 0;
}

void add_format(CLI::App& import_cmd, CommandContext& ctx, const std::string& format,
                const std::string& description, const std::string& file_help) {
  auto o = std::make_shared<ImportOptions>();
  CLI::App* cmd = import_cmd.add_subcommand(format, description);
  cmd->add_option("file", o->file, file_help);
  cmd->add_option("--db", o->db, "SQLite database the trace is added to (created if missing)")
      ->capture_default_str();
  if (format == "chrome")
    cmd->add_option("--max-decompressed-mb", o->max_decompressed_mb,
                    "A gzip trace may inflate to at most this many MB")
        ->capture_default_str();
  cmd->callback([o, format, &ctx] { ctx.exit_code = run_import(format, *o, ctx); });
}

}  // namespace

void add_import_command(CLI::App& root, CommandContext& ctx) {
  CLI::App* cmd = root.add_subcommand(
      "import", "Add a trace of another tool to a database (see docs/import.md)");
  cmd->footer("Examples:\n  llmbench import nsys report.sqlite --db traces.db\n  llmbench import chrome trace.json.gz --db traces.db");
  add_format(*cmd, ctx, "nsys", "Import an Nsight Systems SQLite export (nsys export --type sqlite)",
             "The .sqlite file nsys export wrote");
  add_format(*cmd, ctx, "chrome",
             "Import Chrome trace-event JSON (PyTorch profiler / Kineto and others)",
             "The .json or .json.gz trace");
  // No format (or an unknown one): one line naming the formats, as the rest of the CLI does.
  cmd->allow_extras();
  cmd->callback([cmd] {
    if (!cmd->get_subcommands().empty()) return;
    const std::vector<std::string> extra = cmd->remaining();
    throw BadInput((extra.empty() ? std::string("import: expected a format")
                                  : "import: unknown format '" + extra.front() + "'") +
                   ": nsys (an Nsight Systems SQLite export) or chrome (Chrome trace-event "
                   "JSON, e.g. PyTorch profiler), e.g. llmbench import nsys report.sqlite --db "
                   "traces.db");
  });
}

}  // namespace llmbench
