// The compare view of two load runs (of one database or two): levels matched by their name
// (`c4 in128 out128`, `r8 b1 sharegpt`: the same load and lengths or dataset), the change of
// TTFT / TPOT / ITL p50 and p99 and of throughput per matched level, both runs' latency curves
// on one chart (against load level and against achieved throughput), both runs' TTFT per turn
// when they had sessions, and then `llmbench compare --serving`'s verdicts with their
// intervals (compare_section). Not here: the runs' own sections (report_serving.cpp).
#include "tools/report/report_section.h"

#include <algorithm>

#include <fmt/core.h>

#include "tools/report/serving_charts.h"
#include "tools/report/serving_reader.h"

namespace llmbench::report {

namespace {

// The figures a matched level is compared on: ServingLevel::v keys and the printed name.
constexpr std::pair<const char*, const char*> kDeltaMetrics[] = {
    {"ttft_p50", "ttft_ms_p50"}, {"ttft_p99", "ttft_ms_p99"}, {"tpot_p50", "tpot_ms_p50"},
    {"tpot_p99", "tpot_ms_p99"}, {"itl_p50", "itl_ms_p50"},   {"itl_p99", "itl_ms_p99"},
    {"output_tok_s", "output_tok_s"}, {"request_s", "request_throughput"}};

using Match = std::pair<const ServingLevel*, const ServingLevel*>;

std::vector<Match> match_levels(const std::vector<ServingLevel>& base,
                                const std::vector<ServingLevel>& cand, std::string& unmatched) {
  std::vector<Match> out;
  for (const auto& b : base) {
    auto it = std::find_if(cand.begin(), cand.end(),
                           [&](const ServingLevel& c) { return c.name == b.name; });
    if (it == cand.end())
      unmatched += (unmatched.empty() ? "" : ", ") + b.name + " (base only)";
    else
      out.push_back({&b, &*it});
  }
  for (const auto& c : cand)
    if (std::none_of(base.begin(), base.end(),
                     [&](const ServingLevel& b) { return b.name == c.name; }))
      unmatched += (unmatched.empty() ? "" : ", ") + c.name + " (candidate only)";
  return out;
}

// Per matched level and figure: the ratio candidate / base as grouped bars on a log axis (so a
// 2x slower TPOT and a 2x faster TTFT are bars of one length); the table has both values, the
// difference and the change in %.
std::optional<json> delta_chart(const std::vector<Match>& matched) {
  json labels = json::array(), ds = json::array(), rows = json::array();
  double lo = 1, hi = 1;
  for (const auto& [b, c] : matched) labels.push_back(b->name);
  for (const auto& [key, name] : kDeltaMetrics) {
    json pts = json::array();
    for (const auto& [b, c] : matched) {
      const json bv = b->v.at(key), cv = c->v.at(key);
      json delta = nullptr, pct = nullptr;
      if (!bv.is_null() && !cv.is_null()) {
        const double x = bv.get<double>(), y = cv.get<double>();
        delta = r4(y - x);
        if (x != 0) pct = r4((y / x - 1) * 100);
        if (x > 0 && y > 0) {
          pts.push_back({{"x", b->name}, {"y", {1, r4(y / x)}}});  // a bar from x1
          lo = std::min(lo, y / x);
          hi = std::max(hi, y / x);
        }
      }
      rows.push_back({b->name, name, bv, cv, delta, pct});
    }
    if (!pts.empty()) ds.push_back({{"label", name}, {"data", pts}});
  }
  if (ds.empty()) return std::nullopt;
  json y = axis("candidate / base (ratio, log scale; x1 = unchanged)", "logarithmic");
  lo = std::min(lo, 0.8) / 1.15;
  hi = std::max(hi, 1.25) * 1.15;
  y["min"] = r4(lo);
  y["max"] = r4(hi);
  // Ticks at 1-2-5 factors only (x0.5, x1, x2, x5, ...): no crowd of labels next to x1.
  json ticks = json::array(), tick_labels = json::array();
  for (double decade = 1e-3; decade <= 1e3; decade *= 10)
    for (double f : {1.0, 2.0, 5.0})
      if (decade * f >= lo && decade * f <= hi) {
        ticks.push_back(r4(decade * f));
        tick_labels.push_back(fmt::format("x{:g}", r4(decade * f)));
      }
  y["tickValues"] = ticks;
  y["tickLabels"] = tick_labels;
  json ch = chart("compare_serving_delta",
                  "Candidate / base per matched level (log axis): latencies below x1 and "
                  "throughput above x1 are better; the change in % in the table",
                  "bar", ds,
                  {{"x", axis("level (matched by load and lengths or dataset)", "category")},
                   {"y", y}},
                  {"level", "figure", "base", "candidate", "difference (candidate - base)",
                   "change_pct"},
                  rows);
  ch["config"]["data"]["labels"] = labels;
  return ch;
}

}  // namespace

void serving_compare_section(Ctx& c, const LoadRunRef& base, const LoadRunRef& cand,
                             json& sections, json* summary) {
  const std::vector<ServingLevel> bl = read_serving_levels(*base.db, base.run);
  const std::vector<ServingLevel> cl = read_serving_levels(*cand.db, cand.run);
  const std::string bname = load_run_name(*base.db, base.run) + " of " + base.path;
  const std::string cname = load_run_name(*cand.db, cand.run) + " of " + cand.path;
  json s = section("compare_serving", "Compare: " + bname + " (base) against " + cname +
                                          " (candidate)");
  std::string unmatched;
  const std::vector<Match> matched = match_levels(bl, cl, unmatched);
  s["note"] = std::to_string(matched.size()) + " levels matched by name" +
              (unmatched.empty() ? std::string(".") : "; not matched: " + unmatched + ".");
  if (auto ch = delta_chart(matched))
    s["charts"].push_back(std::move(*ch));
  else
    c.omitted.push_back("Compare of load runs: no level matched (levels match by load and "
                        "lengths or dataset, e.g. c4 in128 out128).");
  const std::vector<RunLevels> runs = {{"base: ", &bl}, {"cand: ", &cl}};
  for (const char* m : {"ttft", "tpot"})
    if (auto ch = latency_curves(std::string("compare_serving_") + m + "_tput", runs, m,
                                 ServingX::kThroughput))
      s["charts"].push_back(std::move(*ch));
  if (auto ch = latency_curves("compare_serving_ttft_level", runs, "ttft", ServingX::kLevel))
    s["charts"].push_back(std::move(*ch));
  std::vector<RunTurns> turns = {{"base: ", read_turns(*base.db, base.run)},
                                 {"cand: ", read_turns(*cand.db, cand.run)}};
  if (auto ch = turn_chart("compare_serving_turns", turns)) s["charts"].push_back(std::move(*ch));
  sections.push_back(std::move(s));
  compare_section(base.path + ":" + std::to_string(base.run),
                  cand.path + ":" + std::to_string(cand.run), true, c, sections, summary);
}

}  // namespace llmbench::report
