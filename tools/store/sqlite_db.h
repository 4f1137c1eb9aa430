// A thin RAII layer over the SQLite C API: Db (a connection) and Stmt (a prepared statement).
// Every call is checked; failures throw llmbench::Error with SQLite's message and the SQL.
// Not an ORM: callers write SQL.
#pragma once
#include <sqlite3.h>

#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench {

class Stmt;

class Db {
 public:
  enum class Mode { kReadOnly, kReadWrite, kCreate };
  // Opens the database at `path`; only kCreate creates a missing file. Throws BadInput when
  // the file cannot be opened or is not an SQLite database. kReadOnly writes nothing beside
  // the file either: a WAL database that no connection has open (no -wal file) is opened
  // immutable, because a plain read-only open would create -wal and -shm files and leave them
  // behind (SQLite 3.40); one with a -wal file (a writer is running, or one was killed) is read
  // through that file and the -shm that comes with it.
  Db(const std::string& path, Mode mode);
  Db(const std::string& path, bool create) : Db(path, create ? Mode::kCreate : Mode::kReadWrite) {}
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  ~Db();

  sqlite3* handle() const { return db_; }
  const std::string& path() const { return path_; }
  // Runs one or more statements without results.
  void exec(const std::string& sql);
  Stmt prepare(const std::string& sql);
  std::int64_t last_insert_id() const { return sqlite3_last_insert_rowid(db_); }
  int user_version();
  // The columns of `table` in declaration order (PRAGMA table_info); empty when there is no
  // such table or view. `schema`: "main", "temp" or an attached name.
  std::vector<std::string> columns(const std::string& table, const std::string& schema = "main");
  bool has_column(const std::string& table, const std::string& column);
  // Whether a table or view `name` exists in the database file (the main schema: not a temp
  // stand-in).
  bool has_table(const std::string& name);

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

class Stmt {
 public:
  Stmt(sqlite3* db, const std::string& sql);
  // Prepares the first statement in `sql` and leaves the text after it in `*tail`, for
  // scripts of several statements. empty() is true when that text held only whitespace and
  // comments (nothing to step).
  Stmt(sqlite3* db, std::string_view sql, std::string_view* tail);
  Stmt(Stmt&& o) noexcept;
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  ~Stmt();

  // Bind by 1-based index; return *this so calls chain.
  Stmt& bind(int i, std::int64_t v);
  Stmt& bind(int i, int v) { return bind(i, std::int64_t(v)); }
  Stmt& bind(int i, double v);
  Stmt& bind(int i, const std::string& v);
  Stmt& bind(int i, std::optional<double> v);
  Stmt& bind_null(int i);
  // Steps once: true while a row is available.
  bool step();
  // Steps to completion and resets for reuse (INSERT / UPDATE).
  void run();
  void reset();

  // Parameters, 1-based like bind(). The name keeps its prefix (":name", "@name", "$name") and
  // is empty for an anonymous "?".
  int parameter_count() const { return sqlite3_bind_parameter_count(stmt_); }
  std::string parameter_name(int i) const;

  bool empty() const { return stmt_ == nullptr; }
  // True when stepping it cannot change a database file (sqlite3_stmt_readonly); CREATE TEMP
  // TABLE and PRAGMAs that set a value are not read-only, BEGIN and ATTACH are.
  bool read_only() const { return sqlite3_stmt_readonly(stmt_) != 0; }
  // The statement's own SQL text (for scripts: this statement only).
  const std::string& sql() const { return sql_; }
  int columns() const { return sqlite3_column_count(stmt_); }
  std::string column_name(int i) const { return sqlite3_column_name(stmt_, i); }
  int column_type(int i) const { return sqlite3_column_type(stmt_, i); }
  std::int64_t column_int(int i) const { return sqlite3_column_int64(stmt_, i); }
  double column_double(int i) const { return sqlite3_column_double(stmt_, i); }
  bool column_is_null(int i) const { return sqlite3_column_type(stmt_, i) == SQLITE_NULL; }
  std::string column_text(int i) const;

 private:
  void check(int rc, const char* what);
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
};

// When `e` is SQLite failing to write (a full disk: "database or disk is full"; a write error
// such as a file size limit: "disk I/O error"), a short reason for a one-line message; else
// nullopt. The run and import commands turn such failures into one `error:` line (exit 2)
// instead of an SQL dump.
std::optional<std::string> write_failure_reason(const std::exception& e);

// Runs `fn` inside BEGIN IMMEDIATE / COMMIT; rolls back if it throws.
template <class Fn>
void transaction(Db& db, Fn&& fn) {
  db.exec("BEGIN IMMEDIATE");
  try {
    fn();
  } catch (...) {
    sqlite3_exec(db.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
  db.exec("COMMIT");
}

}  // namespace llmbench
