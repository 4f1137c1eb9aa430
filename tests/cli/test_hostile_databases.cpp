// The readers of llmbench's stores against hostile or broken files (issue 42), end to end on
// the binary: a bench_case.variants nested 200,000 levels deep, a corrupt database, another
// program's SQLite file, the same shard merged twice, an nsys export whose table is a recursive
// view, and a gzip that inflates far beyond its size. Each is exit 2 with one `error:` line
// naming the file, and nothing recurses, loops or inflates without bound.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <zlib.h>

#include <algorithm>
#include <string>

#include "tests/cli/llmbench_process.h"
#include "tests/compare/compare_db.h"

using namespace llmbench_test;

namespace {

int count_lines(const std::string& s) { return int(std::count(s.begin(), s.end(), '\n')); }

void sql(const fs::path& db, const std::string& statement) {
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.string().c_str(), &h), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(h, statement.c_str(), nullptr, nullptr, &err), SQLITE_OK)
      << (err ? err : "") << " in " << statement.substr(0, 200);
  sqlite3_free(err);
  sqlite3_close(h);
}

void expect_refused(const Result& r, const std::string& file, const std::string& part = "") {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(file), std::string::npos) << r.err;
  if (!part.empty()) EXPECT_NE(r.err.find(part), std::string::npos) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_LT(r.err.size(), 600u) << r.err.substr(0, 600);
}

}  // namespace

TEST(HostileDatabases, DeeplyNestedVariantsAreRefusedByCompareAndExport) {
  const fs::path d = scratch_dir();
  const fs::path b = d / "base.db", c = d / "cand.db";
  fs::remove(b);
  fs::remove(c);
  add_fake_run(b, fake_run_info(), {timed_case(10, 2)});
  add_fake_run(c, fake_run_info(), {timed_case(10, 2)});
  sql(c, "UPDATE bench_case SET variants = '" + std::string(200000, '[') +
             std::string(200000, ']') + "'");
  expect_refused(run_llmbench("compare " + b.string() + " " + c.string()), c.string(),
                 "nested deeper than 64 levels");
  expect_refused(run_llmbench("export gbench " + c.string() + " -o " + (d / "g.json").string()),
                 c.string(), "nested deeper than 64 levels");
  EXPECT_FALSE(fs::exists(d / "g.json"));
}
