// Opening a database for queries and running one query's statements (see query_runner.h).
#include "tools/query/query_runner.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>

#include "kernels/common/error.h"
#include "tools/query/sql_functions.h"
#include "tools/store/schema.h"

namespace llmbench {

namespace {

std::string join(const std::set<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

[[noreturn]] void unknown_param(const QuerySource& src, const std::string& key,
                                const std::set<std::string>& accepted) {
  throw BadInput("--param " + key + ": " + src.label + " has no parameter '" + key +
                 "' (it takes: " + join(accepted) + ")");
}

// The first position at or after `pos` that is neither whitespace nor a "--" comment.
std::size_t skip_comments(const std::string& sql, std::size_t pos) {
  while (pos < sql.size()) {
    if (std::isspace(static_cast<unsigned char>(sql[pos]))) {
      ++pos;
    } else if (sql.compare(pos, 2, "--") == 0) {
      pos = sql.find('\n', pos);
      if (pos == std::string::npos) return sql.size();
    } else {
      break;
    }
  }
  return pos;
}

// A one-line error naming the query and the line SQLite blames. `stmt_offset` is where the
// failing statement starts in the source; SQLite's error offset (when it has one) is relative
// to that statement.
[[noreturn]] void sql_error(Db& db, const QuerySource& src, std::size_t stmt_offset) {
  const std::string msg = sqlite3_errmsg(db.handle());
  const int at = sqlite3_error_offset(db.handle());
  std::size_t pos = std::min(src.sql.size(), stmt_offset + std::size_t(std::max(at, 0)));
  if (at < 0) pos = skip_comments(src.sql, pos);  // a run-time error: blame the first SQL line
  const auto line = 1 + std::count(src.sql.begin(), src.sql.begin() + std::ptrdiff_t(pos), '\n');
  std::string hint;
  const int version = db.user_version();
  if (version < kSchemaVersion)
    hint = " (database '" + db.path() + "' has schema version " + std::to_string(version) +
           "; this llmbench writes version " + std::to_string(kSchemaVersion) + ")";
  throw BadInput(src.label + ", line " + std::to_string(line) + ": " + msg + hint);
}

// The statement's first keyword, upper-case ("SELECT", "VACUUM", "PRAGMA", ...).
std::string first_keyword(const std::string& sql) {
  std::size_t pos = skip_comments(sql, 0);
  std::string word;
  while (pos < sql.size() && std::isalpha(static_cast<unsigned char>(sql[pos])))
    word += char(std::toupper(static_cast<unsigned char>(sql[pos++])));
  return word;
}

// The database is opened read-only, but a few statements still write somewhere or fail with
// a misleading message there: VACUUM INTO writes a copy of the database to any path, and a
// PRAGMA that sets the journal mode (or any other persistent setting) fails with "disk I/O
// error". Both are refused before they run, naming the line. Temp tables stay allowed (their
// CREATE is not read-only either, but lives in memory).
// `stmt` is null before the statement is prepared (ATTACH is denied by the authorizer while it
// is prepared, so its refusal is decided from the text first).
void refuse_writes(const Stmt* stmt, const std::string& sql, const QuerySource& src,
                   std::size_t stmt_offset) {
  const std::string word = first_keyword(sql);
  std::string why;
  if (word == "VACUUM")
    why = "VACUUM is refused: llmbench query only reads (VACUUM INTO would write a copy of the "
          "database; use the sqlite3 shell for that)";
  else if (word == "ATTACH" || word == "DETACH")
    why = word + " is refused: llmbench query reads the one database it was given";
  else if (word == "PRAGMA" && stmt && !stmt->read_only())
    why = "a PRAGMA that changes the database is refused: llmbench query only reads (PRAGMAs "
          "that read, such as table_info or user_version, are fine)";
  if (why.empty()) return;
  const std::size_t pos = skip_comments(src.sql, stmt_offset);
  const auto line = 1 + std::count(src.sql.begin(), src.sql.begin() + std::ptrdiff_t(pos), '\n');
  throw BadInput(src.label + ", line " + std::to_string(line) + ": " + why);
}

// Belt and braces under refuse_writes(): ATTACH (also what VACUUM INTO runs inside) and
// DETACH are denied by the authorizer, whatever the statement that triggers them.
int deny_attach(void*, int action, const char*, const char*, const char*, const char*) {
  return action == SQLITE_ATTACH || action == SQLITE_DETACH ? SQLITE_DENY : SQLITE_OK;
}

SqlValue column_value(const Stmt& s, int i) {
  switch (s.column_type(i)) {
    case SQLITE_NULL:
      return {};
    case SQLITE_INTEGER:
      return {s.column_int(i)};
    case SQLITE_FLOAT:
      return {s.column_double(i)};
    case SQLITE_BLOB:
      return {std::string("(blob)")};  // no query here returns blobs; say so, do not dump bytes
    default:
      return {s.column_text(i)};
  }
}

// Binds every parameter of `stmt`: the --param value, else the header's default. Records the
// names seen in `used` so that unused --param keys of header-less files can be reported.
void bind_params(Stmt& stmt, const QuerySource& src,
                 const std::map<std::string, std::string>& params, std::set<std::string>& used) {
  for (int i = 1; i <= stmt.parameter_count(); ++i) {
    const std::string full = stmt.parameter_name(i);
    if (full.empty())
      throw BadInput(src.label + ": anonymous '?' parameters cannot be bound; name them (:name)");
    const std::string name = full.substr(1);  // drop the ':', '@' or '$'
    used.insert(name);
    const QueryParam* declared = src.header ? src.header->find_param(name) : nullptr;
    if (auto it = params.find(name); it != params.end())
      bind_value(stmt, i, parse_param_value(it->second));
    else if (declared)
      bind_value(stmt, i, *parse_sql_literal(declared->default_sql));  // checked when parsed
    else
      throw BadInput(src.label + ": parameter " + full + " has no value; pass --param " + name +
                     "=VALUE");
  }
}

}  // namespace

std::unique_ptr<Db> open_query_db(const std::string& path) {
  auto db = open_read_only(path);
  // Another program's SQLite file (schema version 0, tables of its own) is refused as report
  // refuses it: its tables would be shown in llmbench's columns (a `run` table read as runs
  // with status 'complete'). An empty file is not refused: the stand-ins give no rows.
  if (db->user_version() == 0 &&
      db->prepare("SELECT 1 FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT "
                  "LIKE 'sqlite_%' LIMIT 1").step())
    throw BadInput("database '" + path + "' is not an llmbench database (schema version 0; "
                   "import traces with llmbench import, then query the database it writes)");
  // Tables and views of the current schema that an older database lacks get empty stand-ins
  // in memory: a query over them finds no rows instead of failing.
  add_schema_stand_ins(*db);
  register_sql_functions(db->handle());
  sqlite3_set_authorizer(db->handle(), deny_attach, nullptr);
  return db;
}

QueryResult run_query(Db& db, const QuerySource& src,
                      const std::map<std::string, std::string>& params) {
  // With a header the accepted names are known before anything runs.
  if (src.header) {
    std::set<std::string> declared;
    for (const auto& p : src.header->params) declared.insert(p.name);
    for (const auto& [key, value] : params)
      if (!declared.count(key)) unknown_param(src, key, declared);
  }
  std::set<std::string> used;
  QueryResult result;
  int statements = 0;
  std::string_view rest = src.sql;
  while (!rest.empty()) {
    const std::size_t offset = src.sql.size() - rest.size();
    const std::size_t before = rest.size();
    refuse_writes(nullptr, std::string(rest), src, offset);
    std::optional<Stmt> stmt;
    try {
      stmt.emplace(db.handle(), rest, &rest);
    } catch (const Error&) {
      sql_error(db, src, offset);
    }
    if (stmt->empty()) {
      if (rest.size() == before) break;  // nothing consumed: only whitespace or comments left
      continue;
    }
    ++statements;
    refuse_writes(&*stmt, stmt->sql(), src, offset);
    bind_params(*stmt, src, params, used);
    QueryResult r;
    for (int i = 0; i < stmt->columns(); ++i) r.columns.push_back(stmt->column_name(i));
    try {
      while (stmt->step()) {
        std::vector<SqlValue> row;
        for (int i = 0; i < stmt->columns(); ++i) row.push_back(column_value(*stmt, i));
        r.rows.push_back(std::move(row));
      }
    } catch (const Error&) {
      sql_error(db, src, offset);
    }
    if (!r.columns.empty()) result = std::move(r);
  }
  if (statements == 0) throw BadInput(src.label + ": no SQL statement to run");
  // Without a header, the accepted names are those the SQL used.
  if (!src.header)
    for (const auto& [key, value] : params)
      if (!used.count(key)) unknown_param(src, key, used);
  return result;
}

}  // namespace llmbench
