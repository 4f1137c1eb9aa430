// The compare section: base against candidate, case by case, with the verdicts and intervals
// of tools/compare (the same matching and statistics as `llmbench compare`).
#include "tools/report/report_section.h"

#include <cmath>
#include <map>

#include "tools/compare/compare_load.h"
#include "tools/compare/compare_report.h"

namespace llmbench::report {

void compare_section(const ReportOptions& o, Ctx& c, json& sections) {
  SideSpec a = parse_side(o.db), b = parse_side(o.db2);
  if (o.run && !a.run_id) a.run_id = o.run;
  const LoadedRun base = load_run(a, "DB"), cand = load_run(b, "DB2");
  CompareSettings settings;
  settings.metrics = {Metric::kTtft, Metric::kTpot, Metric::kE2e, Metric::kThroughput};
  const CompareReport rep = build_report(base, cand, settings);
  json s = section("compare", "Compare: run " + std::to_string(base.run.id) + " of " + base.path +
                                  " (base) against run " + std::to_string(cand.run.id) + " of " +
                                  cand.path + " (candidate)");
  s["note"] = summary_headline(rep.summary) + " " + summary_details(rep.summary);
  std::map<std::string, json> by_verdict;
  json ratios = json::array(), rough = json::array(), trows = json::array(),
       labels = json::array();
  for (const auto& cc : rep.cases) {
    if (cc.status != CaseStatus::kCompared) {
      trows.push_back({cc.label, "-", case_status_name(cc.status), nullptr, nullptr, nullptr,
                       nullptr, nullptr});
      continue;
    }
    for (const auto& m : cc.metrics) {
      const std::string l = cc.label + " · " + metric_info(m.metric).name;
      const char* v = verdict_name(m.verdict);
      trows.push_back({cc.label, metric_info(m.metric).name, v,
                       m.median_base ? json(r4(*m.median_base)) : json(nullptr),
                       m.median_cand ? json(r4(*m.median_cand)) : json(nullptr),
                       m.ratio ? json(r4(m.ratio->ratio)) : json(nullptr),
                       m.ratio ? json(r4(m.ratio->ci_low)) : json(nullptr),
                       m.ratio ? json(r4(m.ratio->ci_high)) : json(nullptr)});
      if (!m.ratio) {
        // Too few repetitions for an interval: the ratio of the medians, drawn as a bare point.
        if (m.median_base && m.median_cand && *m.median_base > 0) {
          labels.push_back(l);
          rough.push_back({{"x", l}, {"y", r4(*m.median_cand / *m.median_base)}});
        }
        continue;
      }
      labels.push_back(l);
      by_verdict[v].push_back({{"x", l}, {"y", {r4(m.ratio->ci_low), r4(m.ratio->ci_high)}}});
      ratios.push_back({{"x", l}, {"y", r4(m.ratio->ratio)}});
    }
  }
  json ds = json::array();
  for (auto& [v, pts] : by_verdict)
    ds.push_back({{"label", std::string("interval, ") + v}, {"data", pts}, {"grouped", false},
                  {"verdict", v}});
  if (!ratios.empty())
    ds.push_back({{"type", "line"}, {"label", "ratio (Hodges-Lehmann)"}, {"data", ratios},
                  {"showLine", false}, {"pointRadius", 4}, {"color", "#000000"}});
  if (!rough.empty())
    ds.push_back({{"type", "line"}, {"label", "median ratio (too few samples for an interval)"},
                  {"data", rough}, {"showLine", false}, {"pointRadius", 4},
                  {"pointStyle", "crossRot"}, {"verdict", "too few samples"}});
  if (labels.empty()) {
    c.omitted.push_back("Compare chart: no case matched between the two runs.");
  } else {
    json cfg = chart("compare",
                     "Candidate / base ratio per case and metric with its " +
                         std::to_string(int(std::round((1 - settings.alpha) * 100))) +
                         "% interval, coloured by verdict (throughput: higher is better)",
                     "bar", ds,
                     {{"x", axis("case · metric", "category")},
                      {"y", axis("ratio candidate / base (1 = unchanged)", "logarithmic")}},
                     {"case", "metric", "verdict", "base median", "cand median", "ratio",
                      "ci low", "ci high"},
                     trows);
    cfg["config"]["data"]["labels"] = labels;
    s["charts"].push_back(std::move(cfg));
  }
  sections.push_back(std::move(s));
}

}  // namespace llmbench::report
