// The interleaved gate's decision (`llmbench compare --run`): given rounds in which the base
// and the candidate each ran the same profile back to back (in a randomised order), it pairs
// every case by round and decides per metric on the per-round ratios. Pure: the rounds come
// from compare_rounds.h (or a test), the statistics from compare_paired.h; no I/O.
//
// Per case and metric (docs/metrics.md, "compare", "Interleaved rounds"):
//   d_r       = log(median of the candidate's repetitions in round r)
//               - log(median of the base's repetitions in round r), for each round where both
//               sides have the case with status ok (a repetition is never the unit);
//   ratio     = exp(pseudo-median of d), interval = exp(paired bootstrap percentile interval);
//   p         = two-sided Wilcoxon signed-rank p-value of d;
//   verdict   too few rounds when the rounds cannot reach p < alpha even if every one agrees
//             (2^(1 - n) >= alpha: fewer than 6 rounds at alpha 0.05); otherwise the same rule
//             as the two-database mode: slower when p < alpha and the ratio is worse than
//             1 + threshold, faster when p < alpha and it is better by that factor, else same.
//   A/A noise the same side against itself in adjacent rounds (round 2k against 2k - 1, for
//             both base and candidate): its pseudo-median ratio and bootstrap interval, and
//             noise = the interval's largest distance from 1, exp(max |log bound|) - 1. These
//             pairs lie a round apart, not back to back, so the noise is an upper estimate of
//             the scatter the paired ratio sees. The gate's noise floor is the largest noise
//             over its cases and metrics: changes below it cannot be told from this machine's
//             weather today.
// Warnings: an inconclusive gate (compare_report.h: no regression, and some metric had too few
// rounds or nothing was decided), a round whose process failed, a case with status error in some rounds, a noise
// floor above the threshold, and the environment differences that change timings by
// themselves (build type, CPU, GPU, driver, threads; compare_env.h) between the two builds.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tools/store/run_reader.h"
#include "tools/compare/compare_paired.h"
#include "tools/compare/compare_report.h"

namespace llmbench {

inline constexpr int kBootstrapResamples = 2000;
inline constexpr std::uint64_t kBootstrapSeed = 20261124;

// One round: both sides' runs of the profile. A side is null when its process failed.
struct GateRound {
  int round = 0;  // 1-based
  bool base_first = true;
  const LoadedRun* base = nullptr;
  const LoadedRun* cand = nullptr;
};

struct PairedMetric {
  Metric metric = Metric::kTtft;
  Verdict verdict = Verdict::kNotApplicable;
  int rounds = 0;  // rounds that gave a paired difference
  // Medians over rounds of each side's per-round median (set unless n/a).
  std::optional<double> median_base, median_cand;
  std::optional<double> ratio, ci_low, ci_high;  // candidate / base
  std::optional<SignedRank> test;
  int aa_pairs = 0;
  std::optional<double> aa_ratio, aa_ci_low, aa_ci_high, aa_noise;  // noise as a fraction
  std::vector<double> log_ratios;  // d, in round order (what the sequential rule reads)
  std::optional<int> decided_at;   // rounds auto: the rounds the sequential rule decided it at
};

struct GateCase {
  std::string label;
  CaseStatus status = CaseStatus::kCompared;  // kCompared, kBaseOnly, kCandOnly or an error
  int rounds_failed = 0;  // rounds where either side had status error for this case
  std::vector<PairedMetric> metrics;
};

struct GateReport {
  CompareSettings settings;
  int rounds = 0;           // rounds attempted
  int rounds_complete = 0;  // rounds where both sides' processes succeeded
  int base_first = 0;       // rounds in which the base ran first
  std::uint64_t order_seed = 0;
  std::vector<GateCase> cases;
  CompareSummary summary;
  std::optional<double> noise_floor;  // fraction; nullopt without A/A pairs
  std::string noise_floor_at;         // "tiny fp32 cpu b4 p32 n8 t1 tpot_ms"
  std::vector<std::string> warnings;
  // rounds auto (compare_sequential.h): how the rounds stopped; "" for a fixed number of rounds.
  std::string stopping;

  bool regressed() const { return summary.slower > 0; }
  bool inconclusive() const { return summary_inconclusive(summary); }
};

// Paired differences of one case and metric over rounds: index i is round i's d, or nullopt.
PairedMetric decide_paired(Metric metric, const std::vector<std::optional<double>>& base_medians,
                           const std::vector<std::optional<double>>& cand_medians,
                           const CompareSettings& settings);

// Matches cases within each round (compare_match.h) and decides every case and metric.
GateReport build_gate_report(const std::vector<GateRound>& rounds, const CompareSettings& settings);

}  // namespace llmbench
