// Metrics and the verdict rule of `llmbench compare` (see compare_verdict.h).
#include "tools/compare/compare_verdict.h"

#include <algorithm>
#include <cmath>

#include "kernels/common/error.h"
#include "engine/bench/stats.h"

namespace llmbench {

const std::vector<MetricInfo>& all_metrics() {
  static const std::vector<MetricInfo> kMetrics = {
      {Metric::kTtft, "ttft", "ttft_ms", "ms", false},
      {Metric::kTpot, "tpot", "tpot_ms", "ms", false},
      {Metric::kE2e, "e2e", "e2e_ms", "ms", false},
      {Metric::kThroughput, "throughput", "throughput_tok_s", "tok/s", true},
  };
  return kMetrics;
}

const MetricInfo& metric_info(Metric m) {
  for (const auto& info : all_metrics())
    if (info.metric == m) return info;
  throw Error("unknown metric");
}

const char* verdict_name(Verdict v, bool threshold_only) {
  switch (v) {
    case Verdict::kFaster: return threshold_only ? "faster beyond threshold" : "faster";
    case Verdict::kSlower: return threshold_only ? "slower beyond threshold" : "slower";
    case Verdict::kUnknown: return "same or unknown";
    case Verdict::kSame: return "same";
    case Verdict::kTooFew: return "too few samples";
    case Verdict::kNotApplicable: return "n/a";
  }
  return "?";
}

MetricComparison compare_samples(Metric metric, const std::optional<std::vector<double>>& base,
                                 const std::optional<std::vector<double>>& cand,
                                 const CompareSettings& s) {
  MetricComparison c;
  c.metric = metric;
  if (!base || !cand || base->empty() || cand->empty()) return c;  // n/a
  c.n_base = int(base->size());
  c.n_cand = int(cand->size());
  c.median_base = median(*base);
  c.median_cand = median(*cand);
  // A ratio of times needs positive samples. A zero is a real measurement (a server whose
  // tokens all arrive in one socket read has TPOT 0): the metric then gets medians and "n/a".
  const auto positive = [](const std::vector<double>& v) {
    return std::all_of(v.begin(), v.end(), [](double x) { return x > 0 && std::isfinite(x); });
  };
  if (!positive(*base) || !positive(*cand)) return c;
  if (c.n_base < kMinSamples || c.n_cand < kMinSamples ||
      (!s.threshold_only && mann_whitney_min_p(c.n_base, c.n_cand) >= s.alpha)) {
    c.verdict = Verdict::kTooFew;
    return c;
  }
  c.test = mann_whitney_u(*base, *cand);
  c.ratio = hodges_lehmann_ratio(*base, *cand, s.alpha);
  // "worse" > 1 means the candidate is worse, whatever the metric's direction.
  const double worse = metric_info(metric).higher_is_better ? 1.0 / c.ratio->ratio : c.ratio->ratio;
  const double factor = 1.0 + s.threshold;
  if (s.threshold_only) {
    // No valid test: only an interval wholly beyond the factor is a change; the rest is unknown.
    const double lo = metric_info(metric).higher_is_better ? 1.0 / c.ratio->ci_high : c.ratio->ci_low;
    const double hi = metric_info(metric).higher_is_better ? 1.0 / c.ratio->ci_low : c.ratio->ci_high;
    c.verdict = lo > factor ? Verdict::kSlower : hi < 1.0 / factor ? Verdict::kFaster
                                                                    : Verdict::kUnknown;
    return c;
  }
  const bool significant = c.test->p_value < s.alpha;
  if (significant && worse > factor)
    c.verdict = Verdict::kSlower;
  else if (significant && worse < 1.0 / factor)
    c.verdict = Verdict::kFaster;
  else
    c.verdict = Verdict::kSame;
  return c;
}

}  // namespace llmbench
