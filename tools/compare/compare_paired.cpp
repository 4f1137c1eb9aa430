// Wilcoxon signed-rank, Hodges-Lehmann pseudo-median, paired bootstrap (see compare_paired.h).
#include "tools/compare/compare_paired.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "kernels/common/error.h"
#include "tools/compare/compare_stats.h"

namespace llmbench {

std::vector<std::uint64_t> signed_rank_null_counts(int n) {
  LLMBENCH_CHECK(n >= 0 && n <= kSignedRankExactMaxN,
                 "exact signed-rank distribution needs 0 <= n <= kSignedRankExactMaxN");
  // Adding rank k either leaves W+ as it was (negative sign) or adds k (positive sign).
  const std::size_t max_w = std::size_t(n) * std::size_t(n + 1) / 2;
  std::vector<std::uint64_t> c(max_w + 1, 0);
  c[0] = 1;
  std::size_t reach = 0;
  for (int k = 1; k <= n; ++k) {
    reach += std::size_t(k);
    for (std::size_t w = reach; w >= std::size_t(k); --w) c[w] += c[w - std::size_t(k)];
  }
  return c;
}

double signed_rank_min_p(int n) {
  LLMBENCH_CHECK(n >= 0, "negative sample size");
  return std::min(1.0, std::ldexp(1.0, 1 - n));
}

SignedRank wilcoxon_signed_rank(const std::vector<double>& d) {
  std::vector<double> nonzero;
  for (double x : d)
    if (x != 0) nonzero.push_back(x);
  SignedRank s;
  s.n = int(nonzero.size());
  if (s.n == 0) return s;  // nothing to test: p = 1

  // Mid-ranks of |d|, and the tie term sum(t^3 - t).
  const std::size_t n = nonzero.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::fabs(nonzero[a]) < std::fabs(nonzero[b]);
  });
  double tie_term = 0;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j + 1 < n && std::fabs(nonzero[order[j + 1]]) == std::fabs(nonzero[order[i]])) ++j;
    const double mid = (double(i) + double(j)) / 2.0 + 1.0;
    for (std::size_t k = i; k <= j; ++k)
      if (nonzero[order[k]] > 0) s.w_plus += mid;
    const double t = double(j - i + 1);
    tie_term += t * t * t - t;
    i = j + 1;
  }
  const double nn = double(n);
  const double total = nn * (nn + 1.0) / 2.0;
  s.statistic = std::min(s.w_plus, total - s.w_plus);

  if (tie_term == 0 && s.n <= kSignedRankExactMaxN) {
    // Without ties W+ is an integer and the null distribution is symmetric about total / 2.
    const auto counts = signed_rank_null_counts(s.n);
    const auto t = std::size_t(std::llround(s.statistic));
    double lower = 0;
    for (std::size_t w = 0; w <= t; ++w) lower += double(counts[w]);
    s.p_value = std::min(1.0, 2.0 * lower / std::ldexp(1.0, s.n));
    s.exact = true;
    return s;
  }
  const double var = nn * (nn + 1.0) * (2.0 * nn + 1.0) / 24.0 - tie_term / 48.0;
  if (!(var > 0)) return s;
  const double z = (s.statistic - nn * (nn + 1.0) / 4.0) / std::sqrt(var);  // <= 0
  s.p_value = std::min(1.0, 2.0 * normal_sf(-z));
  return s;
}

double pseudo_median(const std::vector<double>& d) {
  LLMBENCH_CHECK(!d.empty(), "pseudo-median of an empty sample");
  std::vector<double> walsh;
  walsh.reserve(d.size() * (d.size() + 1) / 2);
  for (std::size_t i = 0; i < d.size(); ++i)
    for (std::size_t j = i; j < d.size(); ++j) walsh.push_back((d[i] + d[j]) / 2.0);
  const std::size_t m = walsh.size();
  std::sort(walsh.begin(), walsh.end());
  return (walsh[m / 2] + walsh[(m - 1) / 2]) / 2.0;
}

BootstrapInterval paired_bootstrap(const std::vector<double>& d, double alpha, int resamples,
                                   std::uint64_t seed) {
  LLMBENCH_CHECK(!d.empty(), "bootstrap of an empty sample");
  LLMBENCH_CHECK(alpha > 0 && alpha < 1, "alpha outside (0, 1)");
  LLMBENCH_CHECK(resamples >= 1, "bootstrap needs at least one resample");
  std::mt19937_64 rng(seed);
  const auto n = static_cast<unsigned __int128>(d.size());
  std::vector<double> estimates, resample(d.size());
  estimates.reserve(std::size_t(resamples));
  for (int b = 0; b < resamples; ++b) {
    // floor(u * n / 2^64): the same index on every platform (std::uniform_int_distribution's
    // algorithm is left to the implementation).
    for (double& x : resample) x = d[std::size_t((static_cast<unsigned __int128>(rng()) * n) >> 64)];
    estimates.push_back(pseudo_median(resample));
  }
  std::sort(estimates.begin(), estimates.end());
  const double last = double(resamples - 1);
  BootstrapInterval ci;
  ci.low = estimates[std::size_t(std::floor(last * alpha / 2.0))];
  ci.high = estimates[std::size_t(std::ceil(last * (1.0 - alpha / 2.0)))];
  ci.confidence = 1.0 - alpha;
  ci.resamples = resamples;
  return ci;
}

}  // namespace llmbench
