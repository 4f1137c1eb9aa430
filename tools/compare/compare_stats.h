// Rank statistics behind `llmbench compare`: the two-sided Mann-Whitney U test and the
// Hodges-Lehmann estimate of the ratio between two samples with its distribution-free
// confidence interval. Pure functions on plain vectors, tested against scipy.stats values and
// brute-force enumeration (tests/compare/test_compare_stats.cpp). No verdicts and no I/O here:
// compare_verdict.h turns these numbers into faster / slower / same.
//
// Definitions (docs/metrics.md, "compare"):
//   U (of the base sample x against the candidate y) = #{(i, j): x_i > y_j} + 0.5 #{x_i == y_j},
//   computed from mid-ranks. scipy.stats.mannwhitneyu(x, y).statistic is the same number.
//   p-value, two-sided:
//     exact   when both samples have at most kExactMaxN values and no value is tied: the null
//             distribution of U is counted by dynamic programming,
//             p = min(1, 2 P(U >= max(U, n1 n2 - U)));
//     normal  otherwise: z = (max(U, n1 n2 - U) - n1 n2 / 2 - 0.5) / sigma with the tie-corrected
//             sigma^2 = n1 n2 / 12 ((n + 1) - sum(t^3 - t) / (n (n - 1))), p = 2 (1 - Phi(z)),
//             i.e. scipy's method="asymptotic" with its continuity correction; p = 1 when
//             sigma = 0 (every value equal).
#pragma once
#include <cstdint>
#include <vector>

namespace llmbench {

// Largest sample size for which the exact null distribution is used.
inline constexpr int kExactMaxN = 20;

struct MannWhitney {
  double u = 0;        // U of the first sample (see above)
  double p_value = 1;  // two-sided
  bool exact = false;  // true when the exact null distribution gave p
};

// Both samples must be non-empty (throws llmbench::Error otherwise).
MannWhitney mann_whitney_u(const std::vector<double>& x, const std::vector<double>& y);

// The number of the C(n1 + n2, n1) equally likely rank arrangements under the null hypothesis
// that give each U = 0 .. n1 n2 (no ties). Index u of the result holds the count for U = u.
// Exact in 64-bit integers for n1, n2 <= kExactMaxN (C(40, 20) < 2^38).
std::vector<std::uint64_t> mann_whitney_null_counts(int n1, int n2);

// The smallest two-sided p-value any pair of samples of these sizes can reach (complete
// separation): 2 / C(n1 + n2, n1) when the exact test applies, else from the normal
// approximation. Used to say "too few samples" when even a total separation could not be
// significant.
double mann_whitney_min_p(int n1, int n2);

// Standard normal upper-tail probability 1 - Phi(z), and its inverse (z with 1 - Phi(z) = q).
double normal_sf(double z);
double normal_isf(double q);

struct RatioEstimate {
  double ratio = 1;    // Hodges-Lehmann: median over all pairs of cand_j / base_i
  double ci_low = 1;   // distribution-free confidence interval for the ratio
  double ci_high = 1;
  double confidence = 0;  // the interval's nominal level, 1 - alpha
};

// The Hodges-Lehmann shift of log(cand) against log(base), exponentiated: the median of the
// n1 n2 pairwise ratios cand_j / base_i (for an even count, the geometric mean of the middle
// two). The interval is [R_(k), R_(n1 n2 + 1 - k)] of the sorted ratios, where k is the
// smallest integer with P(U <= k) >= alpha / 2 under the exact null distribution (n1, n2 <=
// kExactMaxN), or k = floor(n1 n2 / 2 - z_(1 - alpha/2) sqrt(n1 n2 (n1 + n2 + 1) / 12) + 0.5)
// otherwise, and at least 1 (R's wilcox.test(conf.int = TRUE) on log values; the interval's
// coverage is at least 1 - alpha for continuous data). Every value must be > 0 (throws
// llmbench::Error otherwise); alpha in (0, 1).
RatioEstimate hodges_lehmann_ratio(const std::vector<double>& base, const std::vector<double>& cand,
                                   double alpha);

}  // namespace llmbench
