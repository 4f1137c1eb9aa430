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
TEST(HostileDatabases, CorruptDatabasesAreExitTwoNamingTheFile) {
  const fs::path d = scratch_dir();
  const fs::path good = d / "good.db", bad = d / "corrupt.db";
  fs::remove(good);
  add_fake_run(good, fake_run_info(), {timed_case(10, 2)});
  // Keep the SQLite header and schema page, overwrite every later page with noise.
  std::string bytes = slurp(good);
  ASSERT_GT(bytes.size(), 8192u);
  for (std::size_t i = 4096; i < bytes.size(); ++i) bytes[i] = char((i * 2654435761u) >> 13);
  write_file(bad, bytes);
  for (const std::string& cmd :
       {"compare " + good.string() + " " + bad.string(), "report " + bad.string() + " -o " +
        (d / "r.html").string(), "export gbench " + bad.string() + " -o " + (d / "g.json").string(),
        "export chrome " + bad.string() + " -o " + (d / "t.json").string()}) {
    const Result r = run_llmbench(cmd);
    expect_refused(r, bad.string());
  }
}

TEST(HostileDatabases, QueryRefusesAnotherProgramsSqliteFile) {
  const fs::path d = scratch_dir();
  const fs::path other = d / "other.db";
  fs::remove(other);
  sql(other, "CREATE TABLE run (id INTEGER, status TEXT); INSERT INTO run VALUES (1, 'x');");
  const Result r = run_llmbench("query " + other.string() + " case_summary");
  expect_refused(r, other.string(), "not an llmbench");
}

TEST(HostileDatabases, MergingTheSameShardTwiceIsRefused) {
  const fs::path d = scratch_dir();
  const fs::path s1 = d / "sh1.db", m = d / "m.db";
  fs::remove(s1);
  fs::remove(m);
  add_fake_run(s1, fake_run_info(), {timed_case(10, 2)});
  const Result r = run_llmbench("merge " + s1.string() + " " + s1.string() + " -o " + m.string());
  expect_refused(r, s1.string(), "twice");
  EXPECT_FALSE(fs::exists(m));
}

TEST(HostileDatabases, NsysImportRefusesViewsAndCapsInflation) {
  const fs::path d = scratch_dir();
  const fs::path view = d / "view.sqlite", db = d / "out.db";
  fs::remove(view);
  // An export whose event table is a recursive view that never ends.
  sql(view,
      "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
      "CREATE VIEW NVTX_EVENTS AS WITH RECURSIVE r(start, end, text, globalTid, eventType, "
      "rangeId, textId) AS (SELECT 0, 1, 'a', 1, 59, 0, NULL UNION ALL SELECT start + 1, end + 1, "
      "text, globalTid, eventType, rangeId, textId FROM r) SELECT * FROM r;");
  expect_refused(run_llmbench("import nsys " + view.string() + " --db " + db.string()),
                 view.string(), "view");
  // 64 MB of zeros gzipped (about 64 KB): refused at the cap, not inflated whole.
  const fs::path bomb = d / "bomb.json.gz";
  gzFile gz = gzopen(bomb.string().c_str(), "wb9");
  ASSERT_NE(gz, nullptr);
  const std::string zeros(1 << 20, ' ');
  for (int i = 0; i < 64; ++i) gzwrite(gz, zeros.data(), unsigned(zeros.size()));
  gzclose(gz);
  const Result r = run_llmbench("import chrome " + bomb.string() + " --db " + db.string() +
                                " --max-decompressed-mb 16");
  expect_refused(r, bomb.string(), "16 MB");
}
