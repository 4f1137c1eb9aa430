// Tiny SQLite helpers for import tests: run a script, read a query's rows as text, read one
// integer. Header-only; deliberately independent of llmbench's own Db wrapper so the tests
// check the database as any SQLite client sees it.
#pragma once
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <vector>

namespace llmbench_test {

using Rows = std::vector<std::vector<std::string>>;

inline void sql_exec(const std::string& path, const std::string& sql) {
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &h), SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(h, sql.c_str(), nullptr, nullptr, &err);
  EXPECT_EQ(rc, SQLITE_OK) << (err ? err : "") << "\nin: " << sql.substr(0, 300);
  sqlite3_free(err);
  sqlite3_close(h);
}

// Every row of `sql`, NULL as "NULL".
inline Rows sql_rows(const std::string& path, const std::string& sql) {
  Rows out;
  sqlite3* h = nullptr;
  if (sqlite3_open_v2(path.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    ADD_FAILURE() << "cannot open " << path;
    sqlite3_close(h);
    return out;
  }
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(h, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
    ADD_FAILURE() << sqlite3_errmsg(h) << " in: " << sql;
    sqlite3_close(h);
    return out;
  }
  while (sqlite3_step(st) == SQLITE_ROW) {
    std::vector<std::string> row;
    for (int i = 0; i < sqlite3_column_count(st); ++i) {
      const auto* p = sqlite3_column_text(st, i);
      row.push_back(p ? reinterpret_cast<const char*>(p) : "NULL");
    }
    out.push_back(std::move(row));
  }
  sqlite3_finalize(st);
  sqlite3_close(h);
  return out;
}

inline std::int64_t sql_int(const std::string& path, const std::string& sql) {
  const Rows r = sql_rows(path, sql);
  if (r.empty() || r[0].empty() || r[0][0] == "NULL") {
    ADD_FAILURE() << "no value from: " << sql;
    return -1;
  }
  return std::stoll(r[0][0]);
}

}  // namespace llmbench_test
