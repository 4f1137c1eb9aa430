// Paired statistics behind the interleaved gate (`llmbench compare --run`): one paired
// difference per round (the log of candidate / base, both measured back to back in that
// round), tested with the Wilcoxon signed-rank test, estimated with the Hodges-Lehmann
// pseudo-median and bracketed with a paired bootstrap over rounds. Pure functions on plain
// vectors with exact unit tests (tests/compare/test_compare_paired.cpp). No verdicts, no I/O:
// compare_gate.h turns these numbers into faster / slower / same.
//
// Why rounds and not repetitions: repetitions inside one run share that minute's machine
// state (another job, the CPU clock), so they are not independent and a two-sample test over
// them reads a shift of the whole run as a significant change. A round's two sides share the
// same weather; the differences between rounds are what is independent.
//
// Definitions (docs/metrics.md, "compare"):
//   Wilcoxon signed-rank, two-sided, zero differences dropped (scipy's zero_method="wilcox"):
//     n = number of non-zero d_i; ranks of |d_i| with mid-ranks for ties;
//     W+ = sum of the ranks of positive d_i, W- = n (n + 1) / 2 - W+, T = min(W+, W-).
//     exact   when n <= kSignedRankExactMaxN and no |d_i| is tied: the null distribution of W+
//             (each sign +/- with probability 1/2) counted by dynamic programming,
//             p = min(1, 2 P(W+ <= T));
//     normal  otherwise: z = (T - n (n + 1) / 4) / sigma,
//             sigma^2 = n (n + 1) (2n + 1) / 24 - sum(t^3 - t) / 48 over groups of tied |d|,
//             p = 2 Phi(z) (no continuity correction); these are scipy.stats.wilcoxon's
//             method="exact" and method="asymptotic" (correction=False). p = 1 when n = 0.
//   Hodges-Lehmann pseudo-median: the median of the n (n + 1) / 2 Walsh averages
//     (d_i + d_j) / 2, i <= j (for an even count, the mean of the middle two).
//   Paired bootstrap: B resamples of the rounds with replacement (index = the top bits of
//     std::mt19937_64's output times n, so the stream is the same on every platform), the
//     pseudo-median of each; the interval is the percentile interval: sorted estimates at
//     positions floor((B - 1) alpha / 2) and ceil((B - 1) (1 - alpha / 2)).
#pragma once
#include <cstdint>
#include <vector>

namespace llmbench {

// Largest number of non-zero differences for which the exact null distribution is used.
inline constexpr int kSignedRankExactMaxN = 50;

struct SignedRank {
  double w_plus = 0;     // sum of the ranks of the positive differences
  double statistic = 0;  // T = min(W+, W-), scipy's statistic for the two-sided test
  int n = 0;             // non-zero differences used
  double p_value = 1;    // two-sided
  bool exact = false;
};

SignedRank wilcoxon_signed_rank(const std::vector<double>& d);

// Counts of the 2^n equally likely sign assignments giving each W+ = 0 .. n (n + 1) / 2 (no
// ties). Exact in 64-bit integers for n <= kSignedRankExactMaxN (2^50 arrangements in all).
std::vector<std::uint64_t> signed_rank_null_counts(int n);

// The smallest two-sided p-value n paired differences can reach (all of one sign, no ties):
// 2 / 2^n = 2^(1 - n). Below 6 rounds it is at least 0.0625, so alpha 0.05 needs 6 or more.
double signed_rank_min_p(int n);

// Median of the Walsh averages; throws llmbench::Error on an empty input.
double pseudo_median(const std::vector<double>& d);

struct BootstrapInterval {
  double low = 0, high = 0;
  double confidence = 0;  // 1 - alpha
  int resamples = 0;
};

// Percentile interval of the pseudo-median over `resamples` resamples of d with replacement,
// drawn from std::mt19937_64(seed). d must be non-empty, alpha in (0, 1), resamples >= 1.
BootstrapInterval paired_bootstrap(const std::vector<double>& d, double alpha, int resamples,
                                   std::uint64_t seed);

}  // namespace llmbench
