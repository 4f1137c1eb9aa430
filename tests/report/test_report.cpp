// `llmbench report`: the data each chart receives, checked against the database of a real tiny
// sweep (batch 1,2,4, traced with --trace ops), the pages for databases with missing pieces, a
// copy with a stale cached peak planted (a utilisation above 1, ops above their roof: drawn as
// warnings with what to do), and an end-to-end check in headless Chromium (no console errors,
// no network request, every chart drawn, the summary table, the timeline's names and layers,
// the roofline's labels, no clipped compare interval, no overlapping tick labels, screenshots).
// Data tests link llmbench_report; the fixtures come from the llmbench binary.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <unistd.h>

#include "../cli/llmbench_process.h"
#include "report_browser.h"
#include "engine/model/cpu_backend.h"
#include "kernels/common/error.h"
#include "tools/report/report_data.h"
#include "tools/report/report_html.h"
#include "tools/store/sqlite_db.h"

namespace {

using json = nlohmann::ordered_json;
namespace fs = std::filesystem;

const char* kPeaks = " --peak-bw-gbps 20 --peak-tflops 0.1";

// One tiny traced sweep, made once per test process (ctest runs each test in its own process,
// in parallel: each gets its own folder).
class Report : public testing::Test {
 protected:
  static fs::path dir() {
    return fs::path(LLMBENCH_TEST_SCRATCH) / "report" / std::to_string(getpid());
  }
  static fs::path sweep_db() { return dir() / "sweep.db"; }
  static void SetUpTestSuite() {
    fs::remove_all(dir());
    fs::create_directories(dir());
    auto r = llmbench_test::run_llmbench(
        "run --model tiny --batch 1,2,4 --prompt-len 16 --max-new-tokens 4 --repeat 3 "
        "--trace ops --quiet --db " + sweep_db().string() + kPeaks, dir() / "sweep");
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  static const json& sweep_data() {
    static const json data = llmbench::build_report_data({sweep_db().string(), {}, ""});
    return data;
  }
  static const json* find_chart(const json& data, const std::string& id) {
    for (const auto& s : data["sections"])
      for (const auto& c : s["charts"])
        if (c["id"] == id) return &c;
    return nullptr;
  }
  // A copy of the sweep whose batch-4 case (the traced one the op charts show) divided by a
  // stale cached peak, as a busy machine leaves it: MFU 1.83, roof_check naming it, and a
  // compute roof a thousandth of the real one, so its prefill GEMMs sit above the roof.
  static fs::path stale_db() {
    const fs::path p = dir() / "stale.db";
    if (fs::exists(p)) return p;
    fs::copy_file(sweep_db(), p);
    llmbench::Db db(p.string(), llmbench::Db::Mode::kReadWrite);
    db.exec("UPDATE bench_case SET mfu = 1.83, roof_check = 'GEMM probe +90% vs cached peak; "
            "MFU 1.83 > 1', mfu_peak_tflops = mfu_peak_tflops / 1000 WHERE batch = 4");
    return p;
  }
  static double sql(const fs::path& db_path, const std::string& q) {
    llmbench::Db d(db_path.string(), llmbench::Db::Mode::kReadOnly);
    auto st = d.prepare(q);
    EXPECT_TRUE(st.step()) << q;
    return st.column_double(0);
  }
};

TEST_F(Report, EveryChartHasTitleAxesWithUnitsAndATable) {
  int charts = 0;
  for (const auto& s : sweep_data()["sections"])
    for (const auto& c : s["charts"]) {
      ++charts;
      EXPECT_FALSE(c["title"].get<std::string>().empty());
      for (const char* ax : {"x", "y"}) {
        const std::string t = c["config"]["options"]["scales"][ax]["title"]["text"];
        EXPECT_FALSE(t.empty()) << c["id"];
      }
      // Units in parentheses on every numeric axis.
      for (const char* ax : {"x", "y"}) {
        const auto& a = c["config"]["options"]["scales"][ax];
        if (a["type"] == "category") continue;
        EXPECT_NE(a["title"]["text"].get<std::string>().find("("), std::string::npos)
            << c["id"] << " " << ax;
      }
      EXPECT_FALSE(c["table"]["rows"].empty()) << c["id"];
      EXPECT_FALSE(c["config"]["data"]["datasets"].empty()) << c["id"];
    }
  EXPECT_EQ(charts, 9);
  for (const char* id : {"ttft", "tpot", "throughput_latency", "utilisation", "roofline",
                         "breakdown_prefill", "breakdown_decode", "layers", "timeline"})
    EXPECT_NE(find_chart(sweep_data(), id), nullptr) << id;
}

TEST_F(Report, LatencyChartsCarryTheCaseColumns) {
  llmbench::Db db(sweep_db().string(), llmbench::Db::Mode::kReadOnly);
  std::map<int, std::array<double, 3>> ttft;  // batch -> p10, p50, p90
  auto q = db.prepare("SELECT batch, ttft_ms_p10, ttft_ms_p50, ttft_ms_p90 FROM bench_case");
  while (q.step()) ttft[int(q.column_int(0))] = {q.column_double(1), q.column_double(2),
                                                 q.column_double(3)};
  ASSERT_EQ(ttft.size(), 3u);
  const json& c = *find_chart(sweep_data(), "ttft");
  const auto& ds = c["config"]["data"]["datasets"];
  std::map<std::string, const json*> by_label;
  for (const auto& d : ds) by_label[d["label"]] = &d;
  const json* med = nullptr;
  for (const auto& [l, d] : by_label)
    if (l.find("median") != std::string::npos) med = d;
  ASSERT_NE(med, nullptr);
  ASSERT_EQ((*med)["data"].size(), 3u);
  for (const auto& p : (*med)["data"]) {
    const int b = p["x"];
    EXPECT_NEAR(p["y"].get<double>(), ttft[b][1], ttft[b][1] * 1e-3) << b;
  }
  // The band: one p10 and one p90 dataset (filled between), and the p99 line.
  int lo = 0, hi = 0;
  for (const auto& d : ds) {
    if (d.value("band", "") == "lo") ++lo;
    if (d.value("band", "") == "hi") ++hi;
  }
  EXPECT_EQ(lo, 1);
  EXPECT_EQ(hi, 1);
  EXPECT_EQ(c["table"]["rows"].size(), 3u);
}

TEST_F(Report, RooflinePointsAreFlopsOverBytesAndFlopsOverTime) {
  llmbench::Db db(sweep_db().string(), llmbench::Db::Mode::kReadOnly);
  auto q = db.prepare(
      "SELECT SUM(flops) * 1.0 / SUM(bytes), SUM(flops) * 1.0 / SUM(dur) FROM event WHERE "
      "case_id = (SELECT id FROM bench_case WHERE batch = 4) AND name = ? AND phase = 'decode' "
      "AND flops > 0 AND bytes > 0 AND dur > 0");
  const json& c = *find_chart(sweep_data(), "roofline");
  bool roof = false;
  int points = 0;
  for (const auto& d : c["config"]["data"]["datasets"]) {
    if (d.value("roof", false)) {
      roof = true;
      // The ceiling: bandwidth slope then the flat compute roof at 0.1 TFLOP/s = 100 GFLOP/s.
      EXPECT_NEAR(d["data"].back()["y"].get<double>(), 100.0, 0.1);
      continue;
    }
    if (d["label"] != "ops, decode") continue;
    for (const auto& p : d["data"]) {
      q.reset();
      q.bind(1, p["name"].get<std::string>());
      ASSERT_TRUE(q.step());
      EXPECT_NEAR(p["x"].get<double>(), q.column_double(0), q.column_double(0) * 1e-3);
      EXPECT_NEAR(p["y"].get<double>(), q.column_double(1), q.column_double(1) * 1e-3);
      ++points;
    }
  }
  EXPECT_TRUE(roof);
  EXPECT_GT(points, 3);
  // Every point is named (the page draws the names beside the points) and the roof says 100%.
  EXPECT_TRUE(c.value("pointLabels", false));
  EXPECT_NE(c["roofLabel"]["text"].get<std::string>().find("100%"), std::string::npos);
  for (const auto& d : c["config"]["data"]["datasets"]) {
    if (d.value("roof", false)) {
      EXPECT_EQ(d["label"].get<std::string>().rfind("100% roof", 0), 0u) << d["label"];
      continue;
    }
    // Above its roof exactly when drawn in the warning style (--peak-tflops 0.1 is low enough
    // that a fast machine's prefill GEMMs may beat it).
    const double bw = c["ceilings"]["gbps"], tf = c["ceilings"]["tflops"];
    for (const auto& p : d["data"]) {
      EXPECT_FALSE(p["name"].get<std::string>().empty());
      const double roof = std::min(bw * p["x"].get<double>(), tf * 1000), y = p["y"];
      if (std::fabs(y / roof - 1) > 1e-3)
        EXPECT_EQ(d.value("warn", false), y > roof) << p << " roof " << roof;
    }
  }
}

// A stale cached peak (planted): every place that shows the utilisation marks it and says what
// to do -- the summary table's row and warning, the sweep's warning, the utilisation chart's
// warning points, and the roofline's ops above the roof.
TEST_F(Report, StalePeakIsDrawnAsAWarningWithWhatToDo) {
  const json data = llmbench::build_report_data({stale_db().string(), {}, ""});
  const json& sm = data["summary"];
  ASSERT_EQ(sm["rows"].size(), 3u);
  // (The other cases may be flagged too: their read probe against --peak-bw-gbps 20 depends
  // on this machine's minute.)
  EXPECT_NE(sm["flagged"].dump().find("2"), std::string::npos) << sm.dump();
  const json& row = sm["rows"][2];
  EXPECT_EQ(row[0], "tiny fp32 p16 n4 b4");
  EXPECT_EQ(row[8], "1.830!") << "MFU above 1 is never a plain number";
  EXPECT_NE(row[11].get<std::string>().find("MFU 1.83 > 1"), std::string::npos);
  bool said = false;
  for (const auto& w : sm["warnings"])
    said = said || (w.get<std::string>().rfind("tiny fp32 p16 n4 b4 (GEMM probe +90%", 0) == 0 &&
                    w.get<std::string>().find("the cached peak is stale: run `llmbench "
                                              "roofline`") != std::string::npos);
  EXPECT_TRUE(said) << sm["warnings"];
  const json* sweep = nullptr;
  for (const auto& s : data["sections"])
    if (s["id"] == "sweep") sweep = &s;
  ASSERT_NE(sweep, nullptr);
  EXPECT_FALSE(sweep->contains("warnings")) << "said once, in the summary";
  bool warned = false;
  for (const auto& d : (*find_chart(data, "utilisation"))["config"]["data"]["datasets"])
    if (d.value("warn", false)) {
      warned = true;
      ASSERT_EQ(d["data"].size(), 1u);
      EXPECT_DOUBLE_EQ(d["data"][0]["y"].get<double>(), 183);
    }
  EXPECT_TRUE(warned);
  const json& roof = *find_chart(data, "roofline");
  int above = 0;
  for (const auto& d : roof["config"]["data"]["datasets"])
    if (d.value("warn", false)) above = int(d["data"].size());
  EXPECT_GT(above, 0) << "prefill GEMMs above a roof a thousandth of the real one";
  EXPECT_TRUE(roof.value("warn", false));
  EXPECT_NE(roof["note"].get<std::string>().find("llmbench roofline"), std::string::npos);
}

TEST_F(Report, DecodeBreakdownSumsOpTimePerStep) {
  llmbench::Db db(sweep_db().string(), llmbench::Db::Mode::kReadOnly);
  auto q = db.prepare(
      "SELECT c.batch, SUM(e.dur) / 1e3 / COUNT(DISTINCT e.rep * 1000000 + e.step) FROM event e "
      "JOIN bench_case c ON c.id = e.case_id WHERE e.phase = 'decode' AND e.category IS NOT NULL "
      "AND e.category NOT IN ('range', 'sample') GROUP BY c.id ORDER BY c.batch");
  std::vector<double> want;
  while (q.step()) want.push_back(q.column_double(1));
  const json& c = *find_chart(sweep_data(), "breakdown_decode");
  ASSERT_EQ(c["config"]["data"]["labels"].size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    double sum = 0;
    for (const auto& d : c["config"]["data"]["datasets"]) sum += d["data"][i].get<double>();
    EXPECT_NEAR(sum, want[i], want[i] * 0.01) << i;
  }
  EXPECT_TRUE(c["config"]["options"]["scales"]["y"]["stacked"].get<bool>());
}

TEST_F(Report, TimelineShowsOneStepBounded) {
  const json& c = *find_chart(sweep_data(), "timeline");
  size_t events = 0;
  for (const auto& d : c["config"]["data"]["datasets"]) {
    for (const auto& p : d["data"]) {
      EXPECT_LE(p["x"][0].get<double>(), p["x"][1].get<double>());
      EXPECT_GE(p["x"][0].get<double>(), 0);
    }
    events += d["data"].size();
  }
  EXPECT_GT(events, 10u);
  EXPECT_LE(events, 1500u);
  EXPECT_EQ(c["table"]["rows"].size(), events);
  // It says which step it shows, names its bars and shades each decoder layer.
  const std::string title = c["title"];
  EXPECT_NE(title.find("decode step 1 of traced repetition"), std::string::npos) << title;
  EXPECT_TRUE(c.value("names", false));
  const std::string one_case =
      "FROM event WHERE case_id = (SELECT id FROM bench_case WHERE batch = 4) AND phase = "
      "'decode' AND step = 1 AND rep = (SELECT MIN(rep) FROM event WHERE case_id = (SELECT id "
      "FROM bench_case WHERE batch = 4) AND phase = 'decode')";
  const int layers = int(sql(sweep_db(), "SELECT COUNT(DISTINCT layer) " + one_case));
  ASSERT_GT(layers, 0);
  ASSERT_EQ(c["layers"].size(), std::size_t(layers));
  EXPECT_EQ(c["layers"][0]["label"], "L0");
  // Its unit: ms once the step spans more than 10 ms, else µs.
  const double span_ns = sql(sweep_db(), "SELECT MAX(ts + dur) - MIN(ts) " + one_case);
  const std::string x = c["config"]["options"]["scales"]["x"]["title"]["text"];
  EXPECT_NE(x.find(span_ns > 1e7 ? "(ms)" : "(µs)"), std::string::npos) << x << " " << span_ns;
  // And what tracing cost: the traced repetition against the untraced ones.
  const std::string note = c["note"];
  EXPECT_NE(note.find("trace_overhead_tpot"), std::string::npos) << note;
  EXPECT_NE(note.find("untraced repetitions' median TPOT"), std::string::npos) << note;
}

TEST_F(Report, CompareViewWithTwoRuns) {
  // 5 repetitions a side: enough for the Mann-Whitney test to reach alpha = 0.05.
  for (const char* side : {"base", "cand"}) {
    auto r = llmbench_test::run_llmbench(
        "run --model tiny --batch 1,2,4 --prompt-len 16 --max-new-tokens 4 --repeat 5 --quiet "
        "--db " + (dir() / (std::string(side) + ".db")).string() + kPeaks, dir() / side);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  const json data = llmbench::build_report_data(
      {(dir() / "base.db").string(), {}, (dir() / "cand.db").string()});
  const json* cp = find_chart(data, "compare");
  ASSERT_NE(cp, nullptr);
  const json& c = *cp;
  // 3 cases x the CLI's default metrics (ttft, tpot, e2e), each with a ratio and an interval.
  EXPECT_EQ(c["table"]["rows"].size(), 9u);
  EXPECT_EQ(c["config"]["data"]["labels"].size(), 9u);
  for (const auto& row : c["table"]["rows"]) {
    ASSERT_FALSE(row[5].is_null());
    EXPECT_LE(row[6].get<double>(), row[5].get<double>());
    EXPECT_GE(row[7].get<double>(), row[5].get<double>());
  }
  // The same verdicts, headline and warnings as `llmbench compare` on the same two databases.
  const auto cli = llmbench_test::run_llmbench(
      "compare " + (dir() / "base.db").string() + " " + (dir() / "cand.db").string() +
          " --format json",
      dir() / "cli");
  ASSERT_TRUE(cli.exit_code == 0 || cli.exit_code == 1 || cli.exit_code == 3) << cli.err;
  const auto doc = nlohmann::json::parse(cli.out);
  std::map<std::string, std::string> cli_verdicts;
  for (const auto& cc : doc["cases"])
    for (const auto& [metric, m] : cc["metrics"].items())
      cli_verdicts[cc["case"].get<std::string>() + " " + metric] = m["verdict"];
  ASSERT_EQ(cli_verdicts.size(), 9u);
  for (const auto& row : c["table"]["rows"])
    EXPECT_EQ(row[2].get<std::string>(),
              cli_verdicts.at(row[0].get<std::string>() + " " + row[1].get<std::string>()))
        << row.dump();
  const json* section = nullptr;
  for (const auto& sec : data["sections"])
    if (sec["id"] == "compare") section = &sec;
  ASSERT_NE(section, nullptr);
  const std::string note = (*section)["note"];
  const auto table_out = llmbench_test::run_llmbench(
      "compare " + (dir() / "base.db").string() + " " + (dir() / "cand.db").string(),
      dir() / "cli");
  EXPECT_EQ(table_out.out.substr(0, table_out.out.find('\n')), note);
  EXPECT_EQ(note.rfind("llmbench compare: ", 0), 0u) << note;
  EXPECT_EQ(note.back(), ')') << note;
  // The CLI's warnings, once on the page: above the summary table, which opens it.
  EXPECT_EQ(data["summary"]["warnings"], doc["warnings"]);
  EXPECT_NE(data["summary"]["warnings"].dump().find("one run per side"), std::string::npos);
  EXPECT_FALSE(section->contains("warnings"));
  // A forest plot: cases down the y axis, the ratio along a log x axis with a tick at 0%, whose
  // range holds every interval (none clipped), and the threshold band shaded across the plot.
  EXPECT_EQ(c["config"]["options"]["indexAxis"], "y");
  const json& x = c["config"]["options"]["scales"]["x"];
  EXPECT_EQ(x["type"], "logarithmic");
  std::map<double, std::string> ticks;
  for (std::size_t i = 0; i < x["tickValues"].size(); ++i)
    ticks[x["tickValues"][i].get<double>()] = x["tickLabels"][i];
  EXPECT_EQ(ticks.at(1.0), "0%");
  // The threshold's ticks where they clear 0% (RatioAxis.TicksNeverCrowd), labelled as factors.
  if (ticks.count(1.05)) EXPECT_EQ(ticks.at(1.05), "+5%");
  if (ticks.count(0.9524)) EXPECT_EQ(ticks.at(0.9524), "-5%");
  for (const auto& row : c["table"]["rows"]) {
    EXPECT_LE(x["min"].get<double>(), row[6].get<double>()) << row;
    EXPECT_GE(x["max"].get<double>(), row[7].get<double>()) << row;
  }
  EXPECT_EQ(c["band"], json({{"axis", "x"}, {"lo", 0.9524}, {"hi", 1.05}}));
  // The compare view opens the page: both runs' curves, then the verdicts; the summary table
  // lists the same verdicts.
  ASSERT_GE(data["sections"].size(), 2u);
  EXPECT_EQ(data["sections"][0]["id"], "compare_engine");
  EXPECT_EQ(data["sections"][1]["id"], "compare");
  for (const char* id : {"compare_ttft", "compare_tpot", "compare_throughput_latency"}) {
    const json* ch = find_chart(data, id);
    ASSERT_NE(ch, nullptr) << id;
    std::string labels;
    for (const auto& d : (*ch)["config"]["data"]["datasets"]) labels += d["label"].get<std::string>() + "|";
    EXPECT_NE(labels.find("base: tiny fp32 p16 n4"), std::string::npos) << labels;
    EXPECT_NE(labels.find("cand: tiny fp32 p16 n4"), std::string::npos) << labels;
  }
  const json& sm = data["summary"];
  ASSERT_EQ(sm["rows"].size(), 9u);
  EXPECT_EQ(sm["note"], note);
  for (std::size_t i = 0; i < 9; ++i) EXPECT_EQ(sm["rows"][i][6], c["table"]["rows"][i][2]) << i;
}

// The batch axis is log2 with a tick at each batch of the run, never 1.5 or 2.5.
TEST_F(Report, BatchAxesTickAtTheRunsBatches) {
  for (const char* id : {"ttft", "tpot", "utilisation"}) {
    const json& x = (*find_chart(sweep_data(), id))["config"]["options"]["scales"]["x"];
    EXPECT_EQ(x["type"], "logarithmic") << id;
    EXPECT_EQ(x["tickValues"], json({1, 2, 4})) << id;
    EXPECT_EQ(x["tickLabels"], json({"1", "2", "4"})) << id;
  }
}

// A traced bf16 case's roofline is drawn under the bf16 GEMM peak (the roofline cache gives
// every dtype its own), not under fp32's.
TEST_F(Report, Bf16RooflineUsesTheBf16Peak) {
  const fs::path work = dir() / "bf16";
  fs::create_directories(work / "cache");
  nlohmann::json cache;
  cache["cpu|" + llmbench::cpu_model_name() + "|threads=1"] = {
      {"measured_at", "test"},         {"read_gbps_best", 30.0},
      {"fp32_gemm_tflops_best", 0.1},  {"bf16_gemm_tflops_best", 0.3},
      {"fp16_gemm_tflops_best", 0.12}, {"int8_gemm_tflops_best", 0.5},
      {"int4_gemm_tflops_best", 0.6}};
  std::ofstream(work / "cache" / "roofline.json") << cache.dump();
  const fs::path db = work / "bf16.db";
  auto r = llmbench_test::run_llmbench(
      "run --model tiny --dtype bf16 --batch 2 --prompt-len 16 --max-new-tokens 3 --repeat 2 "
      "--threads 1 --trace ops --quiet --db " + db.string(), work);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json data = llmbench::build_report_data({db.string(), {}, ""});
  const json* roof = find_chart(data, "roofline");
  ASSERT_NE(roof, nullptr);
  EXPECT_EQ((*roof)["ceilings"]["dtype"], "bf16");
  EXPECT_DOUBLE_EQ((*roof)["ceilings"]["tflops"].get<double>(), 0.3);
  EXPECT_EQ((*roof)["ceilings"]["gbps_from"], "probed beside the case");
  for (const auto& d : (*roof)["config"]["data"]["datasets"])
    if (d.value("roof", false)) {
      EXPECT_NEAR(d["data"].back()["y"].get<double>(), 300.0, 0.1);  // 0.3 TFLOP/s flat roof
      EXPECT_NE(d["label"].get<std::string>().find("bf16"), std::string::npos);
    }
}

TEST_F(Report, MissingPiecesAreNotedNotFatal) {
  // One untraced case with a single new token: no TPOT, no trace sections.
  auto r = llmbench_test::run_llmbench(
      "run --model tiny --batch 1 --prompt-len 8 --max-new-tokens 1 --repeat 1 --trace off "
      "--quiet --db " + (dir() / "one.db").string() + kPeaks, dir() / "one");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json one = llmbench::build_report_data({(dir() / "one.db").string(), {}, ""});
  EXPECT_EQ(find_chart(one, "tpot"), nullptr);
  EXPECT_EQ(find_chart(one, "roofline"), nullptr);
  // One case: a summary card, not charts of lone dots.
  EXPECT_EQ(find_chart(one, "ttft"), nullptr);
  const json* sweep = nullptr;
  for (const auto& sec : one["sections"])
    if (sec["id"] == "sweep") sweep = &sec;
  ASSERT_NE(sweep, nullptr);
  ASSERT_EQ((*sweep)["cards"].size(), 1u);
  const json& card = (*sweep)["cards"][0];
  EXPECT_EQ(card["title"], "tiny fp32 p8 n1 b1");
  EXPECT_EQ(card["items"][0]["label"], "TTFT, median (ms)");
  EXPECT_NE(card["items"][0]["value"], "n/a");
  EXPECT_EQ(card["items"][1]["value"], "n/a");  // no decode step
  EXPECT_EQ(card["items"][1]["note"], "no decode step (max_new_tokens 1)");
  // The stored precision: TTFT with the field list's 2 decimals of the stored value (a stored
  // 1725.44 is 1725.44, not 4 significant digits' 1725.00).
  EXPECT_EQ(card["items"][0]["value"],
            fmt::format("{:.2f}", sql(dir() / "one.db", "SELECT ttft_ms_p50 FROM bench_case")));
  EXPECT_EQ(one["summary"]["rows"].size(), 1u);
  EXPECT_EQ(one["summary"]["rows"][0][3], card["items"][0]["value"]);
  // A stale peak (planted): the MFU card and the roof check in the warning style, with what to do.
  fs::copy_file(dir() / "one.db", dir() / "one_stale.db", fs::copy_options::overwrite_existing);
  {
    llmbench::Db db((dir() / "one_stale.db").string(), llmbench::Db::Mode::kReadWrite);
    db.exec("UPDATE bench_case SET mfu = 1.8274, roof_check = 'MFU 1.83 > 1'");
  }
  const json stale = llmbench::build_report_data({(dir() / "one_stale.db").string(), {}, ""});
  const json& scard = stale["sections"][1]["cards"][0];
  std::map<std::string, json> items;
  for (const auto& it : scard["items"]) items[it["label"]] = it;
  EXPECT_EQ(items["MFU (% of the dtype's GEMM peak)"]["value"], "182.7");
  EXPECT_TRUE(items["MFU (% of the dtype's GEMM peak)"].value("flag", false));
  EXPECT_TRUE(items["roof check"].value("flag", false));
  // What to do is said once, in the summary above the card.
  EXPECT_FALSE(scard.contains("advice"));
  EXPECT_EQ(stale["summary"]["flagged"], json({0}));
  EXPECT_EQ(stale["summary"]["rows"][0][8], "1.827!");
  EXPECT_NE(stale["summary"]["warnings"].dump().find("run `llmbench roofline`"), std::string::npos);
  const std::string notes = one["omitted"].dump();
  EXPECT_NE(notes.find("--trace ops"), std::string::npos) << notes;

  // An imported trace only: a page, no charts, a note.
  r = llmbench_test::run_llmbench("import chrome " LLMBENCH_FIXTURES
                                  "/torch_1_13_cpu_trace.json --db " +
                                      (dir() / "imp.db").string(),
                                  dir() / "imp");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json imp = llmbench::build_report_data({(dir() / "imp.db").string(), {}, ""});
  EXPECT_TRUE(imp["sections"].empty());
  EXPECT_NE(imp["omitted"].dump().find("no benchmark runs"), std::string::npos);

  // Not a database, an unknown run: BadInput (exit 2 from the CLI).
  EXPECT_THROW(llmbench::build_report_data({(dir() / "nope.db").string(), {}, ""}),
               llmbench::BadInput);
  EXPECT_THROW(llmbench::build_report_data({sweep_db().string(), 99, ""}), llmbench::BadInput);
}

TEST_F(Report, ServingChartsCarryTheLoadSummaryNumbers) {
  // A load sweep against llmbench serve (loopback, an ephemeral port, stopped by load).
  const fs::path db = dir() / "serving.db";
  const std::string server = std::string(LLMBENCH_BIN) + " serve --model tiny --port {port}";
  auto r = llmbench_test::run_llmbench(
      "load --server-cmd '" + server + "' --model tiny --label tiny-cpu --concurrency 1,2 "
      "--num-requests 6 --input-len 16 --output-len 8 --quiet --db " + db.string(),
      dir() / "serving");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Serving results alone: a page with the serving section only.
  const json data = llmbench::build_report_data({db.string(), {}, ""});
  ASSERT_EQ(data["sections"].size(), 1u) << data.dump();
  EXPECT_EQ(data["sections"][0]["id"], "serving_1_section");
  EXPECT_NE(data["omitted"].dump().find("serving results (llmbench load) only"),
            std::string::npos);
  const json* ttft = find_chart(data, "serving_1_ttft");
  ASSERT_NE(ttft, nullptr);
  ASSERT_NE(find_chart(data, "serving_1_tpot"), nullptr);
  ASSERT_NE(find_chart(data, "serving_1_ttft_tput"), nullptr);
  // The medians equal load_summary's (the same SQL functions), level by level.
  r = llmbench_test::run_llmbench("query " + db.string() + " load_summary --format json",
                                  dir() / "serving");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto summary = nlohmann::json::parse(r.out);
  ASSERT_EQ(summary.size(), 2u);
  const json& rows = (*ttft)["table"]["rows"];
  ASSERT_EQ(rows.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(rows[i][1], summary[i]["level"].get<std::string>());
    const double want = summary[i]["ttft_ms_p50"].get<double>();
    EXPECT_NEAR(rows[i][2].get<double>(), want, 1e-3 * want) << i;
  }
  // With a benchmark run in the same database, both.
  r = llmbench_test::run_llmbench("run --model tiny --batch 1,2 --prompt-len 8 --max-new-tokens 2 "
                                  "--repeat 1 --trace off --quiet --db " + db.string() + kPeaks,
                                  dir() / "serving");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json both = llmbench::build_report_data({db.string(), {}, ""});
  EXPECT_NE(find_chart(both, "ttft"), nullptr);
  EXPECT_NE(find_chart(both, "serving_1_ttft"), nullptr);
  // Run 1 and load run 1 both exist: DB:1 is refused as ambiguous; DB:run:1 is the run alone.
  EXPECT_THROW(llmbench::build_report_data({db.string() + ":1", {}, ""}), llmbench::BadInput);
  const json run_only = llmbench::build_report_data({db.string() + ":run:1", {}, ""});
  EXPECT_NE(find_chart(run_only, "ttft"), nullptr);
  EXPECT_EQ(find_chart(run_only, "serving_1_ttft"), nullptr);
}

// Without a database (or a format), report, export and import say what they expect in one
// line, exit 2, as the rest of the CLI does.
TEST(ReportCli, MissingArgumentsNameWhatIsExpected) {
  const struct {
    std::string args, says;
  } cases[] = {
      {"report", "report: expected a result database: llmbench report DB"},
      {"report -o x.html", "report: expected a result database"},
      {"export", "export: expected a subcommand naming the format: chrome (a run's trace"},
      {"export foo", "export: unknown format 'foo': chrome"},
      {"export chrome", "export chrome: expected a result database: llmbench export chrome DB -o"},
      {"export gbench", "export gbench: expected a result database"},
      {"export chrome x.db", "export chrome: expected -o/--output FILE"},
      {"import", "import: expected a format: nsys (an Nsight Systems SQLite export) or chrome"},
      {"import nsys", "import nsys: expected the file to import: llmbench import nsys FILE"},
  };
  for (const auto& c : cases) {
    const auto r = llmbench_test::run_llmbench(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args;
    EXPECT_EQ(r.err.rfind("error: " + c.says, 0), 0u) << c.args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST_F(Report, MissingChartJsIsBadInputNamingThePackage) {
  const fs::path d = dir() / "nochart";
  fs::create_directories(d);
  const std::string cmd = "LLMBENCH_CHARTJS=/nonexistent/chart.min.js " LLMBENCH_BIN " report " +
                          sweep_db().string() + " -o " + (d / "x.html").string() + " 2> " +
                          (d / "err").string();
  const int status = std::system(cmd.c_str());
  EXPECT_EQ(WEXITSTATUS(status), 2);
  EXPECT_NE(llmbench_test::slurp(d / "err").find("libjs-chart.js"), std::string::npos);
  EXPECT_FALSE(fs::exists(d / "x.html"));
}

TEST_F(Report, PageIsSelfContained) {
  const std::string html = llmbench::render_report_html(sweep_data(), "/* chart.js */");
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("href="), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
  EXPECT_NE(html.find("default-src 'none'"), std::string::npos);
  // Data that holds "</script>" cannot close the element.
  json evil = {{"title", "x"}, {"sections", json::array()}, {"omitted", {"</script><b>"}}};
  const std::string page = llmbench::render_report_html(evil, "");
  EXPECT_EQ(page.find("</script><b>"), std::string::npos);
}

// ---- the browser ------------------------------------------------------------------------------

// Two pages: the stale copy alone (summary table, timeline, roofline with warnings) and the
// compare page of the stale copy against the sweep (the compare view first).
TEST_F(Report, RendersInHeadlessChromium) {
  const std::string browser = llmbench_test::find_browser();
  if (browser.empty()) GTEST_SKIP() << llmbench_test::kNoBrowser;
  const fs::path work = dir() / "browser";
  fs::create_directories(work);
  struct Page {
    std::string name, args;
    json data;
  };
  const std::vector<Page> pages = {
      {"report", stale_db().string(), llmbench::build_report_data({stale_db().string(), {}, ""})},
      {"compare", stale_db().string() + " " + sweep_db().string(),
       llmbench::build_report_data({stale_db().string(), {}, sweep_db().string()})}};
  for (const Page& page : pages) {
    SCOPED_TRACE(page.name);
    const fs::path html = work / (page.name + ".html");
    auto r = llmbench_test::run_llmbench("report " + page.args + " -o " + html.string(),
                                         work / "cli");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const fs::path png = work / (page.name + ".png");
    const std::string dom = llmbench_test::run_browser(browser, html, work, png, "1200,5000");
    const auto st = llmbench_test::page_status(dom);
    ASSERT_TRUE(st.done) << "the page did not finish rendering; browser stderr:\n"
                         << llmbench_test::slurp(work / "browser.err").substr(0, 4000);
    const auto [charts, series] = llmbench_test::count_charts(page.data);
    EXPECT_EQ(st.charts, charts);
    EXPECT_EQ(st.series, series);
    EXPECT_EQ(st.blank, 0) << "charts with an empty canvas";
    EXPECT_EQ(st.cards, 0) << "summary cards (a sweep has charts instead)";
    EXPECT_EQ(st.errors, 0) << "console errors:" << st.messages;
    EXPECT_EQ(st.resources, 0) << "the page loaded resources";
    EXPECT_EQ(st.overlaps, 0) << "tick labels drawn over each other";
    EXPECT_EQ(st.clipped, 0) << "points or bars outside their plot area";
    // The summary table opens the page: a header and one row per case or verdict.
    EXPECT_EQ(llmbench_test::summary_rows(dom),
              1 + int(page.data["summary"]["rows"].size()));
    EXPECT_LT(dom.find("summary-table"), dom.find("<canvas")) << "the summary is first";
    // The timeline names its ops in their bars and shades every decoder layer; the roofline
    // names its points.
    EXPECT_GT(llmbench_test::canvas_attr(dom, "timeline", "data-labels"), 4);
    EXPECT_EQ(llmbench_test::canvas_attr(dom, "timeline", "data-layers"),
              int((*find_chart(page.data, "timeline"))["layers"].size()));
    EXPECT_GT(llmbench_test::canvas_attr(dom, "roofline", "data-labels"), 3);
    const std::string err = llmbench_test::slurp(work / "browser.err");
    EXPECT_EQ(err.find(":CONSOLE("), std::string::npos) << err.substr(0, 4000);
    // No debug line is shown: the status element is hidden.
    EXPECT_NE(dom.find("#report-status{display:none}"), std::string::npos);
    ASSERT_TRUE(fs::exists(png));
    EXPECT_GT(fs::file_size(png), 50000u) << "screenshot " << png << " looks empty";
    std::cout << "screenshot: " << png << "\n";
    if (page.name == "compare") {
      // The compare view first, with both runs' curves; every interval inside the plot.
      EXPECT_EQ(llmbench_test::canvas_attr(dom, "compare", "data-clipped"), 0);
      EXPECT_EQ(llmbench_test::canvas_attr(dom, "compare", "data-overlaps"), 0);
      EXPECT_LT(dom.find("chart-compare_ttft"), dom.find("chart-compare\""));
      EXPECT_LT(dom.find("chart-compare\""), dom.find("chart-ttft\""));
    }
  }
}

}  // namespace
