// The compare section: base against candidate, case by case. The comparison is
// `llmbench compare DB DB2` itself (tools/compare/compare_databases.h: the same loading,
// matching, settings, verdict rule and warnings), so the page and the CLI agree on the same two
// databases; its headline is the CLI's summary line and its warnings are the CLI's.
// The chart: a forest plot, one row per case and metric (its name read horizontally), the
// candidate / base ratio on a log axis whose ticks are symmetric factors (+5% at 1.05, -5% at
// 1/1.05: the verdict rule's threshold both ways) and whose range holds every interval end (so
// no interval is clipped), the threshold band shaded across the whole plot, each interval
// coloured by its verdict. The page's opening table lists the same verdicts.
#include "tools/report/report_section.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/core.h>

#include "tools/compare/compare_databases.h"
#include "tools/report/compare_output.h"

namespace llmbench::report {

namespace {

// "+5%" for 1.05, "-5%" for 1 / 1.05, "0%" for 1: the factor, symmetric on a log scale.
std::string factor_label(double v) {
  if (std::fabs(v - 1) < 1e-9) return "0%";
  return v > 1 ? fmt::format("+{:g}%", r4((v - 1) * 100))
               : fmt::format("-{:g}%", r4((1 / v - 1) * 100));
}

}  // namespace

// The ratio axis: log, from the smallest to the largest value drawn (and the threshold band).
// A tick at 1 always; at the threshold's factor both ways where they stay clear of 1 (on a wide
// axis they would crowd it: the shaded band shows the threshold there); then round factors
// (x2, x10, x100, x5, x3, x1.5, x1.25, x1.1, each both ways, in that order of preference) that
// fall inside. Every tick sits at least a twelfth of the axis's log span from every other, so
// the labels (drawn every one: autoSkip is off) never overlap, whatever the span.
json ratio_axis(double lo, double hi, double threshold) {
  const double band = 1 + threshold;
  lo = std::min(lo, 1 / band) / 1.04;  // headroom: no interval ends on the edge
  hi = std::max(hi, band) * 1.04;
  const double min_gap = std::max(0.02, std::log(hi / lo) / 12);
  std::vector<double> ticks = {1.0};
  for (double f : {band, 2.0, 10.0, 100.0, 5.0, 3.0, 1.5, 1.25, 1.1})
    for (double v : {f, 1 / f}) {
      bool clear = v > lo && v < hi;
      for (double t : ticks) clear = clear && std::fabs(std::log(v / t)) >= min_gap;
      if (clear) ticks.push_back(v);
    }
  std::sort(ticks.begin(), ticks.end());
  json values = json::array(), labels = json::array();
  for (double v : ticks) {
    values.push_back(r4(v));
    labels.push_back(factor_label(v));
  }
  json a = axis("ratio candidate / base, as a factor (0% = unchanged)", "logarithmic");
  a["min"] = r4(lo);
  a["max"] = r4(hi);
  a["tickValues"] = values;
  a["tickLabels"] = labels;
  return a;
}

void compare_section(const std::string& base, const std::string& cand, bool serving, Ctx& c,
                     json& sections, json* summary) {
  DatabaseCompareOptions dco;
  dco.base = base;
  dco.cand = cand;
  dco.serving = serving;
  const DatabaseComparison cmp = compare_databases(dco);
  const CompareReport& rep = cmp.report;
  const std::string run = serving ? "load run " : "run ";
  const std::string head = serving ? "Verdicts (llmbench compare --serving): " : "Compare: ";
  json s = section("compare", head + run + std::to_string(cmp.base->run.id) + " of " +
                                  cmp.base->path + " (base) against " + run +
                                  std::to_string(cmp.cand->run.id) + " of " + cmp.cand->path +
                                  " (candidate)");
  s["note"] = compare_summary_line(rep);
  // With the page's summary table the warnings stand there, above it (once on the page).
  if (!summary) s["warnings"] = rep.warnings;
  s["info"] = cmp.info;
  std::map<std::string, json> by_verdict;
  json ratios = json::array(), rough = json::array(), trows = json::array(),
       labels = json::array();
  double lo = 1, hi = 1;
  auto extend = [&](double v) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  };
  json srows = json::array(), flagged = json::array();
  for (const auto& cc : rep.cases) {
    if (cc.status != CaseStatus::kCompared) {
      trows.push_back({cc.label, "-", case_status_name(cc.status), nullptr, nullptr, nullptr,
                       nullptr, nullptr});
      srows.push_back({cc.label, "-", "", "", "", "", case_status_name(cc.status)});
      continue;
    }
    for (const auto& m : cc.metrics) {
      const std::string l = cc.label + " · " + metric_info(m.metric).name;
      const char* v = verdict_name(m.verdict, rep.settings.threshold_only);
      {
        const MetricInfo& mi = metric_info(m.metric);
        const int decimals = std::string(mi.unit) == "ms" ? 2 : 1;
        auto val = [&](const std::optional<double>& x) {
          return x ? fmt::format("{:.{}f}", *x, decimals) : std::string("n/a");
        };
        std::string change = "n/a", interval = "";
        if (m.ratio) {
          change = fmt::format("{:+.1f}%", (m.ratio->ratio - 1) * 100);
          interval = fmt::format("{:+.1f}% .. {:+.1f}%", (m.ratio->ci_low - 1) * 100,
                                 (m.ratio->ci_high - 1) * 100);
        } else if (m.median_base && m.median_cand && *m.median_base > 0) {
          change = fmt::format("{:+.1f}%", (*m.median_cand / *m.median_base - 1) * 100);
        }
        if (m.verdict == Verdict::kSlower) flagged.push_back(srows.size());
        srows.push_back({cc.label, std::string(mi.name) + " (" + mi.unit + ")", val(m.median_base),
                         val(m.median_cand), change, interval, v});
      }
      trows.push_back({cc.label, metric_info(m.metric).name, v,
                       m.median_base ? json(r4(*m.median_base)) : json(nullptr),
                       m.median_cand ? json(r4(*m.median_cand)) : json(nullptr),
                       m.ratio ? json(r4(m.ratio->ratio)) : json(nullptr),
                       m.ratio ? json(r4(m.ratio->ci_low)) : json(nullptr),
                       m.ratio ? json(r4(m.ratio->ci_high)) : json(nullptr)});
      if (!m.ratio) {
        // Too few repetitions for an interval: the ratio of the medians, drawn as a bare point.
        if (m.median_base && m.median_cand && *m.median_base > 0 && *m.median_cand > 0) {
          labels.push_back(l);
          rough.push_back({{"x", l}, {"y", r4(*m.median_cand / *m.median_base)}});
          extend(*m.median_cand / *m.median_base);
        }
        continue;
      }
      labels.push_back(l);
      by_verdict[v].push_back({{"x", l}, {"y", {r4(m.ratio->ci_low), r4(m.ratio->ci_high)}}});
      ratios.push_back({{"x", l}, {"y", r4(m.ratio->ratio)}});
      extend(m.ratio->ci_low);
      extend(m.ratio->ci_high);
    }
  }
  if (summary) {
    *summary = {{"title", "Summary: " + run + std::to_string(cmp.base->run.id) + " of " +
                              cmp.base->path + " (base) against " + run +
                              std::to_string(cmp.cand->run.id) + " of " + cmp.cand->path +
                              " (candidate), llmbench compare's verdicts"},
                {"note", compare_summary_line(rep)},
                {"warnings", rep.warnings},
                {"columns", {"case", "metric", "base median", "candidate median", "change",
                             std::to_string(int(std::round((1 - rep.settings.alpha) * 100))) +
                                 "% interval of the change",
                             "verdict"}},
                {"rows", srows},
                {"flagged", flagged}};
  }
  if (labels.empty()) {
    c.omitted.push_back("Compare chart: no case matched between the two runs.");
    sections.push_back(std::move(s));
    return;
  }
  // Horizontal: one row per case · metric, the ratio along x. The data in Chart.js's
  // horizontal form ({y: label, x: value or [lo, hi]}).
  auto horizontal = [](json& pts) {
    for (json& p : pts) {
      json label = p["x"];
      p["x"] = p["y"];
      p["y"] = label;
    }
  };
  const double t = rep.settings.threshold;
  json ds = json::array();
  // The threshold band: shaded across the plot behind everything (a plugin); an empty
  // dataset names it in the legend.
  ds.push_back({{"label", "threshold " + factor_label(1 + t) + " / " + factor_label(1 / (1 + t)) +
                              " (shaded): smaller changes count as same"},
                {"data", json::array()}, {"color", "#bbbbbb"}});
  for (auto& [v, pts] : by_verdict) {
    horizontal(pts);
    ds.push_back({{"label", std::string("interval, ") + v}, {"data", pts}, {"grouped", false},
                  {"verdict", v}, {"barPercentage", 0.6}, {"categoryPercentage", 1.0}});
  }
  if (!ratios.empty()) {
    horizontal(ratios);
    ds.push_back({{"type", "line"}, {"label", "ratio (Hodges-Lehmann)"}, {"data", ratios},
                  {"showLine", false}, {"pointRadius", 4}, {"color", "#000000"}});
  }
  if (!rough.empty()) {
    horizontal(rough);
    ds.push_back({{"type", "line"}, {"label", "median ratio (too few samples for an interval)"},
                  {"data", rough}, {"showLine", false}, {"pointRadius", 5},
                  {"pointStyle", "crossRot"}, {"verdict", "too few samples"}});
  }
  json cfg = chart("compare",
                   "Candidate / base ratio per case and metric with its " +
                       std::to_string(int(std::round((1 - rep.settings.alpha) * 100))) +
                       "% interval, coloured by verdict; the shaded band is the threshold "
                       "(throughput: higher is better)",
                   "bar", ds,
                   {{"x", ratio_axis(lo, hi, t)}, {"y", axis("case · metric", "category")}},
                   {"case", "metric", "verdict", "base median", "cand median", "ratio",
                    "ci low", "ci high"},
                   trows);
  cfg["config"]["data"]["labels"] = labels;
  cfg["config"]["options"]["indexAxis"] = "y";
  cfg["band"] = {{"axis", "x"}, {"lo", r4(1 / (1 + t))}, {"hi", r4(1 + t)}};
  cfg["height"] = std::max<std::size_t>(260, 26 * labels.size() + 150);
  s["charts"].push_back(std::move(cfg));
  sections.push_back(std::move(s));
}

}  // namespace llmbench::report
