// Output formats of `llmbench compare` (see compare_output.h).
#include "tools/report/compare_output.h"
#include "engine/checkpoint/json_input.h"

#include <fmt/core.h>

namespace llmbench {

namespace {

std::string fmt_value(double v, const MetricInfo& info) {
  return info.higher_is_better ? fmt::format("{:.1f}", v) : fmt::format("{:.3f}", v);
}

std::string fmt_p(double p) { return fmt::format("{:.3g}", p); }

std::string run_text(const LoadedRun& s) {
  return s.path + " run " + std::to_string(s.run.id) + " (commit " + s.run.git_commit + ", " +
         s.run.started_at + ")";
}

std::string settings_text(const CompareSettings& s) {
  std::string metrics;
  for (Metric m : s.metrics) {
    if (!metrics.empty()) metrics += ",";
    metrics += metric_info(m).name;
  }
  return fmt::format("metrics {}; alpha {:g}; threshold {:g}%", metrics, s.alpha,
                     s.threshold * 100);
}

nlohmann::ordered_json run_json(const LoadedRun& s) {
  const RunInfo& r = s.run;
  return {{"db", s.path},           {"run_id", r.id},
          {"started_at", r.started_at}, {"command_line", r.command_line},
          {"llmbench_version", r.version}, {"git_commit", r.git_commit},
          {"build_type", r.build_type}, {"host", r.host},
          {"cpu", r.cpu},           {"gpu", r.gpu},
          {"driver", r.driver},     {"threads", r.threads}};
}

nlohmann::ordered_json case_ref_json(const CaseSamples& c, bool with_threads) {
  return {{"case", c.label(with_threads)}, {"case_id", c.case_id}, {"status", c.status}};
}

nlohmann::ordered_json metric_json(const MetricComparison& m, bool threshold_only) {
  using nlohmann::ordered_json;
  auto opt = [](const std::optional<double>& v) { return v ? ordered_json(*v) : ordered_json(nullptr); };
  ordered_json j = {{"verdict", verdict_name(m.verdict, threshold_only)},
                    {"unit", metric_info(m.metric).unit},
                    {"n_base", m.n_base},
                    {"n_candidate", m.n_cand},
                    {"median_base", opt(m.median_base)},
                    {"median_candidate", opt(m.median_cand)}};
  j["ratio"] = m.ratio ? ordered_json(m.ratio->ratio) : ordered_json(nullptr);
  j["ci_low"] = m.ratio ? ordered_json(m.ratio->ci_low) : ordered_json(nullptr);
  j["ci_high"] = m.ratio ? ordered_json(m.ratio->ci_high) : ordered_json(nullptr);
  j["confidence"] = m.ratio ? ordered_json(m.ratio->confidence) : ordered_json(nullptr);
  j["p_value"] = m.test ? ordered_json(m.test->p_value) : ordered_json(nullptr);
  j["u"] = m.test ? ordered_json(m.test->u) : ordered_json(nullptr);
  j["p_exact"] = m.test ? ordered_json(m.test->exact) : ordered_json(nullptr);
  return j;
}

}  // namespace

Row compare_header() {
  return {"case", "metric", "n_base", "n_cand", "base_median", "cand_median",
          "ratio", "ci_low", "ci_high", "p_value", "verdict"};
}

std::vector<Row> compare_rows(const CompareReport& r, const std::string& na) {
  std::vector<Row> rows;
  for (const auto& c : r.cases) {
    if (c.status != CaseStatus::kCompared) {
      rows.push_back({c.label, "-", na, na, na, na, na, na, na, na, case_status_name(c.status)});
      continue;
    }
    for (const auto& m : c.metrics) {
      const MetricInfo& info = metric_info(m.metric);
      auto val = [&](const std::optional<double>& v) { return v ? fmt_value(*v, info) : na; };
      const bool have = m.ratio.has_value();
      rows.push_back({c.label, info.column,
                      m.n_base ? std::to_string(m.n_base) : na,
                      m.n_cand ? std::to_string(m.n_cand) : na,
                      val(m.median_base), val(m.median_cand),
                      have ? fmt::format("{:.4f}", m.ratio->ratio) : na,
                      have ? fmt::format("{:.4f}", m.ratio->ci_low) : na,
                      have ? fmt::format("{:.4f}", m.ratio->ci_high) : na,
                      m.test ? fmt_p(m.test->p_value) : na,
                      verdict_name(m.verdict, r.settings.threshold_only)});
    }
  }
  return rows;
}

nlohmann::ordered_json compare_json(const CompareReport& r) {
  using nlohmann::ordered_json;
  ordered_json metrics = ordered_json::array();
  for (Metric m : r.settings.metrics) metrics.push_back(metric_info(m).name);
  ordered_json env = ordered_json::array();
  for (const auto& n : r.env)
    env.push_back({{"level", n.warning ? "warning" : "info"}, {"field", n.field},
                   {"base", n.base}, {"candidate", n.cand}});
  ordered_json cases = ordered_json::array(), base_only = ordered_json::array(),
               cand_only = ordered_json::array();
  const bool with_threads = !r.threads_ignored;
  for (const auto& c : r.cases) {
    if (c.status == CaseStatus::kBaseOnly) {
      base_only.push_back(case_ref_json(*c.base, with_threads));
      continue;
    }
    if (c.status == CaseStatus::kCandOnly) {
      cand_only.push_back(case_ref_json(*c.cand, with_threads));
      continue;
    }
    const CaseSamples& b = *c.base;
    ordered_json j = {{"case", c.label},
                      {"status", case_status_name(c.status)},
                      {"base_case_id", b.case_id},
                      {"candidate_case_id", c.cand->case_id},
                      {"config", {{"model", b.model}, {"dtype", b.dtype}, {"backend", b.backend},
                                  {"batch", b.batch}, {"prompt_len", b.prompt_len},
                                  {"max_new_tokens", b.max_new_tokens},
                                  {"variants", parse_ordered_json(b.variants).value},
                                  {"threads_base", b.threads},
                                  {"threads_candidate", c.cand->threads}}}};
    if (j["config"]["variants"].is_discarded()) j["config"]["variants"] = b.variants;
    if (!b.ok()) j["base_error"] = b.error;
    if (!c.cand->ok()) j["candidate_error"] = c.cand->error;
    ordered_json per_metric = ordered_json::object();
    for (const auto& m : c.metrics) per_metric[metric_info(m.metric).name] = metric_json(m, r.settings.threshold_only);
    j["metrics"] = per_metric;
    cases.push_back(std::move(j));
  }
  const CompareSummary& s = r.summary;
  return {{"base", run_json(*r.base)},
          {"candidate", run_json(*r.cand)},
          {"settings", {{"metrics", metrics}, {"alpha", r.settings.alpha},
                        {"threshold_pct", r.settings.threshold * 100},
                        {"confidence", 1 - r.settings.alpha},
                        {"verdict_rule", r.settings.threshold_only
                                             ? "one run per side: no valid test; a change only where the whole interval is beyond the threshold"
                                         : r.settings.runs_as_unit
                                             ? "p < alpha and threshold (one sample per run)"
                                             : "p < alpha and threshold (repetitions treated as independent)"}}},
          {"warnings", r.warnings},
          {"environment", env},
          {"threads_ignored_in_matching", r.threads_ignored},
          {"cases", cases},
          {"unmatched", {{"base_only", base_only}, {"candidate_only", cand_only}}},
          {"summary", {{"valid_test", !r.settings.threshold_only},
                       {"regressions", r.settings.threshold_only ? 0 : s.slower},
                       {"improvements", r.settings.threshold_only ? 0 : s.faster},
                       {"same", s.same},
                       {"slower_beyond_threshold", r.settings.threshold_only ? s.slower : 0},
                       {"faster_beyond_threshold", r.settings.threshold_only ? s.faster : 0},
                       {"same_or_unknown", s.unknown},
                       {"too_few_samples", s.too_few}, {"not_applicable", s.not_applicable},
                       {"compared_cases", s.compared_cases}, {"base_only", s.base_only},
                       {"candidate_only", s.cand_only}, {"failed_cases", s.failed_cases},
                       {"regressed", r.regressed()}, {"inconclusive", r.inconclusive()}}}};
}

std::string compare_summary_line(const CompareReport& r) {
  return "llmbench compare: " + summary_headline(r.summary, r.settings.threshold_only) + " (" + summary_details(r.summary) +
         "; " + settings_text(r.settings) + ")";
}

void print_report(std::ostream& out, const std::string& format, const CompareReport& r) {
  if (format == "json") {
    out << compare_json(r).dump(2) << "\n";
    return;
  }
  if (format == "csv") {
    print_csv(out, compare_header(), compare_rows(r, ""));
    return;
  }
  const std::string headline =
      "llmbench compare: " + summary_headline(r.summary, r.settings.threshold_only);
  if (format == "md") {
    out << "**" << headline << "**\n\n";
    out << summary_details(r.summary) << "; " << settings_text(r.settings) << ".\n";
    out << "Base: `" << run_text(*r.base) << "`; candidate: `" << run_text(*r.cand) << "`.\n\n";
    for (const auto& w : r.warnings) out << "- **warning:** " << w << "\n";
    for (const auto& n : r.env)
      if (!n.warning) out << "- info: " << n.text() << "\n";
    if (r.threads_ignored) out << "- cases are matched ignoring threads\n";
    if (!r.env.empty() || r.threads_ignored || !r.warnings.empty()) out << "\n";
    print_markdown(out, compare_header(), compare_rows(r, ""));
    return;
  }
  out << compare_summary_line(r) << "\n";
  out << "base " << run_text(*r.base) << ", candidate " << run_text(*r.cand) << "\n";
  for (const auto& w : r.warnings) out << "warning: " << w << "\n";
  out << "\n";
  print_table(out, compare_header(), compare_rows(r, "-"));
}

}  // namespace llmbench
