// A real PyTorch-profiler trace made on this machine with Debian's python3-torch 1.13
// (tests/fixtures/make_torch_trace.py wrote tests/fixtures/torch_1_13_cpu_trace.json, the
// bare-array form without cat): every event imports, ranges nest the aten:: ops they ran, and
// a trace-processor style window query over each record_function range gives the numbers
// computed here from the file.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "tests/cli/llmbench_process.h"
#include "tests/import/sqlite_rows.h"

namespace {

using namespace llmbench_test;
using json = nlohmann::json;

const fs::path kTrace = fs::path(LLMBENCH_FIXTURES) / "torch_1_13_cpu_trace.json";

class ChromeImportTorch : public testing::Test {
 protected:
  void SetUp() override {
    trace_ = json::parse(slurp(kTrace));
    ASSERT_TRUE(trace_.is_array()) << "expected torch 1.13's bare-array form";
    db_ = scratch_dir() / "torch.db";
    fs::remove(db_);
    const Result r = run_llmbench("import chrome " + kTrace.string() + " --db " + db_.string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.err.empty()) << "nothing should be skipped: " << r.err;
  }
  static long long ns(const json& v) { return std::llround(v.get<double>() * 1000.0); }

  json trace_;
  fs::path db_;
};

TEST_F(ChromeImportTorch, EveryEventImportsWithItsTimes) {
  EXPECT_EQ(sql_int(db_, "SELECT COUNT(*) FROM slice"), std::int64_t(trace_.size()));
  std::map<std::string, long long> total;
  for (const auto& e : trace_) total[e["name"]] += ns(e["dur"]);
  for (const auto& r : sql_rows(db_, "SELECT name, SUM(dur) FROM slice GROUP BY name"))
    EXPECT_EQ(std::stoll(r[1]), total[r[0]]) << r[0];
  EXPECT_EQ(sql_rows(db_, "SELECT DISTINCT name FROM process"), (Rows{{"CPU functions"}}));
}

TEST_F(ChromeImportTorch, RecordFunctionRangesHoldTheirOps) {
  // Both forward passes nest in mlp_step; each holds its two aten::linear calls directly.
  EXPECT_EQ(sql_rows(db_, "SELECT s.depth, p.name, COUNT(*) FROM slice s JOIN slice p ON "
                          "p.id = s.parent_id WHERE s.name = 'mlp_forward' GROUP BY 1, 2"),
            (Rows{{"1", "mlp_step", "2"}}));
  EXPECT_EQ(sql_rows(db_, "SELECT p.name, COUNT(*) FROM slice s JOIN slice p ON "
                          "p.id = s.parent_id WHERE s.name = 'aten::linear' GROUP BY 1"),
            (Rows{{"mlp_forward", "4"}}));
  // Depth is the parent's plus one everywhere; roots have none.
  EXPECT_EQ(sql_int(db_, "SELECT COUNT(*) FROM slice s LEFT JOIN slice p ON p.id = s.parent_id "
                         "WHERE (s.depth = 0) <> (p.id IS NULL) OR s.depth <> p.depth + 1"),
            0);
}

TEST_F(ChromeImportTorch, WindowQueryPerRangeMatchesTheFile) {
  // For each occurrence of mlp_forward: aten:: ops that lie inside it, by name.
  std::vector<std::pair<long long, long long>> windows;
  for (const auto& e : trace_)
    if (e["name"] == "mlp_forward") windows.emplace_back(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]));
  ASSERT_EQ(windows.size(), 2u);
  for (std::size_t w = 0; w < windows.size(); ++w) {
    std::map<std::string, std::pair<long long, long long>> want;
    for (const auto& e : trace_) {
      const std::string name = e["name"];
      const long long ts = ns(e["ts"]), dur = ns(e["dur"]);
      if (name.rfind("aten::", 0) == 0 && ts >= windows[w].first && ts + dur <= windows[w].second)
        ++want[name].first, want[name].second += dur;
    }
    Rows expected;
    for (const auto& [name, v] : want)
      expected.push_back({name, std::to_string(v.first), std::to_string(v.second)});
    const std::string win = "(SELECT ts, ts + dur AS te FROM slice WHERE name = 'mlp_forward' "
                            "ORDER BY ts LIMIT 1 OFFSET " + std::to_string(w) + ")";
    EXPECT_EQ(sql_rows(db_, "SELECT name, COUNT(*), SUM(dur) FROM slice, " + win + " AS w "
                            "WHERE slice.ts >= w.ts AND slice.ts + slice.dur <= w.te "
                            "AND name LIKE 'aten::%' GROUP BY name ORDER BY name"),
              expected)
        << "window " << w;
    EXPECT_GE(expected.size(), 5u);
  }
}

TEST_F(ChromeImportTorch, BundledRangeSummaryReadsIt) {
  // Bare-array traces have no categories, so their ranges are not user_annotation: the range
  // summary lists none, and the query still runs.
  const Result r = run_llmbench("query " + db_.string() + " nvtx_range_summary --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out).size(), 0u);
}

}  // namespace
