// One schema for every llmbench database: every bundled query runs, through `llmbench query`,
// on a database made by `run`, by `load` and by `serve --db` alike, and finds the rows of its
// own kind there and an empty result (not an error) elsewhere. And the commands that only read
// (`query`, `report`, `compare`) leave no file beside the databases they read (no -wal or
// -shm). Databases come from real tiny runs; every child is bounded in time.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "tests/cli/llmbench_process.h"
#include "tools/query/bundled_queries.h"

namespace {

namespace fs = std::filesystem;
using llmbench_test::Result;
using llmbench_test::run_llmbench;

class EveryDatabase : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::path(LLMBENCH_TEST_SCRATCH) / "every_database" / std::to_string(::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "dbs");
    run_ = run_llmbench("run --model tiny --batch 1 --prompt-len 8 --max-new-tokens 3 "
                        "--repeat 1 --warmup 0 --trace ops --peak-bw-gbps 20 --peak-tflops 0.2 --quiet "
                        "--db " + db("run").string(),
                        dir_ / "run");
    load_ = run_llmbench("load --server-cmd '" LLMBENCH_BIN " serve --model tiny --port {port} "
                         "--db " + db("serve").string() + "' --concurrency 1 --num-requests 3 "
                         "--input-len 8 --output-len 4 --ignore-eos --quiet --db " +
                         db("load").string(),
                         dir_ / "load");
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  static fs::path db(const std::string& kind) { return dir_ / "dbs" / (kind + ".db"); }
  // The names of the files in the databases' folder.
  static std::set<std::string> files() {
    std::set<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_ / "dbs")) out.insert(e.path().filename());
    return out;
  }
  static inline fs::path dir_;
  static inline Result run_, load_;
};

TEST_F(EveryDatabase, EveryBundledQueryRunsOnEachKind) {
  ASSERT_EQ(run_.exit_code, 0) << run_.err;
  ASSERT_EQ(load_.exit_code, 0) << load_.err;
  // A query that has rows on the database of its own kind.
  const std::map<std::string, std::string> own = {
      {"case_summary", "run"}, {"top_ops", "run"}, {"kernel_summary", "run"},
      {"load_summary", "load"}, {"serving_table", "load"}, {"serve_steps", "serve"}};
  ASSERT_FALSE(llmbench::bundled_queries().empty());
  for (const std::string kind : {"run", "load", "serve"}) {
    for (const auto& q : llmbench::bundled_queries()) {
      SCOPED_TRACE(kind + " database, query " + q.name);
      const Result r = run_llmbench("query " + db(kind).string() + " " + q.name + " --format json",
                                    dir_ / "query");
      ASSERT_EQ(r.exit_code, 0) << r.err;
      const auto rows = nlohmann::json::parse(r.out);
      ASSERT_TRUE(rows.is_array()) << r.out;
      const auto it = own.find(q.name);
      if (it == own.end()) continue;
      if (it->second == kind) EXPECT_FALSE(rows.empty());
      else EXPECT_TRUE(rows.empty()) << r.out;
    }
  }
}

TEST_F(EveryDatabase, ReadingCommandsLeaveNoFileBeside) {
  ASSERT_EQ(run_.exit_code, 0) << run_.err;
  ASSERT_EQ(load_.exit_code, 0) << load_.err;
  const std::set<std::string> before = files();
  EXPECT_EQ(before, (std::set<std::string>{"load.db", "run.db", "serve.db"}));
  const std::string run_db = db("run").string();
  for (const std::string& args :
       {"query " + run_db + " case_summary", "query " + db("serve").string() + " serve_steps",
        "query " + db("load").string() + " load_summary",
        "report " + run_db + " -o " + (dir_ / "report.html").string(),
        "compare " + run_db + " " + run_db + " --allow-inconclusive",
        "compare " + db("load").string() + " " + db("load").string() + " --allow-inconclusive"}) {
    const Result r = run_llmbench(args, dir_ / "read");
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << args << ": " << r.err;
    EXPECT_EQ(files(), before) << args;
  }
  // The existing refusals stay: a bundled query is read-only, a write is refused.
  llmbench_test::write_file(dir_ / "vacuum.sql", "VACUUM INTO '" + (dir_ / "copy.db").string() + "';\n");
  const Result vacuum = run_llmbench("query " + run_db + " " + (dir_ / "vacuum.sql").string(),
                                     dir_ / "read");
  EXPECT_EQ(vacuum.exit_code, 2) << vacuum.err;
  EXPECT_EQ(files(), before);
}

}  // namespace
