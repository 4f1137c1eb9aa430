// Database merge (see merge.h).
#include "tools/store/merge.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "kernels/common/error.h"
#include "tools/store/sqlite_db.h"
#include "tools/store/store.h"

namespace llmbench {

namespace {

struct TableRemap {
  std::string table;
  // column -> the id space it lives in (its own primary key, or a reference to another's).
  std::map<std::string, std::string> shifted;
};

// Id spaces: "run", "import", "case", "sample", "process", "thread", "track", "event",
// "arg_set", "flow", "counter", "load_run", "load_level", "load_request", "serve_session",
// "gate".
const std::vector<TableRemap>& remaps() {
  static const std::vector<TableRemap> kRemaps = {
      {"run", {{"id", "run"}}},
      {"import", {{"id", "import"}}},
      {"process", {{"upid", "process"}, {"run_id", "run"}, {"import_id", "import"}}},
      {"thread", {{"utid", "thread"}, {"upid", "process"}}},
      {"bench_case", {{"id", "case"}, {"run_id", "run"}}},
      {"bench_sample", {{"id", "sample"}, {"case_id", "case"}}},
      {"bench_step", {{"sample_id", "sample"}}},
      {"track", {{"id", "track"}, {"utid", "thread"}, {"upid", "process"}, {"case_id", "case"},
                 {"import_id", "import"}, {"load_level_id", "load_level"}}},
      {"arg", {{"arg_set_id", "arg_set"}}},
      {"event", {{"id", "event"}, {"track_id", "track"}, {"parent_id", "event"},
                 {"arg_set_id", "arg_set"}, {"case_id", "case"}}},
      {"flow", {{"id", "flow"}, {"slice_out", "event"}, {"slice_in", "event"},
                {"arg_set_id", "arg_set"}}},
      {"counter", {{"id", "counter"}, {"track_id", "track"}, {"arg_set_id", "arg_set"}}},
      {"load_run", {{"id", "load_run"}}},
      {"load_level", {{"id", "load_level"}, {"load_run_id", "load_run"}}},
      {"load_request", {{"id", "load_request"}, {"level_id", "load_level"}}},
      {"load_chunk", {{"request_id", "load_request"}}},
      {"serve_session", {{"id", "serve_session"}, {"track_id", "track"}}},
      {"serve_step", {{"session_id", "serve_session"}}},
      {"serve_request", {{"session_id", "serve_session"}}},
      {"serve_step_request", {{"session_id", "serve_session"}}},
      // gate_round.run_id and gate_sample.case_id point into the side databases, not this one.
      {"gate", {{"id", "gate"}}},
      {"gate_round", {{"gate_id", "gate"}}},
      {"gate_sample", {{"gate_id", "gate"}}},
      {"gate_result", {{"gate_id", "gate"}}},
  };
  return kRemaps;
}

// Where each id space's largest value is found.
const std::map<std::string, std::string>& id_space_max() {
  static const std::map<std::string, std::string> kMax = {
      {"run", "SELECT MAX(id) FROM run"},           {"case", "SELECT MAX(id) FROM bench_case"},
      {"sample", "SELECT MAX(id) FROM bench_sample"}, {"process", "SELECT MAX(upid) FROM process"},
      {"thread", "SELECT MAX(utid) FROM thread"},   {"track", "SELECT MAX(id) FROM track"},
      {"event", "SELECT MAX(id) FROM event"},       {"arg_set", "SELECT MAX(arg_set_id) FROM arg"},
      {"flow", "SELECT MAX(id) FROM flow"},         {"import", "SELECT MAX(id) FROM import"},
      {"counter", "SELECT MAX(id) FROM counter"},
      {"load_run", "SELECT MAX(id) FROM load_run"},
      {"load_level", "SELECT MAX(id) FROM load_level"},
      {"load_request", "SELECT MAX(id) FROM load_request"},
      {"serve_session", "SELECT MAX(id) FROM serve_session"},
      {"gate", "SELECT MAX(id) FROM gate"},
  };
  return kMax;
}

std::int64_t scalar(Db& db, const std::string& sql) {
  auto q = db.prepare(sql);
  return q.step() ? q.column_int(0) : 0;
}

std::string quote_literal(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

void check_input(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw BadInput("merge: input '" + path + "' does not exist or is not a file");
  Db db(path, Db::Mode::kReadOnly);
  const int v = db.user_version();
  if (v != kSchemaVersion)
    throw BadInput("merge: '" + path + "' has schema version " + std::to_string(v) +
                   "; this llmbench merges version " + std::to_string(kSchemaVersion) +
                   " only (open it with a run of this llmbench to upgrade it)");
  if (scalar(db, "SELECT COUNT(*) FROM sqlite_master WHERE type='table' AND name='run'") == 0)
    throw BadInput("merge: '" + path + "' is not an llmbench database (no run table)");
}

// Copies the attached database `src` into main, in one transaction, ids shifted.
// A run already in the result (from an earlier input, or the output merged into) would count
// every case twice: `merge sh1.db sh1.db` or a copy of a shard. A run is the same run when it
// started at the same instant on the same host with the same command line.
void refuse_runs_merged_before(Db& db, const std::string& in) {
  for (const char* table : {"run", "load_run"}) {
    if (!db.prepare("SELECT 1 FROM src.sqlite_master WHERE type = 'table' AND name = '" +
                    std::string(table) + "'").step())
      continue;
    auto same = db.prepare(std::string("SELECT s.id, s.started_at, s.host FROM src.") + table +
                           " AS s JOIN main." + table + " AS m ON m.started_at = s.started_at"
                           " AND m.host = s.host AND m.command_line = s.command_line LIMIT 1");
    if (same.step())
      throw BadInput("merge: '" + in + "' holds " + table + " " + same.column_text(0) +
                     " (started " + same.column_text(1) + " on " + same.column_text(2) +
                     "), which an earlier input or the output already holds: the same run twice");
  }
}

MergedInput merge_one(Db& db, const std::string& in) {
  MergedInput m{in};
  transaction(db, [&] {
    db.exec("PRAGMA defer_foreign_keys=ON");
    // Unknown tables would be dropped silently: refuse instead.
    auto tables = db.prepare(
        "SELECT name FROM src.sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'");
    const auto known = mergeable_tables();
    // History (`llmbench history`) and bisections are not results of a run: every database has
    // the tables (one schema) and a result database leaves them empty; a history is one database
    // that `llmbench history add` appends to, never a shard to renumber.
    const std::vector<std::string> not_merged = unmerged_tables();
    while (tables.step()) {
      const std::string t = tables.column_text(0);
      if (std::find(not_merged.begin(), not_merged.end(), t) != not_merged.end()) {
        if (scalar(db, "SELECT COUNT(*) FROM src." + t) > 0)
          throw BadInput("merge: '" + in + "' holds history or bisect rows (" + t +
                         "): merge joins result databases, not histories (keep one history "
                         "database; `llmbench history add` appends to it)");
        continue;
      }
      if (std::find(known.begin(), known.end(), t) == known.end())
        throw Error("merge: '" + in + "' has a table merge does not know: " + t);
    }
    refuse_runs_merged_before(db, in);
    std::map<std::string, std::int64_t> offset;
    for (const auto& [space, sql] : id_space_max()) offset[space] = scalar(db, sql);
    for (const TableRemap& r : remaps()) {
      std::string cols, exprs;
      for (const std::string& c : db.columns(r.table, "src")) {
        cols += (cols.empty() ? "" : ", ") + c;
        auto it = r.shifted.find(c);
        exprs += (exprs.empty() ? "" : ", ") +
                 (it == r.shifted.end() ? c : c + " + " + std::to_string(offset[it->second]));
      }
      db.exec("INSERT INTO main." + r.table + " (" + cols + ") SELECT " + exprs + " FROM src." +
              r.table);
    }
    m.runs = scalar(db, "SELECT COUNT(*) FROM src.run");
    m.imports = scalar(db, "SELECT COUNT(*) FROM src.import");
    m.cases = scalar(db, "SELECT COUNT(*) FROM src.bench_case");
    m.events = scalar(db, "SELECT COUNT(*) FROM src.event");
    m.load_runs = scalar(db, "SELECT COUNT(*) FROM src.load_run");
  });
  return m;
}

}  // namespace

std::vector<std::string> unmerged_tables() {
  return {"history_series", "history_point", "bisect", "bisect_step"};
}

std::vector<std::string> mergeable_tables() {
  std::vector<std::string> names;
  for (const auto& r : remaps()) names.push_back(r.table);
  return names;
}

std::vector<MergedInput> merge_databases(const std::vector<std::string>& inputs,
                                         const std::string& output) {
  namespace fs = std::filesystem;
  if (inputs.empty()) throw BadInput("merge: expected at least one input database");
  std::error_code ec;
  for (const auto& in : inputs) {
    check_input(in);
    if (fs::exists(output, ec) && fs::equivalent(in, output, ec))
      throw BadInput("merge: the output '" + output + "' is also an input");
  }
  const bool existed = fs::exists(output, ec);
  if (existed) {
    Db probe(output, Db::Mode::kReadWrite);
    const int v = probe.user_version();
    if (v != kSchemaVersion && v != 0)
      throw BadInput("merge: output '" + output + "' has schema version " + std::to_string(v) +
                     "; expected " + std::to_string(kSchemaVersion));
  }
  // Merge into a scratch copy and rename it over the output at the end: SQLite cannot ATTACH
  // inside a transaction, so each input is its own transaction, and only the rename makes
  // the result visible (all inputs or none).
  const std::string scratch = output + ".merge-tmp";
  auto remove_scratch = [&] {
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(scratch + suffix, ec);
  };
  remove_scratch();
  if (existed) {
    Db src(output, Db::Mode::kReadWrite);
    src.exec("VACUUM INTO " + quote_literal(scratch));
  }
  std::vector<MergedInput> merged;
  try {
    {
      ResultStore store(scratch);  // creates the schema when new
      Db& db = store.db();
      for (const auto& in : inputs) {
        db.exec("ATTACH DATABASE " + quote_literal(in) + " AS src");
        merged.push_back(merge_one(db, in));
        db.exec("DETACH DATABASE src");
      }
      // Shards of one sweep (equal sweep_key) become one run group: queries and compare read
      // them as one run.
      db.exec("UPDATE run SET run_group = (SELECT MIN(g.id) FROM run AS g"
              " WHERE g.sweep_key = run.sweep_key AND COALESCE(g.shard, '') <> '')"
              " WHERE sweep_key IS NOT NULL AND COALESCE(shard, '') <> ''");
      db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      db.exec("PRAGMA journal_mode=DELETE");
    }
    for (const char* suffix : {"-wal", "-shm"}) fs::remove(output + suffix, ec);
    fs::rename(scratch, output);
  } catch (...) {
    remove_scratch();
    throw;
  }
  return merged;
}

}  // namespace llmbench
