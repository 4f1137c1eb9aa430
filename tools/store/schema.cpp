// The schema's one migration path (see schema.h). The current schema is what the version
// scripts make of an empty database: it is built once per process in memory and compared,
// table by table and column by column, with each database that is opened.
#include "tools/store/schema.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <vector>

#include "kernels/common/error.h"
#include "tools/store/result_fields.h"

namespace llmbench {

namespace {

// Tables llmbench creates. A database at user_version 0 that already holds one of them
// belongs to another program: it is refused before anything is written to it. The serve_* and
// gate_* tables are not listed: databases written by `serve --db` and by the gate before
// version 10 have them at version 0, and are llmbench's.
constexpr const char* kOwnTables[] = {"run", "bench_case", "bench_sample", "bench_step",
                                      "process", "thread", "track", "event", "arg", "flow",
                                      "import", "counter", "load_run", "load_level",
                                      "load_request", "load_chunk"};

struct ColumnDef {
  std::string name, type, default_sql;
  bool not_null = false;
};

struct SchemaObject {
  std::string type, name, sql;    // sqlite_schema's; sql without "IF NOT EXISTS"
  std::vector<ColumnDef> columns;  // tables only
};

void add_missing_result_columns(Db& db) {
  std::set<std::string> have;
  for (const std::string& c : db.columns("bench_case")) have.insert(c);
  for (const ResultField& f : result_fields()) {
    if (!(f.outputs & kDb) || have.count(std::string(f.name))) continue;
    db.exec("ALTER TABLE bench_case ADD COLUMN " + std::string(f.name) + " " +
            std::string(sql_type(f.type)));
  }
}

void run_schema_step(Db& db, int version) {
  db.exec(schema_step_sql(version));
  // Versions 5, 8, 15 and 18 added the field list's bench_case columns of their day (15: energy
  // per phase; 18: how the decode steps ran with --cuda-graphs on).
  if (version == 5 || version == 8 || version == 15 || version == 18)
    add_missing_result_columns(db);
}

// The current schema, in creation order (tables before the indexes and views on them).
const std::vector<SchemaObject>& current_schema() {
  static const std::vector<SchemaObject> kObjects = [] {
    Db mem(":memory:", Db::Mode::kCreate);
    create_schema_version(mem, kSchemaVersion);
    std::vector<SchemaObject> out;
    auto q = mem.prepare("SELECT type, name, sql FROM sqlite_schema WHERE sql IS NOT NULL"
                         " ORDER BY rowid");
    while (q.step()) out.push_back({q.column_text(0), q.column_text(1), q.column_text(2), {}});
    for (SchemaObject& o : out) {
      if (o.type != "table") continue;
      auto c = mem.prepare("SELECT name, type, \"notnull\", dflt_value FROM pragma_table_info(?)"
                           " ORDER BY cid");
      c.bind(1, o.name);
      while (c.step())
        o.columns.push_back({c.column_text(0), c.column_text(1),
                             c.column_is_null(3) ? "" : c.column_text(3), c.column_int(2) != 0});
    }
    return out;
  }();
  return kObjects;
}

bool exists_in_main(Db& db, const SchemaObject& o) {
  auto q = db.prepare("SELECT 1 FROM main.sqlite_schema WHERE type = ? AND name = ?");
  q.bind(1, o.type).bind(2, o.name);
  return q.step();
}

// The statements that add to `db` what it lacks of the current schema.
std::vector<std::string> missing_schema(Db& db) {
  std::vector<std::string> out;
  for (const SchemaObject& o : current_schema()) {
    if (!exists_in_main(db, o)) {
      out.push_back(o.sql);
      continue;
    }
    if (o.type != "table") continue;
    const std::vector<std::string> have = db.columns(o.name);
    for (const ColumnDef& c : o.columns) {
      if (std::find(have.begin(), have.end(), c.name) != have.end()) continue;
      // ADD COLUMN takes NOT NULL only with a default; without one the column stays nullable
      // (rows written before it have no value to give).
      std::string sql = "ALTER TABLE " + o.name + " ADD COLUMN " + c.name + " " + c.type;
      if (!c.default_sql.empty()) sql += (c.not_null ? " NOT NULL" : "") + (" DEFAULT " + c.default_sql);
      out.push_back(sql);
    }
  }
  return out;
}

bool foreign(Db& db, int version) {
  if (version != 0) return false;
  for (const char* t : kOwnTables)
    if (db.prepare("SELECT 1 FROM main.sqlite_schema WHERE name = '" + std::string(t) + "'").step())
      return true;
  return false;
}

void refuse_newer_or_foreign(Db& db, int version) {
  if (version > kSchemaVersion)
    throw BadInput("database '" + db.path() + "' has schema version " + std::to_string(version) +
                   "; this llmbench understands up to " + std::to_string(kSchemaVersion));
  if (foreign(db, version))
    throw BadInput("database '" + db.path() + "' is not an llmbench database (it has tables "
                   "named like llmbench's but schema version 0); use another --db");
}

}  // namespace

void create_schema_version(Db& db, int version) {
  LLMBENCH_CHECK(version >= 1 && version <= kSchemaVersion, "no such schema version");
  transaction(db, [&] {
    for (int v = 1; v <= version; ++v) run_schema_step(db, v);
    db.exec("PRAGMA user_version = " + std::to_string(version));
  });
}

void migrate_schema(Db& db) {
  // Nothing is written before the database is recognised as llmbench's (or empty). The check
  // is repeated inside the transaction, where a concurrent opener can no longer change it.
  refuse_newer_or_foreign(db, db.user_version());
  if (db.user_version() < kSchemaVersion || !missing_schema(db).empty()) {
    transaction(db, [&] {
      const int version = db.user_version();
      refuse_newer_or_foreign(db, version);
      for (int v = version + 1; v <= kSchemaVersion; ++v) run_schema_step(db, v);
      for (const std::string& sql : missing_schema(db)) db.exec(sql);
      db.exec("PRAGMA user_version = " + std::to_string(kSchemaVersion));
    });
  }
  // WAL is set after the schema: a foreign or newer database is never switched. journal_mode
  // is persistent, so only the first opener changes it; the others see "wal" already.
  db.exec("PRAGMA journal_mode=WAL");
  db.exec("PRAGMA synchronous=NORMAL");
  db.exec("PRAGMA foreign_keys=ON");
}

void add_schema_stand_ins(Db& db) {
  db.exec("PRAGMA temp_store=MEMORY");
  for (const SchemaObject& o : current_schema()) {
    if (o.type != "table" && o.type != "view") continue;
    if (!exists_in_main(db, o)) {
      // "CREATE TABLE x ..." -> "CREATE TEMP TABLE x ..." (sqlite_schema keeps the first two
      // keywords as written: CREATE, then TABLE or VIEW).
      db.exec("CREATE TEMP " + o.sql.substr(std::string("CREATE ").size()));
      continue;
    }
    if (o.type != "table") continue;
    // A table the database has without some later column (track.load_level_id on a version-8
    // database): a temp view of the same name, which unqualified names find before main's
    // table, adds each missing column with its default (NULL when it has none).
    const std::vector<std::string> have = db.columns(o.name);
    std::string extra;
    for (const ColumnDef& c : o.columns) {
      if (std::find(have.begin(), have.end(), c.name) != have.end()) continue;
      extra += ", " + (c.default_sql.empty() ? std::string("NULL") : c.default_sql) + " AS " + c.name;
    }
    if (!extra.empty())
      db.exec("CREATE TEMP VIEW " + o.name + " AS SELECT *" + extra + " FROM main." + o.name);
  }
}

std::unique_ptr<Db> open_read_only(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(path, ec)) throw BadInput("database '" + path + "' does not exist");
  if (fs::is_directory(path, ec))
    throw BadInput("database '" + path + "' is a directory, not an SQLite file");
  auto db = std::make_unique<Db>(path, Db::Mode::kReadOnly);
  const int version = db->user_version();
  if (version > kSchemaVersion)
    throw BadInput("database '" + path + "' has schema version " + std::to_string(version) +
                   "; this llmbench understands up to " + std::to_string(kSchemaVersion));
  return db;
}

}  // namespace llmbench
