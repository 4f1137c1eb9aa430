// `llmbench report` on serving results: two real `llmbench load` runs of multi-turn sessions
// (tests/fixtures/load/short_turns.jsonl: 4 sessions of 4 turns, short enough for tiny's
// 256-token context) against `llmbench serve --model tiny` with prefix caching on and off,
// scraping its /metrics, into one database. Checks that each load run gets its own section
// (nothing merged), that DB:RUN / DB:load:N pick one, the latency-against-throughput points,
// TTFT per turn against the bundled load_ttft_by_turn query, the latency distributions (the ITL
// CDF against load_itl_distribution) and the summary table against load_summary, the request
// timeline and the server-metric charts under it (bounded), the compare view's deltas, the
// one-line refusals (exit 2), and the page in headless Chromium (summary table, no clipped
// interval, no overlapping tick labels).
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <unistd.h>

#include "../cli/llmbench_process.h"
#include "kernels/common/error.h"
#include "report_browser.h"
#include "tools/report/report_data.h"
#include "tools/store/sqlite_db.h"

namespace {

using json = nlohmann::ordered_json;
namespace fs = std::filesystem;

class ReportServing : public testing::Test {
 protected:
  static fs::path dir() {
    return fs::path(LLMBENCH_TEST_SCRATCH) / "report_serving" / std::to_string(getpid());
  }
  static fs::path db() { return dir() / "serving.db"; }
  static void load(const std::string& label, const std::string& serve_flags) {
    const std::string server =
        std::string(LLMBENCH_BIN) + " serve --model tiny --port {port}" + serve_flags;
    auto r = llmbench_test::run_llmbench(
        "load --server-cmd '" + server + "' --model tiny --label " + label +
            " --dataset-name jsonl --dataset-path " LLMBENCH_FIXTURES "/load/short_turns.jsonl "
            "--concurrency 1,2 --think-time-ms 30 --server-metrics auto --metrics-interval-ms 50 "
            "--quiet --db " +
            db().string(),
        dir() / label);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  static void SetUpTestSuite() {
    fs::remove_all(dir());
    fs::create_directories(dir());
    load("cache-on", "");
    load("cache-off", " --no-prefix-caching");
  }
  static json report(const std::string& db_arg, const std::string& db2 = "") {
    return llmbench::build_report_data({db_arg, {}, db2});
  }
  static const json* find_chart(const json& data, const std::string& id) {
    for (const auto& s : data["sections"])
      for (const auto& c : s["charts"])
        if (c["id"] == id) return &c;
    return nullptr;
  }
  static const json* find_section(const json& data, const std::string& id) {
    for (const auto& s : data["sections"])
      if (s["id"] == id) return &s;
    return nullptr;
  }
  // One SQL value (a double) of the serving database.
  static double sql(const std::string& q) {
    llmbench::Db d(db().string(), llmbench::Db::Mode::kReadOnly);
    auto st = d.prepare(q);
    EXPECT_TRUE(st.step()) << q;
    return st.column_double(0);
  }
};

TEST_F(ReportServing, EachLoadRunIsItsOwnSection) {
  const json data = report(db().string());
  ASSERT_NE(find_section(data, "serving_1_section"), nullptr) << data.dump().substr(0, 2000);
  ASSERT_NE(find_section(data, "serving_2_section"), nullptr);
  for (int run : {1, 2}) {
    const std::string pre = "serving_" + std::to_string(run) + "_";
    const json* ttft = find_chart(data, pre + "ttft");
    ASSERT_NE(ttft, nullptr) << run;
    // Only this run's levels: two (c1, c2), one series, nothing of the other run.
    EXPECT_EQ((*ttft)["table"]["rows"].size(), 2u) << run;
    for (const auto& ds : (*ttft)["config"]["data"]["datasets"])
      EXPECT_EQ(ds["data"].size(), 2u) << ds["label"];
    EXPECT_EQ((*ttft)["config"]["data"]["datasets"].size(), 2u) << "median and p99 of one series";
    for (const char* id : {"tpot", "itl", "ttft_tput", "tpot_tput", "turns", "timeline",
                           "ttft_cdf", "tpot_cdf", "itl_cdf"})
      EXPECT_NE(find_chart(data, pre + id), nullptr) << pre << id << " " << data["omitted"];
  }
  // The facts name each run's own label.
  EXPECT_NE(find_section(data, "serving_1_section")->dump().find("cache-on"), std::string::npos);
  EXPECT_NE(find_section(data, "serving_2_section")->dump().find("cache-off"), std::string::npos);
}

TEST_F(ReportServing, RunSelectorPicksOneLoadRun) {
  for (const std::string arg : {":2", ":load:2"}) {
    const json data = report(db().string() + arg);
    EXPECT_EQ(find_section(data, "serving_1_section"), nullptr) << arg;
    ASSERT_NE(find_section(data, "serving_2_section"), nullptr) << arg;
    EXPECT_NE(data["title"].get<std::string>().find("load run 2"), std::string::npos);
  }
  // --run is DB:N.
  const json by_flag = llmbench::build_report_data({db().string(), 1, ""});
  EXPECT_NE(find_section(by_flag, "serving_1_section"), nullptr);
  EXPECT_EQ(find_section(by_flag, "serving_2_section"), nullptr);
  EXPECT_THROW(report(db().string() + ":3"), llmbench::BadInput);
  EXPECT_THROW(report(db().string() + ":run:1"), llmbench::BadInput);
}

TEST_F(ReportServing, LatencyAgainstThroughputIsOnePointPerLevel) {
  const json data = report(db().string() + ":1");
  const json* c = find_chart(data, "serving_1_ttft_tput");
  ASSERT_NE(c, nullptr);
  const auto& med = (*c)["config"]["data"]["datasets"][0];
  ASSERT_EQ(med["data"].size(), 2u);
  // In load order (c1, c2); x = output tokens / level duration, y = the median TTFT.
  int i = 0;
  for (const char* level : {"c1 jsonl", "c2 jsonl"}) {
    const std::string where = " FROM load_request q JOIN load_level l ON l.id = q.level_id WHERE "
                              "l.load_run_id = 1 AND q.status = 'ok' AND l.level = '" +
                              std::string(level) + "'";
    const double tput = sql("SELECT SUM(q.output_tokens) / (MAX(l.duration_ns) / 1e9)" + where);
    const auto& p = med["data"][i++];
    EXPECT_NEAR(p["x"].get<double>(), tput, tput * 1e-3) << level;
    const json rows = (*c)["table"]["rows"];
    EXPECT_EQ(rows[i - 1][1], level);
  }
}

TEST_F(ReportServing, TurnsDistributionsAndSummaryEqualTheBundledQueries) {
  auto r = llmbench_test::run_llmbench("query " + db().string() +
                                           " load_ttft_by_turn --param load_run_id=2 --format json",
                                       dir() / "query");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto want = nlohmann::json::parse(r.out);
  const json data = report(db().string() + ":2");
  const json* c = find_chart(data, "serving_2_turns");
  ASSERT_NE(c, nullptr);
  const json& rows = (*c)["table"]["rows"];
  ASSERT_EQ(rows.size(), want.size());
  ASSERT_EQ(rows.size(), 8u) << "two levels x four turns";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i][1].get<int>(), want[i]["turn_index"].get<int>());
    const double p50 = want[i]["ttft_ms_p50"];
    EXPECT_NEAR(rows[i][3].get<double>(), p50, p50 * 1e-3) << i;
  }
  // The ITL distribution is load_itl_distribution's cumulative share, bucket by bucket, each
  // level's curve ending at 1.
  const json* itl = find_chart(data, "serving_2_itl_cdf");
  ASSERT_NE(itl, nullptr);
  std::smatch m;
  const std::string title = (*itl)["title"];
  ASSERT_TRUE(std::regex_search(title, m, std::regex(R"(, ([0-9.e-]+) ms buckets)"))) << title;
  r = llmbench_test::run_llmbench("query " + db().string() + " load_itl_distribution --param "
                                  "load_run_id=2 --param bucket_ms=" + m[1].str() +
                                  " --format json", dir() / "query");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto hist = nlohmann::json::parse(r.out);
  const json& irows = (*itl)["table"]["rows"];
  ASSERT_EQ(irows.size(), hist.size());
  for (std::size_t i = 0; i < hist.size(); ++i) {
    EXPECT_EQ(irows[i][0], hist[i]["level"].get<std::string>());
    EXPECT_NEAR(irows[i][2].get<double>(), hist[i]["cumulative_share"].get<double>(), 1e-3);
  }
  for (const auto& ds : (*itl)["config"]["data"]["datasets"])
    EXPECT_DOUBLE_EQ(ds["data"].back()["y"].get<double>(), 1.0) << ds["label"];
  // TTFT's CDF: one curve per level, from 0 to every ok request (1).
  const json* ttft = find_chart(data, "serving_2_ttft_cdf");
  ASSERT_NE(ttft, nullptr);
  ASSERT_EQ((*ttft)["config"]["data"]["datasets"].size(), 2u);
  for (const auto& ds : (*ttft)["config"]["data"]["datasets"]) {
    EXPECT_EQ(ds["data"].front()["y"], 0);
    EXPECT_DOUBLE_EQ(ds["data"].back()["y"].get<double>(), 1.0);
  }
  // The page opens with load_summary's rows.
  r = llmbench_test::run_llmbench("query " + db().string() +
                                      " load_summary --param load_run_id=2 --format json",
                                  dir() / "query");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto summary = nlohmann::json::parse(r.out);
  const json& sm = data["summary"];
  ASSERT_EQ(sm["rows"].size(), summary.size());
  for (std::size_t i = 0; i < summary.size(); ++i) {
    EXPECT_EQ(sm["rows"][i][0], summary[i]["level"].get<std::string>());
    EXPECT_EQ(sm["rows"][i][5],
              fmt::format("{:.2f}", summary[i]["ttft_ms_p50"].get<double>()));
  }
}

TEST_F(ReportServing, TimelineAndServerMetricsShareTheTimeAxis) {
  const json data = report(db().string() + ":1");
  const json* t = find_chart(data, "serving_1_timeline");
  ASSERT_NE(t, nullptr);
  // Every request drawn (32: two levels of 16): one table row each, and a bar of 3 points
  // (start, end, gap) per ok request in the waiting and streaming datasets.
  const double requests = sql("SELECT COUNT(*) FROM load_request q JOIN load_level l ON "
                              "l.id = q.level_id WHERE l.load_run_id = 1");
  EXPECT_EQ(double((*t)["table"]["rows"].size()), requests);
  EXPECT_EQ(double((*t)["config"]["data"]["datasets"][0]["data"].size()), 3 * requests);
  const json& x = (*t)["config"]["options"]["scales"]["x"];
  // The server metrics that changed, one chart per family, on the same x range.
  std::set<std::string> families;
  for (const auto& s : data["sections"])
    for (const auto& c : s["charts"]) {
      const std::string id = c["id"];
      if (id.rfind("serving_1_metric_", 0) != 0) continue;
      EXPECT_EQ(c["config"]["options"]["scales"]["x"]["max"], x["max"]) << id;
      EXPECT_EQ(c["config"]["options"]["scales"]["x"]["min"], x["min"]) << id;
      const std::string title = c["title"];
      families.insert(title.substr(14, title.find(' ', 14) - 14));
    }
  // Tokens were generated between scrapes: the counter's rate is drawn. Gauges such as
  // llmbench_requests_running are drawn when a scrape saw them change (timing: not asserted).
  EXPECT_TRUE(families.count("llmbench_generation_tokens_total")) << json(families).dump();
  EXPECT_LE(families.size(), 8u);
  EXPECT_FALSE(families.count("llmbench_kv_blocks_total")) << "constant: named, not drawn";
  EXPECT_NE(data["omitted"].dump().find("llmbench_kv_blocks_total (constant)"), std::string::npos);
}

TEST_F(ReportServing, MetricFamiliesComeFromWhatWasScraped) {
  // Another server's names, as its /metrics would give them (vLLM's here): chosen by their
  // Prometheus type and suffixes, never by a list of names.
  const fs::path other = dir() / "other.db";
  fs::copy_file(db(), other, fs::copy_options::overwrite_existing);
  {
    llmbench::Db d(other.string(), llmbench::Db::Mode::kReadWrite);
    d.exec("DELETE FROM counter WHERE track_id IN (SELECT id FROM track WHERE load_level_id IS "
           "NOT NULL); DELETE FROM track WHERE load_level_id IS NOT NULL;");
    const char* tracks[][2] = {{"vllm:num_requests_running{model_name=\"m\"}", "gauge"},
                               {"vllm:kv_cache_usage_perc{model_name=\"m\"}", "gauge"},
                               {"vllm:prompt_tokens_total{model_name=\"m\"}", "counter"},
                               {"vllm:e2e_request_latency_seconds_bucket{le=\"1.0\"}", "histogram"},
                               {"vllm:num_preemptions_total", ""}};
    for (const auto& [name, type] : tracks) {
      auto ins = d.prepare("INSERT INTO track (name, type, load_level_id, metric_type) SELECT ?, "
                           "'counter', id, NULLIF(?, '') FROM load_level WHERE load_run_id = 1");
      ins.bind(1, std::string(name));
      ins.bind(2, std::string(type));
      ins.run();
    }
    // Ten samples per track, 50 ms apart, rising (the counters) or going up and down.
    d.exec("WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 9) "
           "INSERT INTO counter (ts, track_id, value) SELECT n.i * 50000000, t.id, "
           "CASE WHEN t.name LIKE '%_total%' THEN n.i * 10 ELSE n.i % 3 END "
           "FROM n, track t WHERE t.load_level_id IS NOT NULL");
  }
  const json data = report(other.string() + ":1");
  std::map<std::string, std::string> drawn;  // family -> its chart's y-axis title
  for (const auto& s : data["sections"])
    for (const auto& c : s["charts"]) {
      const std::string title = c["title"];
      if (title.rfind("Server metric ", 0) != 0) continue;
      drawn[title.substr(14, title.find(' ', 14) - 14)] =
          c["config"]["options"]["scales"]["y"]["title"]["text"];
      // Two levels of ten samples: 20 gauge points, or 18 rates (none across the level gap).
      EXPECT_EQ(c["table"]["rows"].size(), title.find("counter") != std::string::npos ? 18u : 20u)
          << title;
    }
  EXPECT_EQ(drawn.size(), 4u) << json(drawn).dump();
  EXPECT_EQ(drawn["vllm:num_requests_running"], "value (as exposed)");
  EXPECT_EQ(drawn["vllm:kv_cache_usage_perc"], "value (as exposed)");
  EXPECT_EQ(drawn["vllm:prompt_tokens_total"], "rate (per second)");
  EXPECT_EQ(drawn["vllm:num_preemptions_total"], "rate (per second)") << "no type: by _total";
  EXPECT_NE(data["omitted"].dump().find("e2e_request_latency_seconds_bucket"), std::string::npos);
}

TEST_F(ReportServing, LargeRunsAreDownsampled) {
  // A copy with 640 more requests and 2000 more samples of one gauge: the drawing is bounded.
  const fs::path big = dir() / "big.db";
  fs::copy_file(db(), big, fs::copy_options::overwrite_existing);
  {
    llmbench::Db d(big.string(), llmbench::Db::Mode::kReadWrite);
    d.exec("CREATE TEMP TABLE t AS SELECT * FROM load_request WHERE level_id IN (SELECT id FROM "
           "load_level WHERE load_run_id = 1)");
    for (int k = 0; k < 20; ++k)
      d.exec("UPDATE t SET id = id + 100000; INSERT INTO load_request SELECT * FROM t;");
    d.exec("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000) "
           "INSERT INTO counter (ts, track_id, value) SELECT i * 1000, (SELECT t.id FROM track t "
           "JOIN load_level l ON l.id = t.load_level_id WHERE l.load_run_id = 1 AND t.name = "
           "'llmbench_requests_running' LIMIT 1), i % 7 FROM n");
  }
  const json data = report(big.string() + ":1");
  const json* t = find_chart(data, "serving_1_timeline");
  ASSERT_NE(t, nullptr);
  EXPECT_LE((*t)["table"]["rows"].size(), 500u);
  EXPECT_GE((*t)["table"]["rows"].size(), 300u);
  EXPECT_NE((*t)["title"].get<std::string>().find("every 2nd of 672 requests drawn"),
            std::string::npos)
      << (*t)["title"];
  bool found = false;
  for (const auto& s : data["sections"])
    for (const auto& c : s["charts"])
      if (c["title"].get<std::string>().find("llmbench_requests_running") != std::string::npos) {
        found = true;
        EXPECT_LE(c["table"]["rows"].size(), 400u);
        EXPECT_GE(c["table"]["rows"].size(), 200u);
      }
  EXPECT_TRUE(found);
}

TEST_F(ReportServing, CompareViewOfTwoLoadRuns) {
  const json data = report(db().string() + ":load:1", db().string() + ":load:2");
  const json* s = find_section(data, "compare_serving");
  ASSERT_NE(s, nullptr);
  EXPECT_NE((*s)["note"].get<std::string>().find("2 levels matched"), std::string::npos);
  const json* d = find_chart(data, "compare_serving_delta");
  ASSERT_NE(d, nullptr);
  ASSERT_EQ((*d)["table"]["rows"].size(), 16u) << "2 levels x 8 figures";
  // Each row: level, figure, base, cand, cand - base, (cand / base - 1) x 100.
  for (const auto& row : (*d)["table"]["rows"]) {
    if (row[2].is_null() || row[3].is_null()) continue;
    const double b = row[2], c = row[3];
    EXPECT_NEAR(row[4].get<double>(), c - b, 1e-3 * std::max(std::abs(c - b), 1e-3)) << row;
    if (b == 0) continue;
    const double pct = (c / b - 1) * 100;
    EXPECT_NEAR(row[5].get<double>(), pct, 1e-3 * std::max(std::abs(pct), 1.0)) << row;
  }
  // The base's TTFT p50 at c2 is the one its own section shows.
  const json* own = find_chart(data, "serving_1_ttft");
  ASSERT_NE(own, nullptr);
  for (const auto& row : (*d)["table"]["rows"]) {
    if (row[0] == "c2 jsonl" && row[1] == "ttft_ms_p50") {
      EXPECT_EQ(row[2], (*own)["table"]["rows"][1][2]);
    }
  }
  // Both runs' curves on one chart, both runs' turns, and compare's verdicts.
  const json* curves = find_chart(data, "compare_serving_ttft_tput");
  ASSERT_NE(curves, nullptr);
  std::string labels;
  for (const auto& ds : (*curves)["config"]["data"]["datasets"])
    labels += ds["label"].get<std::string>() + "|";
  EXPECT_NE(labels.find("base: "), std::string::npos) << labels;
  EXPECT_NE(labels.find("cand: "), std::string::npos) << labels;
  const json* turns = find_chart(data, "compare_serving_turns");
  ASSERT_NE(turns, nullptr);
  EXPECT_EQ((*turns)["table"]["rows"].size(), 16u);
  ASSERT_NE(find_section(data, "compare"), nullptr);
  EXPECT_NE(find_chart(data, "compare"), nullptr);
  // The CLI spelling: --compare.
  const fs::path html = dir() / "compare.html";
  auto r = llmbench_test::run_llmbench("report " + db().string() + ":load:1 --compare " +
                                           db().string() + ":load:2 --quiet -o " + html.string(),
                                       dir() / "cli");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(html));
}

TEST_F(ReportServing, BadRunIsOneLineExit2) {
  // An engine run in the same database: run 1 and load run 1 both exist.
  const fs::path mixed = dir() / "mixed.db";
  fs::copy_file(db(), mixed, fs::copy_options::overwrite_existing);
  auto r = llmbench_test::run_llmbench("run --model tiny --batch 1 --prompt-len 8 "
                                       "--max-new-tokens 2 --repeat 1 --quiet --db " +
                                           mixed.string() + " --peak-bw-gbps 20 --peak-tflops 0.1",
                                       dir() / "mixed");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path out = dir() / "bad.html";
  struct Case {
    std::string args, says;
  };
  const std::vector<Case> cases = {
      {db().string() + ":7", "has no run 7 and no load run 7"},
      {db().string() + ":load:9", "has no load run 9"},
      {mixed.string() + ":1", "is ambiguous"},
      {mixed.string() + ":run:1 --compare " + mixed.string() + ":load:1", "names a load run"},
      {mixed.string() + ":load:1 --compare " + mixed.string() + ":run:1", "names an engine run"},
  };
  for (const Case& c : cases) {
    r = llmbench_test::run_llmbench("report " + c.args + " -o " + out.string(), dir() / "bad");
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(out));
  }
  // Said explicitly, each works.
  for (const std::string arg : {":run:1", ":load:1"}) {
    r = llmbench_test::run_llmbench("report " + mixed.string() + arg + " --quiet -o " +
                                        out.string(), dir() / "bad");
    EXPECT_EQ(r.exit_code, 0) << arg << r.err;
  }
}

TEST_F(ReportServing, RendersInHeadlessChromium) {
  const std::string browser = llmbench_test::find_browser();
  if (browser.empty()) GTEST_SKIP() << llmbench_test::kNoBrowser;
  const fs::path work = dir() / "browser";
  fs::create_directories(work);
  const fs::path html = work / "serving.html";
  auto r = llmbench_test::run_llmbench("report " + db().string() + ":load:1 " + db().string() +
                                           ":load:2 -o " + html.string(),
                                       work / "cli");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path png = work / "serving.png";
  const std::string dom = llmbench_test::run_browser(browser, html, work, png, "1200,6000");
  const auto st = llmbench_test::page_status(dom);
  ASSERT_TRUE(st.done) << "the page did not finish rendering; browser stderr:\n"
                       << llmbench_test::slurp(work / "browser.err").substr(0, 4000);
  const auto [charts, series] = llmbench_test::count_charts(
      report(db().string() + ":load:1", db().string() + ":load:2"));
  EXPECT_EQ(st.charts, charts);
  EXPECT_EQ(st.series, series);
  EXPECT_EQ(st.blank, 0) << "charts with an empty canvas";
  EXPECT_EQ(st.errors, 0) << "console errors:" << st.messages;
  EXPECT_EQ(st.resources, 0) << "the page loaded resources";
  EXPECT_EQ(st.overlaps, 0) << "tick labels drawn over each other";
  EXPECT_EQ(st.clipped, 0) << "points or bars outside their plot area";
  EXPECT_EQ(llmbench_test::canvas_attr(dom, "compare", "data-clipped"), 0);
  // The summary table (compare's verdicts) opens the page; the distributions are drawn.
  const json data = report(db().string() + ":load:1", db().string() + ":load:2");
  EXPECT_EQ(llmbench_test::summary_rows(dom), 1 + int(data["summary"]["rows"].size()));
  EXPECT_LT(dom.find("summary-table"), dom.find("<canvas"));
  for (const char* id : {"serving_1_ttft_cdf", "serving_1_tpot_cdf", "serving_1_itl_cdf"})
    EXPECT_EQ(llmbench_test::canvas_attr(dom, id, "data-clipped"), 0) << id;
  const std::string err = llmbench_test::slurp(work / "browser.err");
  EXPECT_EQ(err.find(":CONSOLE("), std::string::npos) << err.substr(0, 4000);
  ASSERT_TRUE(fs::exists(png));
  std::cout << "screenshot: " << png << "\n";
}

}  // namespace
