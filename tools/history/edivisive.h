// E-divisive means (Matteson and James 2014, "A nonparametric approach for multiple change point
// analysis of multivariate data", JASA 109:505) on one univariate series, with the permutation
// significance test of that paper as Apache Otava (formerly Hunter) runs it: pure functions on a
// vector of doubles, deterministic for a seed. Not here: series, commits, reading or printing
// (history_check.h does that).
//
// Definitions (docs/ci.md, "Change points"), with the energy exponent alpha = 1:
//   For a segment x[0..n) split at tau (left X = x[0..tau), m = tau; right Y = x[tau..n),
//   k = n - tau):
//     E(tau) = 2/(m k) sum_{i,j} |X_i - Y_j| - 2/(m (m-1)) sum_{i<j} |X_i - X_j|
//                                            - 2/(k (k-1)) sum_{i<j} |Y_i - Y_j|
//     Q(tau) = m k / (m + k) E(tau)
//   A split's statistic is Q(tau) = max over right ends kappa of Q on x[0..kappa) split at tau
//   (m >= min_size and kappa - tau >= min_size), as the paper maximises over the right end; here
//   kappa runs over kRightEnds evenly spaced ends floor(n j / kRightEnds), j = 1 .. kRightEnds
//   (the segment's end included), not every index. Fixing kappa at the end alone, as MongoDB's
//   implementation does, loses a short excursion (up, then back down) to the mixed right side;
//   every kappa would cost O(n^2 log n) a segment. The sums for every tau come from running sweeps over the
//   values' ranks with Fenwick trees (sum_{i<t} |x_t - x_i| from the count and sum of the
//   smaller values): one forward sweep, one backward sweep per kappa, O(n log n) each.
//   Procedure: the series starts as one segment. Each iteration takes, over the current
//   segments, the split with the largest Q; then R permutations: each shuffles every segment's
//   values within the segment (std::mt19937_64, seeded per segment from the seed and the
//   segment's bounds, Fisher-Yates with the top-bits index rule of compare_paired.h) and takes
//   the largest Q over segments again; p = (1 + #{permuted >= observed}) / (R + 1). The split
//   is a change point when p <= max_p, and the iteration repeats on the new segments; the first
//   p > max_p ends the search. A segment's permutation maxima are computed once and reused.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace llmbench {

// Right ends of a segment the statistic is maximised over (see above).
inline constexpr std::size_t kRightEnds = 8;

struct EDivisiveOptions {
  double max_p = 0.01;      // a split is a change point when its permutation p-value <= this
  int permutations = 199;   // R; the smallest p-value is 1 / (R + 1) = 0.005
  int min_size = 3;         // fewest points on either side of a split
  std::uint64_t seed = 20261128;
};

struct Split {
  int tau = -1;   // first index of the right part; -1 when the segment is too short
  double q = 0;   // Q(tau)
};

struct ChangePoint {
  int index = 0;      // first index of the new segment (0 < index < n)
  double q = 0;       // Q of the split when it was found
  double p_value = 1; // its permutation p-value
};

// Q(tau) for tau = 0 .. n, maximised over the right ends (entries no right end admits with both
// sides at least min_size, and at least 2, long are 0).
std::vector<double> energy_q(const std::vector<double>& x, int min_size);

// The split of x with the largest Q (ties: the smallest tau).
Split best_split(const std::vector<double>& x, int min_size);

// Every change point, ordered by index. Throws llmbench::Error for a NaN or infinite value or
// options out of range (max_p in (0, 1], permutations >= 1, min_size >= 2).
std::vector<ChangePoint> e_divisive(const std::vector<double>& x, const EDivisiveOptions& o = {});

}  // namespace llmbench
