// Output formats of the interleaved gate (see gate_output.h).
#include "tools/report/gate_output.h"

#include <fmt/core.h>

namespace llmbench {

namespace {

std::string fmt_value(double v, const MetricInfo& info) {
  return info.higher_is_better ? fmt::format("{:.1f}", v) : fmt::format("{:.4f}", v);
}

std::string settings_text(const GateReport& g) {
  std::string metrics;
  for (Metric m : g.settings.metrics) {
    if (!metrics.empty()) metrics += ",";
    metrics += metric_info(m).name;
  }
  return fmt::format("metrics {}; alpha {:g}; threshold {:g}%; {} rounds ({} complete, base first "
                     "in {}), order seed {}",
                     metrics, g.settings.alpha, g.settings.threshold * 100, g.rounds,
                     g.rounds_complete, g.base_first, g.order_seed) +
         (g.stopping.empty() ? "" : "; " + g.stopping);
}

nlohmann::ordered_json opt(const std::optional<double>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

}  // namespace

Row gate_header() {
  return {"case", "metric", "rounds", "base_median", "cand_median", "ratio", "ci_low",
          "ci_high", "p_value", "verdict", "aa_ratio", "noise_pct"};
}

std::vector<Row> gate_rows(const GateReport& g, const std::string& na) {
  std::vector<Row> rows;
  for (const GateCase& c : g.cases) {
    if (c.status != CaseStatus::kCompared) {
      rows.push_back({c.label, "-", na, na, na, na, na, na, na, case_status_name(c.status), na, na});
      continue;
    }
    for (const PairedMetric& m : c.metrics) {
      const MetricInfo& info = metric_info(m.metric);
      auto val = [&](const std::optional<double>& v) { return v ? fmt_value(*v, info) : na; };
      auto r4 = [&](const std::optional<double>& v) { return v ? fmt::format("{:.4f}", *v) : na; };
      rows.push_back({c.label, info.column, m.rounds ? std::to_string(m.rounds) : na,
                      val(m.median_base), val(m.median_cand), r4(m.ratio), r4(m.ci_low),
                      r4(m.ci_high), m.test ? fmt::format("{:.3g}", m.test->p_value) : na,
                      verdict_name(m.verdict), r4(m.aa_ratio),
                      m.aa_noise ? fmt::format("{:.1f}", *m.aa_noise * 100) : na});
    }
  }
  return rows;
}

std::string noise_floor_text(const GateReport& g) {
  if (!g.noise_floor) return "noise floor: n/a (fewer than 2 rounds)";
  return fmt::format(
      "noise floor {:.1f}% (A/A: each side against itself in adjacent rounds, {:g}% interval; "
      "largest at {}): changes smaller than this are within this machine's noise today",
      *g.noise_floor * 100, (1 - g.settings.alpha) * 100, g.noise_floor_at);
}

nlohmann::ordered_json gate_json(const GateReport& g, const RoundsResult& r) {
  using nlohmann::ordered_json;
  ordered_json metrics = ordered_json::array();
  for (Metric m : g.settings.metrics) metrics.push_back(metric_info(m).name);
  ordered_json rounds = ordered_json::array();
  for (const SideRun& s : r.runs)
    rounds.push_back({{"round", s.round}, {"side", s.base ? "base" : "candidate"},
                      {"position", s.position}, {"exit_code", s.exit_code},
                      {"wall_s", s.wall_s},
                      {"run_id", s.run ? ordered_json(s.run->run.id) : ordered_json(nullptr)}});
  ordered_json cases = ordered_json::array();
  for (const GateCase& c : g.cases) {
    ordered_json j = {{"case", c.label}, {"status", case_status_name(c.status)},
                      {"rounds_failed", c.rounds_failed}};
    ordered_json per_metric = ordered_json::object();
    for (const PairedMetric& m : c.metrics) {
      per_metric[metric_info(m.metric).name] = {
          {"verdict", verdict_name(m.verdict)},
          {"unit", metric_info(m.metric).unit},
          {"rounds", m.rounds},
          {"decided_at_round", m.decided_at ? ordered_json(*m.decided_at) : ordered_json(nullptr)},
          {"median_base", opt(m.median_base)},
          {"median_candidate", opt(m.median_cand)},
          {"ratio", opt(m.ratio)},
          {"ci_low", opt(m.ci_low)},
          {"ci_high", opt(m.ci_high)},
          {"p_value", m.test ? ordered_json(m.test->p_value) : ordered_json(nullptr)},
          {"signed_rank_statistic", m.test ? ordered_json(m.test->statistic) : ordered_json(nullptr)},
          {"p_exact", m.test ? ordered_json(m.test->exact) : ordered_json(nullptr)},
          {"aa_pairs", m.aa_pairs},
          {"aa_ratio", opt(m.aa_ratio)},
          {"aa_ci_low", opt(m.aa_ci_low)},
          {"aa_ci_high", opt(m.aa_ci_high)},
          {"aa_noise_pct", m.aa_noise ? ordered_json(*m.aa_noise * 100) : ordered_json(nullptr)}};
    }
    j["metrics"] = per_metric;
    cases.push_back(std::move(j));
  }
  const CompareSummary& s = g.summary;
  return {{"mode", "interleaved"},
          {"gate_db", r.gate_db},
          {"gate_id", r.gate_id},
          {"base_db", r.base_db},
          {"candidate_db", r.cand_db},
          {"wall_s", r.wall_s},
          {"settings", {{"metrics", metrics}, {"alpha", g.settings.alpha},
                        {"threshold_pct", g.settings.threshold * 100},
                        {"rounds", g.rounds}, {"rounds_complete", g.rounds_complete},
                        {"base_first", g.base_first}, {"order_seed", g.order_seed},
                        {"bootstrap_resamples", kBootstrapResamples},
                        {"bootstrap_seed", kBootstrapSeed},
                        {"stopping", g.stopping}}},
          {"noise_floor_pct", g.noise_floor ? ordered_json(*g.noise_floor * 100) : ordered_json(nullptr)},
          {"noise_floor_at", g.noise_floor_at},
          {"warnings", g.warnings},
          {"rounds", rounds},
          {"cases", cases},
          {"summary", {{"regressions", s.slower}, {"improvements", s.faster}, {"same", s.same},
                       {"too_few_rounds", s.too_few}, {"not_applicable", s.not_applicable},
                       {"compared_cases", s.compared_cases}, {"base_only", s.base_only},
                       {"candidate_only", s.cand_only}, {"failed_cases", s.failed_cases},
                       {"regressed", g.regressed()}, {"inconclusive", g.inconclusive()}}}};
}

void print_gate_report(std::ostream& out, const std::string& format, const GateReport& g,
                       const RoundsResult& r) {
  if (format == "json") {
    out << gate_json(g, r).dump(2) << "\n";
    return;
  }
  if (format == "csv") {
    print_csv(out, gate_header(), gate_rows(g, ""));
    return;
  }
  const std::string headline = "llmbench compare (interleaved): " + summary_headline(g.summary);
  const std::string details = summary_details(g.summary);
  if (format == "md") {
    out << "**" << headline << "**\n\n";
    out << details << "; " << settings_text(g) << "; " << fmt::format("{:.0f} s", r.wall_s)
        << ".\n\n";
    out << "**" << noise_floor_text(g) << "**\n\n";
    for (const auto& w : g.warnings) out << "- **warning:** " << w << "\n";
    if (!g.warnings.empty()) out << "\n";
    print_markdown(out, gate_header(), gate_rows(g, ""));
    return;
  }
  out << headline << " (" << details << "; " << settings_text(g) << "; "
      << fmt::format("{:.0f} s", r.wall_s) << ")\n";
  out << noise_floor_text(g) << "\n";
  out << "base runs in " << r.base_db << ", candidate runs in " << r.cand_db << "\n\n";
  print_table(out, gate_header(), gate_rows(g, "-"));
}

}  // namespace llmbench
