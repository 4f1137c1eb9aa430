// What `llmbench compare` compares and how it decides: the metrics (TTFT, TPOT, e2e,
// throughput) with their direction, the settings (alpha, threshold), and the verdict rule that
// turns two per-repetition samples into faster / slower / same / too few samples / n/a.
// Pure: the samples come from tools/store/run_reader.h, the statistics from compare_stats.h.
//
// Verdict rule (docs/metrics.md, "compare"), with the Hodges-Lehmann ratio r = cand / base,
// the two-sided Mann-Whitney p-value p, alpha and the threshold t (a fraction):
//   too few samples  either side has fewer than kMinSamples repetitions, or the sample sizes
//                    cannot reach p < alpha even when the two samples do not overlap at all;
//   slower           p < alpha and the candidate is worse by more than the factor (1 + t):
//                    r > 1 + t for times, r < 1 / (1 + t) for throughput;
//   faster           p < alpha and the candidate is better by more than (1 + t):
//                    r < 1 / (1 + t) for times, r > 1 + t for throughput;
//   same             otherwise.
// With CompareSettings::threshold_only (one run per side: no valid test), "p < alpha" is dropped
// and a change must be certain on the interval alone: slower / faster only when the whole
// Hodges-Lehmann interval lies beyond the factor (ci_low > 1 + t for times), printed "slower
// beyond threshold" / "faster beyond threshold"; otherwise "same or unknown" (kUnknown), never
// "same". "too few samples" means fewer than kMinSamples repetitions on a side.
// The factor is symmetric on a log scale, so a latency and the throughput derived from it
// (its reciprocal) always get the same verdict.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "tools/compare/compare_stats.h"
#include "tools/store/run_reader.h"

namespace llmbench {

struct MetricInfo {
  Metric metric;
  const char* name;     // "ttft": the --metric word and the json key
  const char* column;   // "ttft_ms": the metric column of table, md and csv (as in `run`)
  const char* unit;     // "ms" or "tok/s"
  bool higher_is_better;
};

const std::vector<MetricInfo>& all_metrics();
const MetricInfo& metric_info(Metric m);

inline constexpr int kMinSamples = 3;

struct CompareSettings {
  double alpha = 0.05;         // significance level of the two-sided test, in (0, 1)
  double threshold = 0.05;     // smallest change that counts, as a fraction (--threshold 5)
  std::vector<Metric> metrics = {Metric::kTtft, Metric::kTpot, Metric::kE2e};
  // One run per side (the two-database mode): the repetitions of a run share that minute's
  // machine state, so the Mann-Whitney p-value is no valid test between the runs. When set,
  // the p-value is still computed and shown, but the verdict is the threshold alone: slower
  // when the ratio is worse than 1 + t, faster when better by that factor (at least
  // kMinSamples repetitions per side). `llmbench compare` sets it unless
  // --repetitions-independent is given.
  bool threshold_only = false;
  // With threshold_only: the user asked for a threshold-only gate by name (--threshold-gate), so
  // a change beyond the threshold counts as a regression (exit 1). Without it one run per side
  // is no valid test, and `compare` exits 3 whatever the verdicts.
  bool threshold_gate = false;
  // Set when each sample is one run's median (several runs per side, compare_runs.h); only
  // changes how outputs name the rule.
  bool runs_as_unit = false;
};

enum class Verdict { kFaster, kSlower, kSame, kTooFew, kNotApplicable, kUnknown };
// "faster", "slower", "same", "too few samples", "n/a", "same or unknown"; with
// `threshold_only`, "faster beyond threshold" and "slower beyond threshold".
const char* verdict_name(Verdict v, bool threshold_only = false);

// One metric of one matched case.
struct MetricComparison {
  Metric metric;
  Verdict verdict = Verdict::kNotApplicable;
  int n_base = 0, n_cand = 0;
  // Set unless the verdict is n/a (medians) or n/a / too few samples (the rest).
  std::optional<double> median_base, median_cand;
  std::optional<RatioEstimate> ratio;
  std::optional<MannWhitney> test;
};

// Compares per-repetition samples of `metric`. nullopt on either side means the metric does
// not apply to the case (TPOT without a decode step): verdict n/a.
MetricComparison compare_samples(Metric metric, const std::optional<std::vector<double>>& base,
                                 const std::optional<std::vector<double>>& cand,
                                 const CompareSettings& settings);

}  // namespace llmbench
