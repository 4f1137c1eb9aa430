// The serving section (llmbench load): TTFT, TPOT and ITL against load level, and output
// throughput against median TTFT.
#include "tools/report/report_section.h"

#include <cmath>
#include <map>
#include <vector>

namespace llmbench::report {

namespace {

// One load level: its series, its x position and its metrics (name -> value or null).
struct Level {
  std::string series;
  json x;  // concurrency or request rate; null for an infinite rate (all at once)
  std::string x_text;
  std::map<std::string, json> v;
};

// Every load level of the database, one series per (label, mode, lengths): a merged database of
// several servers draws them side by side. Percentiles are the SQL functions `llmbench query`
// and `llmbench load` share, so the numbers equal load_summary's.
std::vector<Level> read_levels(Ctx& c) {
  const std::string ok = "FROM load_request q WHERE q.level_id = l.id AND q.status = 'ok'";
  const std::string itl = "FROM load_chunk k JOIN load_request q ON q.id = k.request_id WHERE "
                          "q.level_id = l.id AND q.status = 'ok' AND k.itl_ns IS NOT NULL";
  Stmt q = c.db->prepare(
      "SELECT r.label, r.mode, l.input_len, l.output_len, l.concurrency, l.request_rate, "
      "(SELECT median(q.ttft_ns) " + ok + ") / 1e6, (SELECT percentile(q.ttft_ns, 90) " + ok +
      ") / 1e6, (SELECT percentile(q.ttft_ns, 99) " + ok + ") / 1e6, "
      "(SELECT median(q.tpot_ns) " + ok + ") / 1e6, (SELECT percentile(q.tpot_ns, 90) " + ok +
      ") / 1e6, (SELECT percentile(q.tpot_ns, 99) " + ok + ") / 1e6, "
      "(SELECT median(k.itl_ns) " + itl + ") / 1e6, (SELECT percentile(k.itl_ns, 90) " + itl +
      ") / 1e6, (SELECT percentile(k.itl_ns, 99) " + itl + ") / 1e6, "
      "(SELECT SUM(q.output_tokens) " + ok + ") / (l.duration_ns / 1e9), "
      "(SELECT COUNT(*) " + ok + ") / (l.duration_ns / 1e9), l.failed, l.requests "
      "FROM load_level l JOIN load_run r ON r.id = l.load_run_id "
      "ORDER BY r.label, r.mode, l.input_len, l.output_len, "
      "COALESCE(l.concurrency, l.request_rate), l.id");
  std::vector<Level> levels;
  const char* metrics[] = {"ttft_p50", "ttft_p90", "ttft_p99", "tpot_p50", "tpot_p90", "tpot_p99",
                           "itl_p50",  "itl_p90",  "itl_p99",  "output_tok_s", "request_s"};
  while (q.step()) {
    Level lv;
    const std::string mode = q.column_text(1);
    lv.series = q.column_text(0) + (mode == "rate" ? " rate" : " concurrency") + " in" +
                std::to_string(q.column_int(2)) + " out" + std::to_string(q.column_int(3));
    if (mode == "rate") {
      const double rate = q.column_double(5);
      lv.x = std::isfinite(rate) ? json(r4(rate)) : json(nullptr);
      lv.x_text = std::isfinite(rate) ? json(r4(rate)).dump() : "inf";
    } else {
      lv.x = q.column_int(4);
      lv.x_text = std::to_string(q.column_int(4));
    }
    for (int i = 0; i < 11; ++i) lv.v[metrics[i]] = num(q, 6 + i);
    lv.v["failed"] = q.column_int(17);
    lv.v["requests"] = q.column_int(18);
    levels.push_back(std::move(lv));
  }
  return levels;
}

// The levels and their series labels in order.
struct Levels {
  const std::vector<Level>& levels;
  std::vector<std::string> order;
};

// A median line per series of metric `m` and the p99 dashed; the table adds the p90.
void latency_chart(Ctx& c, json& s, const Levels& ls, const std::string& id,
                   const std::string& what, const std::string& m) {
  json ds = json::array(), rows = json::array();
  for (const auto& series : ls.order) {
    json med = json::array(), p99 = json::array();
    for (const auto& lv : ls.levels) {
      if (lv.series != series) continue;
      const json a = lv.v.at(m + "_p50"), b = lv.v.at(m + "_p90"), d = lv.v.at(m + "_p99");
      rows.push_back({series, lv.x_text, a, b, d});
      if (lv.x.is_null() || a.is_null()) continue;
      med.push_back({{"x", lv.x}, {"y", a}});
      if (!d.is_null()) p99.push_back({{"x", lv.x}, {"y", d}});
    }
    if (med.empty()) continue;
    ds.push_back({{"label", series + " median"}, {"data", med}, {"series", series}});
    if (!p99.empty())
      ds.push_back({{"label", series + " p99"}, {"data", p99}, {"series", series},
                    {"dash", true}});
  }
  if (ds.empty()) {
    c.omitted.push_back(what + " against load level: no level has it (e.g. TPOT needs 2+ "
                               "output tokens; an infinite rate has no x position).");
    return;
  }
  const json x_axis = axis("load level: concurrency (requests in flight) or request rate (req/s)");
  s["charts"].push_back(chart("serving_" + id,
                              what + " (ms) against load level: median (solid), p99 (dashed); "
                                     "p90 in the table",
                              "line", ds, {{"x", x_axis}, {"y", axis(what + " (ms)")}},
                              {"series", "level", m + "_ms_p50", m + "_ms_p90", m + "_ms_p99"},
                              rows));
}

// Output throughput against median TTFT: one point per level, a line per series.
void throughput_chart(json& s, const Levels& ls) {
  json ds = json::array(), rows = json::array();
  for (const auto& series : ls.order) {
    json pts = json::array();
    for (const auto& lv : ls.levels) {
      if (lv.series != series) continue;
      const json t = lv.v.at("ttft_p50"), tput = lv.v.at("output_tok_s");
      rows.push_back({series, lv.x_text, t, tput, lv.v.at("request_s"), lv.v.at("failed"),
                      lv.v.at("requests")});
      if (!t.is_null() && !tput.is_null()) pts.push_back({{"x", t}, {"y", tput}});
    }
    if (!pts.empty()) ds.push_back({{"label", series}, {"data", pts}, {"series", series}});
  }
  if (!ds.empty())
    s["charts"].push_back(chart(
        "serving_throughput", "Output tokens/s against median TTFT (ms), one point per level",
        "line", ds, {{"x", axis("TTFT, median (ms)")}, {"y", axis("output tokens/s")}},
        {"series", "level", "ttft_ms_p50", "output_tok_s", "request_throughput", "failed",
         "requests"},
        rows));
}

}  // namespace

bool serving_section(Ctx& c, json& sections) {
  if (!has_table(*c.db, "load_level")) {
    c.omitted.push_back("Serving charts: the database has no serving tables (no llmbench load run).");
    return false;
  }
  const std::vector<Level> levels = read_levels(c);
  if (levels.empty()) {
    c.omitted.push_back("Serving charts: the database holds no llmbench load levels.");
    return false;
  }
  Levels ls{levels, {}};
  for (const auto& lv : levels)
    if (ls.order.empty() || ls.order.back() != lv.series) ls.order.push_back(lv.series);
  json s = section("serving", "Serving (llmbench load): latency and throughput per load level");
  latency_chart(c, s, ls, "ttft", "TTFT", "ttft");
  latency_chart(c, s, ls, "tpot", "TPOT", "tpot");
  latency_chart(c, s, ls, "itl", "ITL", "itl");
  throughput_chart(s, ls);
  if (s["charts"].empty()) return false;
  sections.push_back(std::move(s));
  return true;
}

}  // namespace llmbench::report
