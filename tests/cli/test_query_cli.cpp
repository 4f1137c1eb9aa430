// `llmbench query` end to end on small hand-made databases: --list, a user's SQL file with
// :params and formats, read-only access, and every bad-input case (exit code 2, one stderr
// line starting "error: " and naming what was wrong, nothing on stdout, no file created).
// Queries over a real traced run are in test_query_on_trace.cpp.
#include <gtest/gtest.h>

#include <sstream>
#include <sqlite3.h>

#include <cctype>
#include <nlohmann/json.hpp>

#include "tests/cli/llmbench_process.h"

namespace {

using namespace llmbench_test;

// Creates an SQLite file at `path` by running `sql`.
void make_db(const fs::path& path, const std::string& sql) {
  fs::remove(path);
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &h), SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(h, sql.c_str(), nullptr, nullptr, &err);
  EXPECT_EQ(rc, SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(h);
}

// A database with a table t(x) = 1, 2, 3 and the given schema version.
fs::path small_db(int user_version = 2) {
  const fs::path db = scratch_dir() / "small.db";
  make_db(db, "CREATE TABLE t(x INTEGER); INSERT INTO t VALUES (1), (2), (3); "
              "PRAGMA user_version = " + std::to_string(user_version) + ";");
  return db;
}

const char* const kBundled[] = {"case_summary", "top_ops",     "window_ops", "op_vs_batch",
                                "layer_breakdown", "op_roofline", "op_gaps"};

TEST(QueryCli, ListShowsEveryBundledQueryWithItsPurpose) {
  const Result r = run_llmbench("query --list");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  // One block per query within 120 columns (issue 40: rows were padded to 571): its name at
  // the start of a line, its purpose wrapped and indented below.
  for (const char* name : kBundled)
    EXPECT_NE(("\n" + r.out).find("\n" + std::string(name)), std::string::npos) << name;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_LE(line.size(), 120u) << line;
    EXPECT_TRUE(line.empty() || line.back() != ' ') << "trailing blank: '" << line << "'";
  }

  const Result j = run_llmbench("query --list --format json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto list = nlohmann::json::parse(j.out);
  ASSERT_GE(list.size(), std::size(kBundled));
  for (const auto& q : list) {
    EXPECT_FALSE(q["purpose"].get<std::string>().empty()) << q["name"];
    EXPECT_FALSE(q["columns"].empty()) << q["name"];
    EXPECT_TRUE(q["params"].is_array()) << q["name"];
  }
}

TEST(QueryCli, UserFileBindsParamsAndPrintsEveryFormat) {
  const fs::path db = small_db();
  const fs::path sql = scratch_dir() / "mine.sql";
  write_file(sql, "-- no header: every :param must be given\n"
                  "SELECT x, x * :k AS scaled, :label AS label, NULL AS missing, x / 2.0 AS half\n"
                  "FROM t WHERE x >= :min ORDER BY x;\n");
  const std::string base = "query " + db.string() + " " + sql.string() +
                           " --param k=10 --param label=decode_step --param min=2";

  const Result json = run_llmbench(base + " --format json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto rows = nlohmann::json::parse(json.out);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["x"], 2);
  EXPECT_EQ(rows[0]["scaled"], 20);  // k bound as an integer, not the text '10'
  EXPECT_EQ(rows[0]["label"], "decode_step");
  EXPECT_TRUE(rows[0]["missing"].is_null());
  EXPECT_EQ(rows[1]["half"], 1.5);
  EXPECT_TRUE(rows[1]["half"].is_number());

  const Result csv = run_llmbench(base + " --format csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out, "x,scaled,label,missing,half\n2,20,decode_step,,1\n3,30,decode_step,,1.5\n");

  const Result md = run_llmbench(base + " --format md");
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_EQ(md.out.rfind("| x | scaled | label | missing | half |", 0), 0u) << md.out;

  const Result table = run_llmbench(base);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("NULL"), std::string::npos) << table.out;
}

TEST(QueryCli, HeaderDefaultsApplyToUserFilesAndSqlFunctionsExist) {
  const fs::path db = small_db();
  const fs::path sql = scratch_dir() / "stats.sql";
  write_file(sql, "-- purpose: spread of t\n"
                  "-- params: p = 50 (percentile)\n"
                  "-- columns: p (the percentile), sd (sample stdev), med (median)\n"
                  "SELECT percentile(x, :p) AS p, stdev(x) AS sd, median(x) AS med FROM t;\n");
  const Result def = run_llmbench("query " + db.string() + " " + sql.string() + " --format csv");
  ASSERT_EQ(def.exit_code, 0) << def.err;
  EXPECT_EQ(def.out, "p,sd,med\n2,1,2\n");
  const Result p100 =
      run_llmbench("query --param p=100 " + db.string() + " " + sql.string() + " --format csv");
  ASSERT_EQ(p100.exit_code, 0) << p100.err;
  EXPECT_EQ(p100.out, "p,sd,med\n3,1,2\n");
}

TEST(QueryCli, LastStatementIsPrintedAndTempTablesWork) {
  const fs::path db = small_db();
  const fs::path sql = scratch_dir() / "two.sql";
  write_file(sql, "CREATE TEMP TABLE big AS SELECT x FROM t WHERE x > 1;\n"
                  "SELECT COUNT(*) AS n FROM big;  -- printed\n");
  const Result r = run_llmbench("query " + db.string() + " " + sql.string() + " --format csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "n\n2\n");
}

TEST(QueryCli, TheDatabaseIsOpenedReadOnly) {
  const fs::path db = small_db();
  const fs::path sql = scratch_dir() / "delete.sql";
  write_file(sql, "DELETE FROM t;\n");
  const Result r = run_llmbench("query " + db.string() + " " + sql.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("readonly"), std::string::npos) << r.err;
  write_file(scratch_dir() / "n.sql", "SELECT COUNT(*) AS n FROM t;");
  const Result count =
      run_llmbench("query " + db.string() + " " + (scratch_dir() / "n.sql").string() +
                   " --format csv");
  EXPECT_EQ(count.out, "n\n3\n") << count.err;
}

// A query opens the database read-only, and statements that would still write somewhere (a copy
// through VACUUM INTO, a new journal mode through PRAGMA, another file through ATTACH) are
// refused with one line naming the file and line; the database stays byte-identical and no
// copy appears.
TEST(QueryCli, StatementsThatWriteAreRefusedAndNothingChanges) {
  const fs::path dir = scratch_dir();
  const fs::path db = small_db();
  const std::string before = slurp(db);
  struct Case {
    const char* file;
    std::string sql;
    const char* must_mention;
  };
  const fs::path copy = dir / "copy.db";
  fs::remove(copy);
  const Case cases[] = {
      {"vacuum.sql", "-- copy it\nVACUUM INTO '" + copy.string() + "';\n", "line 2: VACUUM"},
      {"vacuum_lower.sql", "SELECT 1;\n  vacuum   main into '" + copy.string() + "';\n",
       "line 2: VACUUM"},
      {"journal.sql", "PRAGMA journal_mode=DELETE;\n", "line 1: a PRAGMA that changes"},
      {"user_version.sql", "PRAGMA user_version = 7;\n", "PRAGMA that changes"},
      {"attach.sql", "ATTACH '" + (dir / "other.db").string() + "' AS o;\n", "line 1: ATTACH is refused"},
  };
  for (const Case& c : cases) {
    write_file(dir / c.file, c.sql);
    const Result r = run_llmbench("query " + db.string() + " " + (dir / c.file).string());
    EXPECT_EQ(r.exit_code, 2) << c.file << ": " << r.err;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(c.must_mention), std::string::npos) << c.file << ": " << r.err;
    EXPECT_NE(r.err.find(c.file), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(copy)) << c.file << " wrote a copy of the database";
    EXPECT_FALSE(fs::exists(dir / "other.db")) << c.file;
    EXPECT_EQ(slurp(db), before) << c.file << " changed the database";
  }
  // Reading PRAGMAs still work.
  write_file(dir / "read.sql", "PRAGMA user_version;\n");
  const Result r = run_llmbench("query " + db.string() + " " + (dir / "read.sql").string() +
                                " --format csv");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "user_version\n2\n");
}

// ---- bad input ---------------------------------------------------------------------------------

struct BadQuery {
  const char* name;
  // Builds the arguments in the test's scratch directory (fixtures are created there).
  std::string (*args)(const fs::path& dir);
  const char* must_mention;
};

std::string missing_db(const fs::path& dir) {
  return "query " + (dir / "missing.db").string() + " top_ops";
}
std::string not_sqlite(const fs::path& dir) {
  write_file(dir / "notes.db", "these are notes, not a database\n");
  return "query " + (dir / "notes.db").string() + " top_ops";
}
std::string newer_schema(const fs::path&) { return "query " + small_db(99).string() + " top_ops"; }
std::string unknown_name(const fs::path&) { return "query " + small_db().string() + " top_opz"; }
std::string unknown_param(const fs::path&) {
  return "query " + small_db().string() + " top_ops --param nosuch=1";
}
std::string unknown_param_in_file(const fs::path& dir) {
  write_file(dir / "q.sql", "SELECT x FROM t WHERE x > :min;");
  return "query " + small_db().string() + " " + (dir / "q.sql").string() +
         " --param min=1 --param nosuch=1";
}
std::string param_without_equals(const fs::path&) {
  return "query " + small_db().string() + " top_ops --param case_id";
}
std::string param_without_key(const fs::path&) {
  return "query " + small_db().string() + " top_ops --param =3";
}
std::string sql_error_in_file(const fs::path& dir) {
  write_file(dir / "broken.sql", "SELECT x\nFROM nosuch_table;\n");
  return "query " + small_db().string() + " " + (dir / "broken.sql").string();
}
std::string syntax_error_in_file(const fs::path& dir) {
  write_file(dir / "typo.sql", "-- a comment first\nSELEC x FROM t;\n");
  return "query " + small_db().string() + " " + (dir / "typo.sql").string();
}
std::string missing_file(const fs::path& dir) {
  return "query " + small_db().string() + " " + (dir / "nofile.sql").string();
}
std::string param_without_value(const fs::path& dir) {
  write_file(dir / "needs.sql", "SELECT x FROM t WHERE x > :min;");
  return "query " + small_db().string() + " " + (dir / "needs.sql").string();
}
std::string empty_file(const fs::path& dir) {
  write_file(dir / "empty.sql", "-- only a comment\n");
  return "query " + small_db().string() + " " + (dir / "empty.sql").string();
}
std::string no_query(const fs::path&) { return "query " + small_db().string(); }
std::string bad_format(const fs::path&) {
  return "query " + small_db().string() + " top_ops --format xml";
}
std::string bad_header(const fs::path& dir) {
  write_file(dir / "hdr.sql",
             "-- purpose: p\n-- params: x = oops (d)\n-- columns: a (b)\nSELECT 1 AS a;");
  return "query " + small_db().string() + " " + (dir / "hdr.sql").string();
}

// Names the case in test output instead of printing the struct's bytes.
void PrintTo(const BadQuery& q, std::ostream* os) { *os << q.name; }

class QueryCliBadInput : public testing::TestWithParam<BadQuery> {};

TEST_P(QueryCliBadInput, ExitsTwoWithOneClearLine) {
  const fs::path dir = scratch_dir();
  const std::string args = GetParam().args(dir);
  const Result r = run_llmbench(args);
  EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
  ASSERT_FALSE(r.err.empty()) << args;
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(GetParam().must_mention), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_FALSE(fs::exists(dir / "missing.db")) << "query created a database";
}

INSTANTIATE_TEST_SUITE_P(
    Query, QueryCliBadInput,
    testing::Values(BadQuery{"missing_db", missing_db, "missing.db' does not exist"},
                    BadQuery{"not_sqlite", not_sqlite, "not a database"},
                    BadQuery{"newer_schema", newer_schema, "schema version 99"},
                    BadQuery{"unknown_name", unknown_name, "window_ops"},  // lists the names
                    BadQuery{"unknown_param", unknown_param, "nosuch"},
                    BadQuery{"unknown_param_in_file", unknown_param_in_file, "takes: min"},
                    BadQuery{"param_without_equals", param_without_equals, "key=value"},
                    BadQuery{"param_without_key", param_without_key, "key=value"},
                    BadQuery{"sql_error_in_file", sql_error_in_file, "broken.sql', line"},
                    BadQuery{"syntax_error_in_file", syntax_error_in_file, "typo.sql', line 2"},
                    BadQuery{"missing_file", missing_file, "nofile.sql"},
                    BadQuery{"param_without_value", param_without_value, "--param min="},
                    BadQuery{"empty_file", empty_file, "no SQL statement"},
                    BadQuery{"no_query", no_query, "top_ops"},
                    BadQuery{"bad_format", bad_format, "--format"},
                    BadQuery{"bad_header", bad_header, "hdr.sql"}),
    [](const testing::TestParamInfo<BadQuery>& info) { return std::string(info.param.name); });

}  // namespace
