// `llmbench export chrome` on a real traced run of the tiny preset: the document is valid
// Chrome trace-event JSON (X events in us with ns decimals, M names, s/f flows that pair up),
// host ranges and ops sit on separate threads with a flow from each op's range to the op,
// importing the export gives back the same events (names, durations to the ns, nesting) and
// flows, --run selects a run, and bad input is exit 2 with nothing written.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/cli/llmbench_process.h"
#include "tests/import/sqlite_rows.h"

namespace {

using namespace llmbench_test;
using json = nlohmann::json;

std::string gunzip(const fs::path& p) {
  gzFile f = gzopen(p.c_str(), "rb");
  std::string out;
  char buf[4096];
  int n;
  while (f && (n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, std::size_t(n));
  if (f) gzclose(f);
  return out;
}

class ExportChrome : public testing::Test {
 protected:
  // Run 1 traced (batch 2, prompt 8, 4 new tokens: prefill + 3 decode steps), run 2 untraced.
  static void SetUpTestSuite() {
    dir_ = fs::path(LLMBENCH_TEST_SCRATCH) / "export_chrome" / std::to_string(::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    db_ = dir_ / "run.db";
    const std::string common = "--model tiny --batch 2 --prompt-len 8 --max-new-tokens 4 "
                               "--repeat 1 --warmup 0 --peak-bw-gbps 20 --peak-tflops 0.2 "
                               "--quiet --db " + db_.string();
    run1_ = run_llmbench("run " + common + " --trace ops", dir_ / "run1");
    run2_ = run_llmbench("run " + common + " --trace off", dir_ / "run2");
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  void SetUp() override {
    ASSERT_EQ(run1_.exit_code, 0) << run1_.err;
    ASSERT_EQ(run2_.exit_code, 0) << run2_.err;
  }
  static Result export_to(const fs::path& out, const std::string& extra = "") {
    return run_llmbench("export chrome " + db_.string() + " -o " + out.string() + " " + extra);
  }
  static inline fs::path dir_, db_;
  static inline Result run1_, run2_;
};

TEST_F(ExportChrome, WritesValidChromeJsonWithRangesOpsAndFlows) {
  const fs::path out = scratch_dir() / "trace.json";
  const Result r = export_to(out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("exported run 1"), std::string::npos) << r.err;
  const json doc = json::parse(slurp(out));
  EXPECT_EQ(doc["displayTimeUnit"], "ns");
  EXPECT_EQ(doc["otherData"]["run_id"], 1);
  const json& ev = doc["traceEvents"];
  std::size_t x = 0, ranges = 0;
  std::set<long long> host_tids, op_tids;
  std::map<long long, int> starts, finishes;
  std::set<std::string> metadata;
  for (const auto& e : ev) {
    const std::string ph = e["ph"];
    ASSERT_TRUE(e["pid"].is_number_integer()) << e.dump();
    if (ph == "M") {
      metadata.insert(e["name"].get<std::string>());
      continue;
    }
    ASSERT_TRUE(e["tid"].is_number_integer()) << e.dump();
    ASSERT_TRUE(e["ts"].is_number()) << e.dump();
    if (ph == "X") {
      ++x;
      ASSERT_TRUE(e["dur"].is_number()) << e.dump();
      EXPECT_GE(e["dur"].get<double>(), 0);
      ASSERT_TRUE(e["cat"].is_string());
      if (e["cat"] == "range") ++ranges, host_tids.insert(e["tid"].get<long long>());
      else op_tids.insert(e["tid"].get<long long>());
    } else if (ph == "s") {
      ++starts[e["id"].get<long long>()];
      EXPECT_TRUE(host_tids.count(e["tid"].get<long long>())) << e.dump();
    } else if (ph == "f") {
      ++finishes[e["id"].get<long long>()];
      EXPECT_EQ(e["bp"], "e");
    } else {
      ADD_FAILURE() << "unexpected phase " << e.dump();
    }
  }
  EXPECT_EQ(metadata, (std::set<std::string>{"process_name", "thread_name", "thread_sort_index"}));
  const std::string d = db_.string();
  EXPECT_EQ(std::int64_t(x), sql_int(d, "SELECT COUNT(*) FROM event"));  // run 2 has none
  EXPECT_EQ(std::int64_t(ranges), sql_int(d, "SELECT COUNT(*) FROM event WHERE category = 'range'"));
  EXPECT_EQ(host_tids.size(), 1u);
  EXPECT_EQ(op_tids.size(), 1u);
  EXPECT_NE(*host_tids.begin(), *op_tids.begin());
  // Every op inside a range gets one flow, and every flow pairs one s with one f.
  EXPECT_EQ(std::int64_t(starts.size()),
            sql_int(d, "SELECT COUNT(*) FROM event WHERE category <> 'range' AND parent_id IS NOT NULL"));
  EXPECT_EQ(starts.size(), finishes.size());
  for (const auto& [id, n] : starts) {
    EXPECT_EQ(n, 1);
    EXPECT_EQ(finishes[id], 1) << id;
  }
}

TEST_F(ExportChrome, ImportingTheExportGivesBackTheSameEvents) {
  const fs::path out = scratch_dir() / "trace.json", back = scratch_dir() / "back.db";
  fs::remove(back);
  ASSERT_EQ(export_to(out).exit_code, 0);
  const Result imp = run_llmbench("import chrome " + out.string() + " --db " + back.string());
  ASSERT_EQ(imp.exit_code, 0) << imp.err;
  EXPECT_TRUE(imp.err.empty()) << "nothing may be skipped: " << imp.err;
  // Same events: names, categories, start and duration exactly (the export keeps every ns).
  const std::string q = "SELECT name, category, ts, dur FROM event ORDER BY ts, name, dur";
  EXPECT_EQ(sql_rows(back, q), sql_rows(db_, q));
  // Ranges keep their nesting; ops sit on their own thread; each op's flow comes from the
  // range that enclosed it in the original.
  EXPECT_EQ(sql_rows(back, "SELECT name, depth FROM slice WHERE category = 'range' ORDER BY ts, depth"),
            sql_rows(db_, "SELECT name, depth FROM slice WHERE category = 'range' ORDER BY ts, depth"));
  const std::string flows_back =
      "SELECT o.name, i.name, i.ts FROM flow f JOIN slice o ON o.id = f.slice_out "
      "JOIN slice i ON i.id = f.slice_in ORDER BY i.ts, i.name";
  const std::string parents_orig =
      "SELECT p.name, s.name, s.ts FROM slice s JOIN slice p ON p.id = s.parent_id "
      "WHERE s.category <> 'range' ORDER BY s.ts, s.name";
  EXPECT_EQ(sql_rows(back, flows_back), sql_rows(db_, parents_orig));
  EXPECT_EQ(sql_int(back, "SELECT COUNT(DISTINCT track_id) FROM slice"), 2);
  EXPECT_EQ(sql_rows(back, "SELECT DISTINCT name FROM process"), (Rows{{"llmbench run 1"}}));
}

TEST_F(ExportChrome, GzipAndStdoutGiveTheSameDocument) {
  const fs::path plain = scratch_dir() / "t.json", gz = scratch_dir() / "t.json.gz";
  ASSERT_EQ(export_to(plain).exit_code, 0);
  ASSERT_EQ(export_to(gz).exit_code, 0);
  EXPECT_EQ(gunzip(gz), slurp(plain));
  const Result out = run_llmbench("export chrome " + db_.string() + " -o -");
  ASSERT_EQ(out.exit_code, 0) << out.err;
  EXPECT_EQ(out.out, slurp(plain));
  EXPECT_FALSE(fs::exists(plain.string() + ".tmp"));
}

TEST_F(ExportChrome, RunSelectionAndBadInput) {
  const fs::path out = scratch_dir() / "sel.json";
  ASSERT_EQ(export_to(out, "--run 1").exit_code, 0);
  struct Case {
    std::string args;
    const char* says;
  };
  for (const Case& c : {
           Case{"export chrome " + db_.string() + " --run 2 -o " + out.string(), "no trace"},
           Case{"export chrome " + db_.string() + " --run 9 -o " + out.string(), "no such run"},
           Case{"export chrome " + (dir_ / "missing.db").string() + " -o " + out.string(),
                "does not exist"},
           Case{"export chrome " + db_.string() + " -o " + (dir_ / "no/dir/t.json").string(),
                "does not exist"},
           Case{"export chrome " + db_.string(), "-o"},
           Case{"export", "subcommand"},
       }) {
    fs::remove(out);
    const Result r = run_llmbench(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(out)) << c.args;
  }
  // A database with no traced run at all.
  const fs::path empty = scratch_dir() / "untraced.db";
  fs::remove(empty);
  ASSERT_EQ(run_llmbench("run --model tiny --batch 1 --prompt-len 4 --max-new-tokens 1 --repeat 1 "
                         "--warmup 0 --trace off --peak-bw-gbps 20 --peak-tflops 0.2 --quiet --db " +
                         empty.string()).exit_code, 0);
  const Result none = run_llmbench("export chrome " + empty.string() + " -o " + out.string());
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("has no traced run"), std::string::npos) << none.err;
}

}  // namespace
