// Every bundled query (queries/*.sql, embedded in the binary): its header is present and well
// formed, the :params it declares are exactly the ones its SQL uses, the columns it declares
// are exactly the ones it returns, it is one statement, and it runs on an empty database of
// the current schema (which has the serving and gate tables too) and, read-only, on one of
// version 8 (its missing tables get empty stand-ins). Also checks the copies the build puts
// beside the binary.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <unistd.h>

#include "tools/query/bundled_queries.h"
#include "tools/query/query_runner.h"
#include "tools/query/sql_functions.h"
#include "tools/store/store.h"

namespace llmbench {
namespace {

namespace fs = std::filesystem;

// The queries the issue asks for; more may exist.
const char* const kRequired[] = {"case_summary",    "top_ops",     "window_ops", "op_vs_batch",
                                 "layer_breakdown", "op_roofline", "op_gaps",    "op_batch_fit"};

// A fresh database with the current schema and no rows, with the SQL functions registered.
class BundledQueries : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    path_ = fs::path(LLMBENCH_TEST_SCRATCH) / "query" /
            ("schema_" + std::to_string(::getpid()) + ".db");
    fs::create_directories(path_.parent_path());
    fs::remove(path_);
    { ResultStore store(path_.string()); }  // creates the schema, then closes
    db_ = open_query_db(path_.string()).release();
  }
  static void TearDownTestSuite() {
    delete db_;
    db_ = nullptr;
    fs::remove(path_);
    fs::remove(path_.string() + "-wal");
    fs::remove(path_.string() + "-shm");
  }
  static inline fs::path path_;
  static inline Db* db_ = nullptr;
};

TEST_F(BundledQueries, TheRequiredQueriesAreBundled) {
  for (const char* name : kRequired) EXPECT_TRUE(find_bundled_query(name)) << name;
}

TEST_F(BundledQueries, EachFileOpensWithTheThreeHeaderLines) {
  ASSERT_FALSE(bundled_queries().empty());
  for (const auto& q : bundled_queries()) {
    std::istringstream in{std::string(q.sql)};
    std::string l1, l2, l3;
    std::getline(in, l1), std::getline(in, l2), std::getline(in, l3);
    EXPECT_EQ(l1.rfind("-- purpose: ", 0), 0u) << q.name << ": " << l1;
    EXPECT_EQ(l2.rfind("-- params: ", 0), 0u) << q.name << ": " << l2;
    EXPECT_EQ(l3.rfind("-- columns: ", 0), 0u) << q.name << ": " << l3;
    EXPECT_FALSE(q.header.purpose.empty()) << q.name;
    EXPECT_FALSE(q.header.columns.empty()) << q.name;
    for (const auto& p : q.header.params) {
      EXPECT_TRUE(parse_sql_literal(p.default_sql)) << q.name << ": " << p.name;
      EXPECT_FALSE(p.description.empty()) << q.name << ": " << p.name;
    }
    for (const auto& c : q.header.columns)
      EXPECT_FALSE(c.meaning.empty()) << q.name << ": column " << c.name << " has no meaning";
  }
}

TEST_F(BundledQueries, DeclaredParamsAndColumnsMatchTheStatement) {
  for (const auto& q : bundled_queries()) {
    SCOPED_TRACE(q.name);
    std::string_view tail;
    Stmt s(db_->handle(), q.sql, &tail);  // throws on SQL errors against the real schema
    ASSERT_FALSE(s.empty());
    EXPECT_EQ(tail.find_first_not_of(" \t\r\n"), std::string_view::npos)
        << "more than one statement; the rest starts: " << tail.substr(0, 80);

    std::set<std::string> used, declared;
    for (int i = 1; i <= s.parameter_count(); ++i) {
      const std::string name = s.parameter_name(i);
      ASSERT_FALSE(name.empty()) << "anonymous '?' parameter";
      EXPECT_EQ(name[0], ':') << name;
      used.insert(name.substr(1));
    }
    for (const auto& p : q.header.params) declared.insert(p.name);
    EXPECT_EQ(used, declared);

    std::vector<std::string> returned, listed;
    for (int i = 0; i < s.columns(); ++i) returned.push_back(s.column_name(i));
    for (const auto& c : q.header.columns) listed.push_back(c.name);
    EXPECT_EQ(returned, listed);
  }
}

TEST_F(BundledQueries, EachRunsWithItsDefaultsOnAnEmptyDatabase) {
  for (const auto& q : bundled_queries()) {
    const QuerySource source{"query '" + q.name + "'", std::string(q.sql), q.header};
    const QueryResult r = run_query(*db_, source, {});
    EXPECT_EQ(r.columns.size(), q.header.columns.size()) << q.name;
    EXPECT_TRUE(r.rows.empty()) << q.name;
  }
}

TEST_F(BundledQueries, EachRunsOnAVersion8DatabaseReadOnly) {
  const fs::path old = path_.parent_path() / ("v8_" + std::to_string(::getpid()) + ".db");
  fs::remove(old);
  {
    Db d(old.string(), Db::Mode::kCreate);
    create_schema_version(d, 8);
  }
  auto db = open_query_db(old.string());
  for (const auto& q : bundled_queries()) {
    const QuerySource source{"query '" + q.name + "'", std::string(q.sql), q.header};
    const QueryResult r = run_query(*db, source, {});
    EXPECT_TRUE(r.rows.empty()) << q.name;
  }
  EXPECT_EQ(db->user_version(), 8);
  db.reset();
  fs::remove(old);
}

TEST_F(BundledQueries, CopiesBesideTheBinaryMatchTheEmbeddedText) {
  for (const auto& q : bundled_queries()) {
    const fs::path copy = fs::path(LLMBENCH_QUERY_COPY_DIR) / (q.name + ".sql");
    std::ifstream in(copy, std::ios::binary);
    ASSERT_TRUE(in) << copy;
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(text.str(), q.sql) << copy;
  }
}

}  // namespace
}  // namespace llmbench
