// Report pieces on synthetic input. The compare chart's ratio axis over narrow and wide spans.
// `llmbench report` on load runs stored at older schema versions and on an SLO search: one
// load run of a throughput level and four probes, written with plain SQL into databases made
// at schema 6 (the first serving tables), 8 (before the SLO search and server-metric columns)
// and the current version, and read as the report reads them (read-only, never migrated).
// Checks that the old databases still get their serving section from the columns' defaults
// (no SLO chart, no turn chart), that the SLO chart's points, target line and frontier marker
// equal the stored columns for a frontier that is a rate, none, or infinite, and the page with
// the SLO chart in headless Chromium.
#include <gtest/gtest.h>

#include <map>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <unistd.h>

#include "report_browser.h"
#include "../cli/llmbench_process.h"
#include "tools/report/report_data.h"
#include "tools/report/report_section.h"
#include "tools/store/schema.h"
#include "tools/store/sqlite_db.h"

namespace {

using json = nlohmann::ordered_json;
namespace fs = std::filesystem;

fs::path scratch() {
  const fs::path d = fs::path(LLMBENCH_TEST_SCRATCH) / "report_slo" / std::to_string(getpid());
  fs::create_directories(d);
  return d;
}

// Offered rate and good fraction of the probes, in the order the search ran them; the
// throughput level (rate inf) comes first.
struct Probe {
  double rate, good;
};
constexpr Probe kProbes[] = {{20, 1.0}, {40, 0.5}, {30, 0.95}, {35, 0.8}};

// Only columns of schema 6, so every version takes the same rows.
void insert_run(llmbench::Db& d) {
  d.exec("INSERT INTO load_run (id, started_at, finished_at, status, command_line, "
         "llmbench_version, git_commit, build_type, host, cpu, label, url, endpoint, model, "
         "server_cmd, prompt_kind, mode, seed, num_requests, input_len_stddev, output_len_stddev, "
         "ignore_eos, warmup_requests, goodput, connect_timeout_s, first_byte_timeout_s, "
         "idle_timeout_s) VALUES (1, '2026-11-26T00:00:00Z', '2026-11-26T00:01:00Z', 'complete', "
         "'llmbench load --sweep slo --goodput ttft:100', '0.1.0', 'abc', 'Release', 'h', 'c', "
         "'slo-test', 'http://127.0.0.1:1/v1/completions', 'completions', 'tiny', '', "
         "'token_ids', 'rate', 1, 4, 0, 0, 1, 0, 'ttft:100', 1, 1, 1)");
  std::vector<double> rates = {INFINITY};
  for (const Probe& p : kProbes) rates.push_back(p.rate);
  for (std::size_t i = 0; i < rates.size(); ++i) {
    const int id = int(i) + 1;
    auto l = d.prepare("INSERT INTO load_level (id, load_run_id, level_index, level, request_rate, "
                       "burstiness, input_len, output_len, started_unix_ns, duration_ns, requests, "
                       "ok, failed, finished_at) VALUES (?, 1, ?, ?, ?, 1, 16, 4, 0, 1000000000, "
                       "2, 2, 0, '2026-11-26T00:00:30Z')");
    const std::string name = std::isinf(rates[i]) ? "rinf in16 out4" : "r" + std::to_string(int(rates[i])) + " in16 out4";
    l.bind(1, id).bind(2, int(i)).bind(3, name).bind(4, rates[i]).run();
    for (int r = 0; r < 2; ++r) {
      auto q = d.prepare("INSERT INTO load_request (level_id, request_index, status, input_len, "
                         "max_tokens, output_tokens, chunks, send_ns, end_ns, ttft_ns, tpot_ns, "
                         "e2el_ns) VALUES (?, ?, 'ok', 16, 4, 4, 4, 0, 40000000, ?, 10000000, "
                         "40000000)");
      q.bind(1, id).bind(2, r).bind(3, 10000000 * (id + r)).run();
    }
  }
}

// The SLO search columns of schema 9.
void mark_slo_search(llmbench::Db& d, const std::string& frontier_sql) {
  d.exec("UPDATE load_run SET sweep = 'slo', goodput_target = 0.9, slo_frontier_rate = " +
         frontier_sql);
  d.exec("UPDATE load_level SET sweep_role = 'throughput' WHERE level_index = 0");
  for (std::size_t i = 0; i < std::size(kProbes); ++i) {
    auto q = d.prepare("UPDATE load_level SET sweep_role = 'probe', good_fraction = ? "
                       "WHERE level_index = ?");
    q.bind(1, kProbes[i].good).bind(2, int(i) + 1).run();
  }
}

fs::path make_db(const std::string& name, int version, const std::string& frontier_sql = "") {
  const fs::path path = scratch() / name;
  fs::remove(path);
  llmbench::Db d(path.string(), llmbench::Db::Mode::kCreate);
  llmbench::create_schema_version(d, version);
  insert_run(d);
  if (!frontier_sql.empty()) mark_slo_search(d, frontier_sql);
  return path;
}

const json* find_chart(const json& data, const std::string& id) {
  for (const auto& s : data["sections"])
    for (const auto& c : s["charts"])
      if (c["id"] == id) return &c;
  return nullptr;
}

json report(const fs::path& db) { return llmbench::build_report_data({db.string(), {}, ""}); }

TEST(ReportSlo, OldSchemasStillGetTheirServingSection) {
  for (int version : {6, 8}) {
    const json data = report(make_db("v" + std::to_string(version) + ".db", version));
    const json* ttft = find_chart(data, "serving_1_ttft");
    ASSERT_NE(ttft, nullptr) << "schema " << version << ": " << data.dump().substr(0, 1500);
    // Four probes with a finite rate; the throughput level has no position on the rate axis.
    EXPECT_EQ((*ttft)["config"]["data"]["datasets"][0]["data"].size(), 4u) << version;
    EXPECT_EQ((*ttft)["table"]["rows"].size(), 5u) << version;
    // The series name comes from the defaults: no sweep column -> 'list', no dataset -> random.
    EXPECT_EQ((*ttft)["config"]["data"]["datasets"][0]["series"], "rate in16 out4") << version;
    EXPECT_EQ(find_chart(data, "serving_1_slo"), nullptr) << version;
    EXPECT_EQ(find_chart(data, "serving_1_turns"), nullptr) << version;
  }
}

// The saturation guard's verdict (schema 13) is drawn: the over-capacity level's median gets its
// own warning-styled mark, and every level's table row says over, ok or (not judged) null.
TEST(ReportSlo, OverCapacityLevelsAreMarked) {
  const fs::path path = make_db("capacity.db", llmbench::kSchemaVersion);
  {
    llmbench::Db d(path.string(), llmbench::Db::Mode::kReadWrite);
    d.exec("UPDATE load_level SET over_capacity = 0 WHERE request_rate IN (20, 30)");
    d.exec("UPDATE load_level SET over_capacity = 1, saturation_ns = 2000000000 WHERE request_rate = 40");
  }
  const json data = report(path);
  const json* ttft = find_chart(data, "serving_1_ttft");
  ASSERT_NE(ttft, nullptr);
  const json& ds = (*ttft)["config"]["data"]["datasets"];
  const json* over = nullptr;
  for (const auto& d : ds)
    if (d["label"].get<std::string>().find("over capacity") != std::string::npos) over = &d;
  ASSERT_NE(over, nullptr) << ds.dump();
  EXPECT_EQ((*over)["warn"], true);
  ASSERT_EQ((*over)["data"].size(), 1u);
  EXPECT_DOUBLE_EQ((*over)["data"][0]["x"].get<double>(), 40.0);
  const json& cols = (*ttft)["table"]["columns"];
  ASSERT_EQ(cols.back(), "capacity");
  std::map<std::string, json> cap;
  for (const auto& row : (*ttft)["table"]["rows"]) cap[row[1].get<std::string>()] = row.back();
  EXPECT_EQ(cap["r40 in16 out4"], "over");
  EXPECT_EQ(cap["r20 in16 out4"], "ok");
  EXPECT_TRUE(cap["r35 in16 out4"].is_null());
  EXPECT_TRUE(cap["rinf in16 out4"].is_null());
  // An old database has no verdict: no mark, null cells.
  const json old = report(make_db("v8cap.db", 8));
  for (const auto& d : (*find_chart(old, "serving_1_ttft"))["config"]["data"]["datasets"])
    EXPECT_EQ(d["label"].get<std::string>().find("over capacity"), std::string::npos);
}

TEST(ReportSlo, ChartEqualsTheStoredSearch) {
  const json data = report(make_db("slo.db", llmbench::kSchemaVersion, "30"));
  const json* c = find_chart(data, "serving_1_slo");
  ASSERT_NE(c, nullptr) << data.dump().substr(0, 1500);
  const json& ds = (*c)["config"]["data"]["datasets"];
  ASSERT_EQ(ds.size(), 3u);
  // The probes by rate, not in search order.
  const std::vector<std::pair<double, double>> want = {{20, 1.0}, {30, 0.95}, {35, 0.8}, {40, 0.5}};
  ASSERT_EQ(ds[0]["data"].size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_DOUBLE_EQ(ds[0]["data"][i]["x"].get<double>(), want[i].first) << i;
    EXPECT_DOUBLE_EQ(ds[0]["data"][i]["y"].get<double>(), want[i].second) << i;
  }
  // The target: a horizontal line at 0.9 from the lowest rate drawn to the highest.
  for (const auto& p : ds[1]["data"]) EXPECT_DOUBLE_EQ(p["y"].get<double>(), 0.9);
  EXPECT_DOUBLE_EQ(ds[1]["data"][0]["x"].get<double>(), 20.0);
  EXPECT_DOUBLE_EQ(ds[1]["data"][1]["x"].get<double>(), 40.0);
  // The frontier: a vertical line at 30 req/s, named in the legend and the title.
  for (const auto& p : ds[2]["data"]) EXPECT_DOUBLE_EQ(p["x"].get<double>(), 30.0);
  EXPECT_NE(ds[2]["label"].get<std::string>().find("30 req/s"), std::string::npos);
  EXPECT_NE((*c)["title"].get<std::string>().find("30 req/s"), std::string::npos);
  // The table: every level in search order, the throughput level's rate as "inf".
  const json& rows = (*c)["table"]["rows"];
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0][1], "throughput");
  EXPECT_EQ(rows[0][2], "inf");
  EXPECT_EQ(rows[2][1], "probe");
  EXPECT_DOUBLE_EQ(rows[2][2].get<double>(), 40.0);
  EXPECT_DOUBLE_EQ(rows[2][3].get<double>(), 0.5);
}

TEST(ReportSlo, NoFrontierOrAnInfiniteOneDrawsNoMarker) {
  for (const auto& [sql, words] : {std::pair<std::string, std::string>{"NULL", "none"},
                                   {"9e999", "inf: even every request"}}) {
    const json data = report(make_db("slo_" + words.substr(0, 3) + ".db", llmbench::kSchemaVersion, sql));
    const json* c = find_chart(data, "serving_1_slo");
    ASSERT_NE(c, nullptr) << sql;
    EXPECT_EQ((*c)["config"]["data"]["datasets"].size(), 2u) << sql << ": points and target only";
    EXPECT_NE((*c)["title"].get<std::string>().find(words), std::string::npos) << (*c)["title"];
  }
}

TEST(ReportSlo, RendersInHeadlessChromium) {
  const std::string browser = llmbench_test::find_browser();
  if (browser.empty()) GTEST_SKIP() << llmbench_test::kNoBrowser;
  const fs::path db = make_db("browser.db", llmbench::kSchemaVersion, "30");
  const fs::path work = scratch() / "browser";
  fs::create_directories(work);
  const fs::path html = work / "slo.html";
  auto r = llmbench_test::run_llmbench("report " + db.string() + " -o " + html.string(), work / "cli");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path png = work / "slo.png";
  const std::string dom = llmbench_test::run_browser(browser, html, work, png, "1200,3000");
  const auto st = llmbench_test::page_status(dom);
  ASSERT_TRUE(st.done) << llmbench_test::slurp(work / "browser.err").substr(0, 4000);
  const auto [charts, series] = llmbench_test::count_charts(report(db));
  EXPECT_EQ(st.charts, charts);
  EXPECT_EQ(st.series, series);
  EXPECT_EQ(st.blank, 0);
  EXPECT_EQ(st.errors, 0) << st.messages;
  EXPECT_EQ(st.resources, 0);
  std::cout << "screenshot: " << png << "\n";
}

// Ticks: 1 always, the threshold both ways where it stays clear of 1, round factors where
// they do too: every tick a twelfth of the log span from the next, so a wide axis is not a
// crowd of labels around 1 (the overlap the browser test measures).
TEST(RatioAxis, TicksNeverCrowd) {
  for (const auto& [lo, hi] : {std::pair{0.99, 1.01}, {0.5, 2.0}, {0.2, 1.3}, {0.01, 50.0}}) {
    const json a = llmbench::report::ratio_axis(lo, hi, 0.05);
    std::vector<double> v;
    for (const auto& t : a["tickValues"]) v.push_back(t.get<double>());
    const double span = std::log(a["max"].get<double>() / a["min"].get<double>());
    EXPECT_NE(std::find(v.begin(), v.end(), 1.0), v.end()) << lo << ".." << hi;
    // The threshold's ticks exactly where they clear 1 by a twelfth of the span.
    const bool room = std::log(1.05) >= std::max(0.02, span / 12);
    for (double t : {1.05, 0.9524})
      EXPECT_EQ(std::find(v.begin(), v.end(), t) != v.end(), room) << lo << ".." << hi << " " << t;
    for (std::size_t i = 1; i < v.size(); ++i) {
      EXPECT_LT(v[i - 1], v[i]);
      EXPECT_GE(std::log(v[i] / v[i - 1]), span / 12 - 1e-3) << lo << ".." << hi << ": " << a.dump();
    }
    for (double t : v) {
      EXPECT_GT(t, a["min"].get<double>());
      EXPECT_LT(t, a["max"].get<double>());
    }
    EXPECT_EQ(a["tickLabels"].size(), v.size());
  }
  // A wide span still gets round factors, labelled as factors.
  const json wide = llmbench::report::ratio_axis(0.5, 2.0, 0.05);
  EXPECT_NE(wide["tickLabels"].dump().find("+100%"), std::string::npos) << wide.dump();
  EXPECT_NE(wide["tickLabels"].dump().find("-100%"), std::string::npos) << wide.dump();
}

}  // namespace

// Energy per phase in the report (#44 section 3): a real tiny run whose cases were given energy
// columns (the figures a CUDA run with NVML stores; this machine has no GPU) gets the energy
// chart with exactly the stored values; the same run without them gets none.
TEST(ReportEnergy, ChartDrawsTheStoredEnergyAndOnlyWhenPresent) {
  const fs::path dir = scratch();
  const fs::path db = dir / "energy.db";
  for (const char* f : {"energy.db", "energy.db-wal", "energy.db-shm"}) fs::remove(dir / f);
  const auto r = llmbench_test::run_llmbench("run --model tiny --batch 1,4 --prompt-len 16 --max-new-tokens 4 "
                              "--repeat 2 --trace off --peak-bw-gbps 10 --peak-tflops 1 --db " +
                                  db.string(), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(find_chart(report(db), "energy"), nullptr);
  {
    llmbench::Db d(db.string(), llmbench::Db::Mode::kReadWrite);
    d.exec("UPDATE bench_case SET decode_j_per_token = CASE batch WHEN 1 THEN 1.25 ELSE 0.375 END,"
           " prefill_j_per_token = 0.0625, decode_w = 250.5, prefill_w = 300.5");
  }
  const json data = report(db);
  const json* c = find_chart(data, "energy");
  ASSERT_NE(c, nullptr) << data.dump();
  const std::string all = c->dump();
  for (const char* v : {"1.25", "0.375", "0.0625", "250.5", "300.5"})
    EXPECT_NE(all.find(v), std::string::npos) << v << " in " << all;
}
