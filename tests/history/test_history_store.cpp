// The history tables (tools/store/history_store.h), points from runs and CSV
// (tools/history/history_import.h) and the check over stored series (history_check.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "kernels/common/error.h"
#include "tests/history/synthetic_series.h"
#include "tools/history/history_check.h"
#include "tools/history/history_import.h"
#include "tools/store/schema.h"
#include "tools/store/store.h"

namespace llmbench {
namespace {

namespace fs = std::filesystem;

fs::path scratch(const std::string& name) {
  const fs::path d = fs::path(LLMBENCH_TEST_SCRATCH) / "history";
  fs::create_directories(d);
  const fs::path p = d / name;
  for (const char* ext : {"", "-wal", "-shm", ".lock"}) fs::remove(p.string() + ext);
  return p;
}

SeriesKey key(const std::string& label, std::optional<bool> hib = false) {
  SeriesKey k;
  k.suite = "ci-smoke";
  k.case_label = label;
  k.metric = "tpot_ms";
  k.cpu = "Test CPU";
  k.cpu_isa = "avx2";
  k.threads = 2;
  k.higher_is_better = hib;
  return k;
}

HistoryPoint point(const std::string& commit, const std::string& time, double v,
                   const std::string& ref) {
  HistoryPoint p;
  p.commit = commit;
  p.time = time;
  p.value = v;
  p.source = "run";
  p.source_ref = ref;
  return p;
}

TEST(HistoryStore, AppendsOncePerSourceAndReadsSeriesInTimeOrder) {
  ResultStore store(scratch("h.db").string());
  Db& db = store.db();
  HistoryRows rows = {{key("a"), point("c2", "2026-01-02T00:00:00Z", 2, "x:1")},
                      {key("a"), point("c1", "2026-01-01T00:00:00Z", 1, "x:2")},
                      {key("b"), point("c1", "2026-01-01T00:00:00Z", 5, "x:2")}};
  rows[0].second.verdict = "same";
  rows[0].second.noise_pct = 3.5;
  rows[0].second.ci_low = 1.5;
  EXPECT_EQ(append_history(db, rows), 3);
  EXPECT_EQ(append_history(db, rows), 0);  // the same sources again: nothing added
  SeriesKey other_machine = key("a");
  other_machine.threads = 1;  // another fingerprint: another series
  EXPECT_EQ(append_history(db, {{other_machine, point("c3", "2026-01-03T00:00:00Z", 9, "x:1")}}), 1);

  const auto all = read_history(db);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].key.name(), "ci-smoke / a / tpot_ms");
  EXPECT_EQ(all[0].key.machine(), "Test CPU (avx2), 2 threads");
  ASSERT_EQ(all[0].points.size(), 2u);
  EXPECT_EQ(all[0].points[0].commit, "c1");  // ordered by time, not insertion
  EXPECT_EQ(all[0].points[1].commit, "c2");
  EXPECT_EQ(all[0].points[1].verdict, "same");
  EXPECT_EQ(all[0].points[1].noise_pct, 3.5);
  EXPECT_EQ(all[0].points[1].ci_low, 1.5);
  EXPECT_FALSE(all[0].points[1].ci_high);
  EXPECT_EQ(all[0].key.higher_is_better, false);
  EXPECT_EQ(all[2].points.size(), 1u);
  EXPECT_EQ(all[2].key.threads, 1);
}

TEST(HistoryImport, CsvRowsAndTheirErrors) {
  const fs::path p = scratch("s.csv");
  std::ofstream(p) << "series,commit,time,value\r\n\"tpot, b1\",abc,2026-01-01T10:00:00Z,1.5\r\n"
                      "tpot b1,abd,2026-01-02,2\n";
  const HistoryRows rows = points_from_csv(p.string());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].first.case_label, "tpot, b1");
  EXPECT_EQ(rows[0].first.suite, "csv");
  EXPECT_FALSE(rows[0].first.higher_is_better);
  EXPECT_EQ(rows[0].second.commit, "abc");
  EXPECT_EQ(rows[0].second.value, 1.5);
  EXPECT_EQ(rows[1].second.time, "2026-01-02");
  EXPECT_EQ(rows[1].second.source, "csv");

  auto error_of = [&](const std::string& text) {
    std::ofstream(p) << text;
    try {
      points_from_csv(p.string());
    } catch (const BadInput& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of("name,commit,time,value\n").find("line 1: expected the header"), std::string::npos);
  EXPECT_NE(error_of("series,commit,time,value\na,b,yesterday,1\n").find("line 2: time 'yesterday'"),
            std::string::npos);
  EXPECT_NE(error_of("series,commit,time,value\na,b,2026-01-01,fast\n").find("value 'fast'"),
            std::string::npos);
  EXPECT_NE(error_of("series,commit,time,value\na,b,2026-01-01,nan\n").find("not a finite number"),
            std::string::npos);
  EXPECT_NE(error_of("series,commit,time,value\na,b,2026-01-01\n").find("expected 4 fields"),
            std::string::npos);
  EXPECT_NE(error_of("series,commit,time,value\n,b,2026-01-01,1\n").find("series name is empty"),
            std::string::npos);
  EXPECT_NE(error_of("").find("is empty"), std::string::npos);
}

TEST(HistoryImport, RunPointsCarryMediansIntervalsAndTheMachine) {
  LoadedRun run;
  run.run.git_commit = "0123456789ab";
  run.run.started_at = "2026-01-05T00:00:00Z";
  run.run.cpu = "Test CPU";
  run.run.cpu_isa = "avx2 (decode_fp32_m1 portable)";  // the series keys on the path alone
  run.run.threads = 2;
  run.run.profile = "/x/profiles/ci-smoke.toml";
  CaseSamples c;
  c.model = "tiny";
  c.dtype = "fp32";
  c.backend = "cpu";
  c.batch = 1;
  c.prompt_len = 8;
  c.max_new_tokens = 1;
  c.threads = 2;
  c.status = "ok";
  c.ttft_ms = {5, 1, 3, 2, 4};
  c.e2e_ms = {5, 1, 3, 2, 4};
  c.throughput_tok_s = {1, 2, 3, 4, 5};
  run.cases.push_back(c);
  c.status = "error";  // a failed case gives no points
  run.cases.push_back(c);
  PointContext ctx;
  const HistoryRows rows = points_from_run(run, "r.db:run 1", ctx);
  ASSERT_EQ(rows.size(), 3u);  // ttft, e2e, throughput (no TPOT with one new token)
  EXPECT_EQ(rows[0].first.suite, "ci-smoke");
  EXPECT_EQ(rows[0].first.metric, "ttft_ms");
  EXPECT_EQ(rows[0].first.cpu_isa, "avx2");
  EXPECT_EQ(rows[0].first.higher_is_better, false);
  EXPECT_EQ(rows[2].first.higher_is_better, true);
  EXPECT_EQ(rows[0].second.value, 3);
  // n = 5: order statistics floor(2.5 - 0.98 sqrt(5)) = 0 and ceil(2.5 + 2.19) - 1 = 4.
  EXPECT_EQ(rows[0].second.ci_low, 1);
  EXPECT_EQ(rows[0].second.ci_high, 5);
  EXPECT_EQ(rows[0].second.commit, "0123456789ab");
  EXPECT_EQ(rows[0].second.time, "2026-01-05T00:00:00Z");
  // --commit and --commit-time win; the CI variables apply only to live points.
  ::setenv("GITHUB_SHA", "feedbeef", 1);
  ctx.commit_time = "2026-02-01T00:00:00Z";
  EXPECT_EQ(points_from_run(run, "r", ctx)[0].second.commit, "0123456789ab");
  ctx.live = true;
  EXPECT_EQ(points_from_run(run, "r", ctx)[0].second.commit, "feedbeef");
  EXPECT_EQ(points_from_run(run, "r", ctx)[0].second.time, "2026-02-01T00:00:00Z");
  ctx.commit = "cafe";
  EXPECT_EQ(points_from_run(run, "r", ctx)[0].second.commit, "cafe");
  ::unsetenv("GITHUB_SHA");
  EXPECT_EQ(suite_of(""), "run");
  EXPECT_EQ(suite_of("profiles/nightly.toml"), "nightly");
}

// A stored series with a 10% slowdown 3 commits from the end, and one with an improvement.
TEST(HistoryCheck, RegressionInTheNewestCommitsFailsTheCheck) {
  HistorySeries slow, fast;
  slow.key = key("slow");
  fast.key = key("fast");
  const auto xs = testing::step_series(7, 30, 100, 1, {{26, 10}});
  const auto ys = testing::step_series(8, 30, 100, 1, {{10, -10}});
  for (int i = 0; i < 30; ++i) {
    const std::string c = "c" + std::to_string(i);
    slow.points.push_back(point(c, "t", xs[std::size_t(i)], c));
    fast.points.push_back(point(c, "t", ys[std::size_t(i)], c));
  }
  CheckOptions o;
  o.recent = 5;
  const CheckResult r = check_history({slow, fast}, o);
  EXPECT_EQ(r.series, 2);
  EXPECT_EQ(r.points, 60);
  ASSERT_EQ(r.change_points.size(), 2u);
  const ChangePointReport& s = r.change_points[0];
  EXPECT_EQ(s.series, "ci-smoke / slow / tpot_ms");
  EXPECT_EQ(s.index, 26);
  EXPECT_EQ(s.commit, "c26");
  EXPECT_EQ(s.previous_commit, "c25");
  EXPECT_NEAR(s.ratio, 1.1, 0.02);
  EXPECT_EQ(s.points_before, 26);
  EXPECT_EQ(s.points_after, 4);
  EXPECT_TRUE(s.regression);
  EXPECT_TRUE(s.recent);
  const ChangePointReport& f = r.change_points[1];
  EXPECT_EQ(f.index, 10);
  EXPECT_FALSE(f.regression);
  EXPECT_FALSE(f.recent);
  EXPECT_TRUE(r.failed());
  o.recent = 3;  // the change is 4 commits back: no longer recent
  EXPECT_FALSE(check_history({slow, fast}, o).failed());
  // For throughput (higher is better) the same rise is an improvement.
  slow.key.higher_is_better = true;
  o.recent = 5;
  EXPECT_FALSE(check_history({slow}, o).failed());
  // A series of unknown direction (CSV) follows --higher-is-better.
  slow.key.higher_is_better.reset();
  EXPECT_TRUE(check_history({slow}, o).failed());
  o.higher_is_better = true;
  EXPECT_FALSE(check_history({slow}, o).failed());
  // --min-change hides changes smaller than it.
  o.higher_is_better = false;
  o.min_change = 0.2;
  EXPECT_TRUE(check_history({slow}, o).change_points.empty());
}

}  // namespace
}  // namespace llmbench
