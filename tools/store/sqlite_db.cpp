// SQLite RAII wrappers (see sqlite_db.h).
#include "tools/store/sqlite_db.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>

#include "engine/checkpoint/input_file.h"
#include "kernels/common/error.h"

namespace llmbench {

namespace {

// Whether the file at `path` is an SQLite database in WAL mode: its header's read and write
// format versions (bytes 18 and 19) are 2.
bool wal_mode_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char header[20] = {};
  if (!in.read(header, sizeof header)) return false;
  return std::string_view(header, 16) == std::string_view("SQLite format 3\0", 16) &&
         header[18] == 2 && header[19] == 2;
}

// "file:" URI of `path` (made absolute) with the query `query`: every byte that could end or
// change the path in a URI (?, #, %, and anything not plainly printable) percent-encoded.
std::string file_uri(const std::string& path, const std::string& query) {
  std::error_code ec;
  std::string abs = std::filesystem::absolute(path, ec).string();
  if (ec) abs = path;
  std::string out = "file://";
  const char* hex = "0123456789ABCDEF";
  for (unsigned char c : abs) {
    if (std::isalnum(c) || std::string_view("/._-~").find(char(c)) != std::string_view::npos) {
      out += char(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out + "?" + query;
}

}  // namespace

Db::Db(const std::string& path, Mode mode) : path_(path) {
  // SQLite would open a FIFO and then block reading it.
  refuse_special_file(path, "database");
  int flags = mode == Mode::kReadOnly ? SQLITE_OPEN_READONLY
              : mode == Mode::kCreate  ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
                                       : SQLITE_OPEN_READWRITE;
  std::string name = path;
  std::error_code ec;
  if (mode == Mode::kReadOnly && wal_mode_file(path) &&
      !std::filesystem::exists(path + "-wal", ec)) {
    // No connection has the database open (the last one to close removes the -wal file), so
    // the main file holds every committed transaction: read it as an immutable file.
    name = file_uri(path, "immutable=1");
    flags |= SQLITE_OPEN_URI;
  }
  if (sqlite3_open_v2(name.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw BadInput("database '" + path + "': cannot open (" + msg + ")");
  }
  sqlite3_busy_timeout(db_, 10000);
  // Reading the schema proves the file is an SQLite database (open itself is lazy).
  char* err = nullptr;
  if (sqlite3_exec(db_, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    sqlite3_close(db_);
    db_ = nullptr;
    throw BadInput("database '" + path + "': " + msg);
  }
}

Db::~Db() { sqlite3_close(db_); }

std::optional<std::string> write_failure_reason(const std::exception& e) {
  const std::string what = e.what();
  if (what.find("database or disk is full") != std::string::npos) return "the disk is full";
  if (what.find("disk I/O error") != std::string::npos)
    return "disk I/O error: a full disk or a file size limit?";
  return std::nullopt;
}

void Db::exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    throw Error("sqlite (" + path_ + "): " + msg + " in: " + sql.substr(0, 200));
  }
}

Stmt Db::prepare(const std::string& sql) { return Stmt(db_, sql); }

int Db::user_version() {
  Stmt s(db_, "PRAGMA user_version");
  s.step();
  return int(s.column_int(0));
}

std::vector<std::string> Db::columns(const std::string& table, const std::string& schema) {
  std::vector<std::string> cols;
  auto q = prepare("SELECT name FROM pragma_table_info(?, ?) ORDER BY cid");
  q.bind(1, table).bind(2, schema);
  while (q.step()) cols.push_back(q.column_text(0));
  return cols;
}

bool Db::has_column(const std::string& table, const std::string& column) {
  const auto cols = columns(table);
  return std::find(cols.begin(), cols.end(), column) != cols.end();
}

bool Db::has_table(const std::string& name) {
  auto q = prepare("SELECT 1 FROM main.sqlite_schema WHERE type IN ('table', 'view') AND name = ?");
  q.bind(1, name);
  return q.step();
}

Stmt::Stmt(sqlite3* db, const std::string& sql) : db_(db), sql_(sql) {
  check(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr), "prepare");
}

Stmt::Stmt(sqlite3* db, std::string_view sql, std::string_view* tail) : db_(db), sql_(sql) {
  const char* rest = nullptr;
  check(sqlite3_prepare_v2(db, sql.data(), int(sql.size()), &stmt_, &rest), "prepare");
  *tail = sql.substr(std::size_t(rest - sql.data()));
  sql_.resize(std::size_t(rest - sql.data()));
}

Stmt::Stmt(Stmt&& o) noexcept : db_(o.db_), stmt_(o.stmt_), sql_(std::move(o.sql_)) {
  o.stmt_ = nullptr;
}

Stmt::~Stmt() { sqlite3_finalize(stmt_); }

void Stmt::check(int rc, const char* what) {
  if (rc != SQLITE_OK && rc != SQLITE_ROW && rc != SQLITE_DONE)
    throw Error(std::string("sqlite ") + what + ": " + sqlite3_errmsg(db_) + " in: " +
                sql_.substr(0, 200));
}

Stmt& Stmt::bind(int i, std::int64_t v) {
  check(sqlite3_bind_int64(stmt_, i, v), "bind");
  return *this;
}
Stmt& Stmt::bind(int i, double v) {
  check(sqlite3_bind_double(stmt_, i, v), "bind");
  return *this;
}
Stmt& Stmt::bind(int i, const std::string& v) {
  check(sqlite3_bind_text(stmt_, i, v.data(), int(v.size()), SQLITE_TRANSIENT), "bind");
  return *this;
}
Stmt& Stmt::bind(int i, std::optional<double> v) { return v ? bind(i, *v) : bind_null(i); }
Stmt& Stmt::bind_null(int i) {
  check(sqlite3_bind_null(stmt_, i), "bind");
  return *this;
}

bool Stmt::step() {
  const int rc = sqlite3_step(stmt_);
  check(rc, "step");
  return rc == SQLITE_ROW;
}

void Stmt::run() {
  while (step()) {
  }
  reset();
}

void Stmt::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::string Stmt::parameter_name(int i) const {
  const char* p = sqlite3_bind_parameter_name(stmt_, i);
  return p ? std::string(p) : std::string();
}

std::string Stmt::column_text(int i) const {
  const auto* p = sqlite3_column_text(stmt_, i);
  return p ? std::string(reinterpret_cast<const char*>(p)) : std::string();
}

}  // namespace llmbench
