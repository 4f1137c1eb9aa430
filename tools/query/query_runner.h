// Runs SQL (a bundled query or a user's .sql file) against an llmbench database for
// `llmbench query`: opens the database read-only, binds :params from --param values and header
// defaults, and collects the result of the last statement that returns columns (the
// trace-processor convention, so a file may first CREATE TEMP VIEWs and then SELECT).
// Not the printing (query_output.h) and not the CLI (cmd_query.cpp).
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tools/query/bundled_queries.h"
#include "tools/store/sql_value.h"
#include "tools/store/sqlite_db.h"

namespace llmbench {

// Opens `path` read-only (never creating it, and writing no -wal or -shm file beside it: Db's
// kReadOnly), gives it in-memory stand-ins for the tables and views of the current schema it
// lacks (add_schema_stand_ins), and registers median/percentile/stdev. Throws BadInput when
// the file is missing, is not SQLite, or has a schema newer than this build.
std::unique_ptr<Db> open_query_db(const std::string& path);

struct QuerySource {
  std::string label;  // "query 'top_ops'" or "file 'mine.sql'", for error messages
  std::string sql;
  std::optional<QueryHeader> header;  // gives parameter defaults and the accepted names
};

struct QueryResult {
  std::vector<std::string> columns;
  std::vector<std::vector<SqlValue>> rows;
};

// Runs every statement of `source`. `params` maps names (no ':' prefix) to --param values.
// Throws BadInput naming source.label for: a key the query does not take, a parameter
// without a value, and any SQL error (with the line in the file where SQLite reports one).
QueryResult run_query(Db& db, const QuerySource& source,
                      const std::map<std::string, std::string>& params);

}  // namespace llmbench
