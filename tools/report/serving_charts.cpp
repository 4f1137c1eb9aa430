// See serving_charts.h.
#include "tools/report/serving_charts.h"

#include <algorithm>
#include <cctype>
#include <set>

#include <fmt/core.h>

namespace llmbench::report {

std::vector<std::string> series_order(const std::vector<ServingLevel>& levels) {
  std::vector<std::string> order;
  for (const auto& lv : levels)
    if (std::find(order.begin(), order.end(), lv.series) == order.end()) order.push_back(lv.series);
  return order;
}

namespace {

std::string upper(std::string s) {
  for (char& ch : s) ch = char(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

// Concurrency or request rate, ticked at the levels run (1, 2, 4: never 1.1 or 1.2); log2 when
// they span 8x or more, as a doubling sweep does.
json level_axis(const std::vector<RunLevels>& runs) {
  std::set<double> xs;
  std::set<std::string> modes;
  for (const RunLevels& run : runs)
    for (const ServingLevel& lv : *run.levels)
      if (lv.x.is_number()) {
        xs.insert(lv.x.get<double>());
        modes.insert(lv.mode);
      }
  const std::string what =
      modes.size() == 1 && *modes.begin() == "concurrency" ? "concurrency (requests in flight)"
      : modes.size() == 1 && *modes.begin() == "rate"
          ? "request rate offered (req/s)"
          : "load level: concurrency (requests in flight) or request rate (req/s)";
  if (xs.empty() || xs.size() > 16) return axis(what);
  const bool log = *xs.begin() > 0 && *xs.rbegin() / *xs.begin() >= 8;
  json a = axis(log ? what + ", log2 scale" : what, log ? "logarithmic" : "linear");
  json ticks = json::array(), labels = json::array();
  for (double v : xs) {
    ticks.push_back(v);
    labels.push_back(fmt::format("{:g}", v));
  }
  const double span = *xs.rbegin() - *xs.begin();
  a["min"] = log ? r4(*xs.begin() / 1.25) : r4(*xs.begin() - std::max(span * 0.05, 0.1));
  a["max"] = log ? r4(*xs.rbegin() * 1.25) : r4(*xs.rbegin() + std::max(span * 0.05, 0.1));
  a["tickValues"] = ticks;
  a["tickLabels"] = labels;
  return a;
}

}  // namespace

std::optional<json> latency_curves(const std::string& id, const std::vector<RunLevels>& runs,
                                   const std::string& m, ServingX x) {
  const bool tput = x == ServingX::kThroughput;
  const std::string what = upper(m);
  json ds = json::array(), rows = json::array();
  for (const RunLevels& run : runs) {
    for (const std::string& s : series_order(*run.levels)) {
      const std::string series = run.prefix + s;
      json med = json::array(), p99 = json::array(), over = json::array();
      for (const ServingLevel& lv : *run.levels) {
        if (lv.series != s) continue;
        const json a = lv.v.at(m + "_p50"), b = lv.v.at(m + "_p90"), d = lv.v.at(m + "_p99");
        const json px = tput ? lv.v.at("output_tok_s") : lv.x;
        json row = {series, lv.name, a, b, d};
        if (tput)
          for (const char* k : {"output_tok_s", "request_s", "failed", "requests"})
            row.push_back(lv.v.at(k));
        row.push_back(lv.v.count("capacity") ? lv.v.at("capacity") : json(nullptr));
        rows.push_back(row);
        if (px.is_null() || a.is_null()) continue;
        med.push_back({{"x", px}, {"y", a}});
        if (lv.v.count("capacity") && lv.v.at("capacity") == "over")
          over.push_back({{"x", px}, {"y", a}});
        if (!d.is_null()) p99.push_back({{"x", px}, {"y", d}});
      }
      if (med.empty()) continue;
      ds.push_back({{"label", series + " median"}, {"data", med}, {"series", series}});
      if (!p99.empty())
        ds.push_back({{"label", series + " p99"}, {"data", p99}, {"series", series},
                      {"dash", true}});
      // Levels the saturation guard found over capacity: their medians marked on their own.
      if (!over.empty())
        ds.push_back({{"label", series + " over capacity (a growing queue)"}, {"data", over},
                      {"series", series}, {"warn", true}, {"showLine", false}});
    }
  }
  if (ds.empty()) return std::nullopt;
  json columns = {"series", "level", m + "_ms_p50", m + "_ms_p90", m + "_ms_p99"};
  if (tput)
    for (const char* k : {"output_tok_s", "request_throughput", "failed", "requests"})
      columns.push_back(k);
  columns.push_back("capacity");
  const json x_axis =
      tput ? axis("output tokens/s achieved by the level (tokens/s, all streams)") : level_axis(runs);
  const std::string title =
      tput ? what + " (ms) against output throughput, one point per level in load order: median "
                    "(solid), p99 (dashed); p90 and request throughput in the table"
           : what + " (ms) against load level: median (solid), p99 (dashed); p90 in the table";
  return chart(id, title, "line", ds, {{"x", x_axis}, {"y", axis(what + " (ms)")}}, columns, rows);
}

std::optional<json> turn_chart(const std::string& id, const std::vector<RunTurns>& runs) {
  json ds = json::array(), rows = json::array();
  for (const RunTurns& run : runs) {
    std::vector<std::string> levels;
    for (const auto& t : run.turns)
      if (std::find(levels.begin(), levels.end(), t.level) == levels.end())
        levels.push_back(t.level);
    for (const std::string& level : levels) {
      const std::string series = run.prefix + level;
      json med = json::array(), p90 = json::array();
      for (const auto& t : run.turns) {
        if (t.level != level) continue;
        rows.push_back({series, t.turn, t.requests, t.p50, t.p90});
        if (!t.p50.is_null()) med.push_back({{"x", t.turn}, {"y", t.p50}});
        if (!t.p90.is_null()) p90.push_back({{"x", t.turn}, {"y", t.p90}});
      }
      if (med.empty()) continue;
      ds.push_back({{"label", series + " median"}, {"data", med}, {"series", series}});
      ds.push_back({{"label", series + " p90"}, {"data", p90}, {"series", series}, {"dash", true}});
    }
  }
  if (ds.empty()) return std::nullopt;
  json x = axis("turn index in the session (0 = its first request; later turns carry the history)");
  x["ticks"] = {{"stepSize", 1}, {"precision", 0}};
  return chart(id,
               "TTFT (ms) against turn of multi-turn sessions: median (solid), p90 (dashed), one "
               "series per level; what a prefix cache buys shows as later turns staying flat",
               "line", ds, {{"x", x}, {"y", axis("TTFT (ms)")}},
               {"series", "turn_index", "requests", "ttft_ms_p50", "ttft_ms_p90"}, rows);
}

}  // namespace llmbench::report
