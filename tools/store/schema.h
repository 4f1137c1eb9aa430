// The one schema of every llmbench database (docs/schema.md): the tables of `run` and `sweep`
// (run, bench_*), of traces and imports, of `load` (load_*), of `serve --db` (serve_*), of
// the interleaved gate of `compare --run` (gate_*) and of history over commits (history_*),
// with one version (PRAGMA user_version) and one migration path. Whichever command makes a database, every table is there, so every
// bundled query runs on it. Not here: what writes the rows (store.h, the load and serve
// stores, the gate).
#pragma once
#include <memory>
#include <string>

#include "tools/store/sqlite_db.h"

namespace llmbench {

inline constexpr int kSchemaVersion = 19;

// The script that takes a database of `version` - 1 to `version` (schema_sql.cpp); nullptr
// outside 1..kSchemaVersion. schema_step_sql_from_v7 is its half for versions 7 on
// (schema_sql_v7.cpp).
const char* schema_step_sql(int version);
const char* schema_step_sql_from_v7(int version);

// Creates the schema of `version` (1..kSchemaVersion) on an empty database, as the llmbench of
// that version did: tests use it to build old databases and check their migration.
void create_schema_version(Db& db, int version);

// Brings a database opened read-write to the current schema; run on every open by every
// writer. Throws BadInput when it has a newer schema version, or is not an llmbench database
// (version 0 with tables named like llmbench's). Then, in one transaction and only when
// something is missing: the version scripts it lacks, oldest first, and whatever of the
// current schema it still lacks (tables, columns, indexes, views), so a column added to the
// field list or to a table's CREATE in a later version reaches every older database that is
// opened, whatever its version says. Sets WAL.
void migrate_schema(Db& db);

// For connections that only read: creates, in the connection's temp schema (memory, never the
// file), an empty stand-in for each table and view of the current schema the database lacks,
// so a query over it runs on an older database (or a serving database from before version 10)
// and finds no rows of that kind instead of failing with "no such table"; a table it has
// without some later column is shadowed by a temp view adding the column (its default, or NULL).
void add_schema_stand_ins(Db& db);

// Opens an llmbench database to read it: never creating it, and writing nothing beside it (Db's
// kReadOnly). Throws BadInput when the file is missing, a directory, not SQLite, or has a
// schema newer than this build.
std::unique_ptr<Db> open_read_only(const std::string& path);

}  // namespace llmbench
