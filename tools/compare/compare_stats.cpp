// Mann-Whitney U and Hodges-Lehmann ratio (see compare_stats.h for the exact definitions).
#include "tools/compare/compare_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "kernels/common/error.h"

namespace llmbench {

namespace {

// Mid-ranks (1-based) of the pooled sample, and sum(t^3 - t) over groups of tied values.
struct Ranks {
  std::vector<double> rank;  // in the order of the pooled input
  double tie_term = 0;
  bool has_ties = false;
};

Ranks mid_ranks(const std::vector<double>& pooled) {
  const std::size_t n = pooled.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return pooled[a] < pooled[b]; });
  Ranks r;
  r.rank.resize(n);
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j + 1 < n && pooled[order[j + 1]] == pooled[order[i]]) ++j;
    const double mid = (double(i) + double(j)) / 2.0 + 1.0;
    for (std::size_t k = i; k <= j; ++k) r.rank[order[k]] = mid;
    const double t = double(j - i + 1);
    if (t > 1) {
      r.tie_term += t * t * t - t;
      r.has_ties = true;
    }
    i = j + 1;
  }
  return r;
}

double binomial(int n, int k) {
  double c = 1;
  for (int i = 1; i <= k; ++i) c = c * double(n - k + i) / double(i);
  return c;
}

// sigma of U under the null hypothesis, tie-corrected.
double u_sigma(double n1, double n2, double tie_term) {
  const double n = n1 + n2;
  return std::sqrt(n1 * n2 / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0))));
}

}  // namespace

std::vector<std::uint64_t> mann_whitney_null_counts(int n1, int n2) {
  LLMBENCH_CHECK(n1 >= 0 && n2 >= 0 && n1 <= kExactMaxN && n2 <= kExactMaxN,
                 "exact Mann-Whitney distribution needs 0 <= n1, n2 <= kExactMaxN");
  // c[i][j][u]: arrangements of i x-values and j y-values with U = u. The largest pooled value
  // is either an x (beating all j y-values: u - j from (i - 1, j)) or a y (from (i, j - 1)).
  // Rolling over i keeps one (n2 + 1) x (n1 n2 + 1) table per row.
  const std::size_t umax = std::size_t(n1) * std::size_t(n2);
  std::vector<std::vector<std::uint64_t>> prev(std::size_t(n2) + 1,
                                               std::vector<std::uint64_t>(umax + 1, 0));
  for (auto& row : prev) row[0] = 1;  // i = 0: one arrangement, U = 0
  for (int i = 1; i <= n1; ++i) {
    std::vector<std::vector<std::uint64_t>> cur(std::size_t(n2) + 1,
                                                std::vector<std::uint64_t>(umax + 1, 0));
    cur[0][0] = 1;  // j = 0: U = 0
    for (int j = 1; j <= n2; ++j)
      for (std::size_t u = 0; u <= umax; ++u) {
        std::uint64_t c = cur[std::size_t(j) - 1][u];
        if (u >= std::size_t(j)) c += prev[std::size_t(j)][u - std::size_t(j)];
        cur[std::size_t(j)][u] = c;
      }
    prev = std::move(cur);
  }
  return prev[std::size_t(n2)];
}

double normal_sf(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

double normal_isf(double q) {
  LLMBENCH_CHECK(q > 0 && q < 1, "normal_isf needs 0 < q < 1");
  // Bisection on the monotone normal_sf: 200 halvings of [-40, 40] reach double precision.
  double lo = -40, hi = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (normal_sf(mid) > q) lo = mid; else hi = mid;
  }
  return 0.5 * (lo + hi);
}

MannWhitney mann_whitney_u(const std::vector<double>& x, const std::vector<double>& y) {
  LLMBENCH_CHECK(!x.empty() && !y.empty(), "Mann-Whitney U of an empty sample");
  std::vector<double> pooled = x;
  pooled.insert(pooled.end(), y.begin(), y.end());
  const Ranks r = mid_ranks(pooled);
  const double n1 = double(x.size()), n2 = double(y.size());
  double rank_sum = 0;
  for (std::size_t i = 0; i < x.size(); ++i) rank_sum += r.rank[i];
  MannWhitney m;
  m.u = rank_sum - n1 * (n1 + 1.0) / 2.0;
  const double u_big = std::max(m.u, n1 * n2 - m.u);
  if (!r.has_ties && x.size() <= std::size_t(kExactMaxN) && y.size() <= std::size_t(kExactMaxN)) {
    // Without ties U is an integer; P(U >= u_big) from the counted null distribution.
    const auto counts = mann_whitney_null_counts(int(x.size()), int(y.size()));
    const auto from = std::size_t(std::llround(u_big));
    double upper = 0, total = 0;
    for (std::size_t u = 0; u < counts.size(); ++u) {
      total += double(counts[u]);
      if (u >= from) upper += double(counts[u]);
    }
    m.p_value = std::min(1.0, 2.0 * upper / total);
    m.exact = true;
    return m;
  }
  const double sigma = u_sigma(n1, n2, r.tie_term);
  if (!(sigma > 0)) return m;  // every value equal: no evidence of a difference
  const double z = (u_big - n1 * n2 / 2.0 - 0.5) / sigma;
  m.p_value = std::min(1.0, 2.0 * normal_sf(z));
  return m;
}

double mann_whitney_min_p(int n1, int n2) {
  LLMBENCH_CHECK(n1 > 0 && n2 > 0, "Mann-Whitney of an empty sample");
  if (n1 <= kExactMaxN && n2 <= kExactMaxN) return std::min(1.0, 2.0 / binomial(n1 + n2, n1));
  const double a = n1, b = n2;
  const double z = (a * b - a * b / 2.0 - 0.5) / u_sigma(a, b, 0);
  return std::min(1.0, 2.0 * normal_sf(z));
}

RatioEstimate hodges_lehmann_ratio(const std::vector<double>& base,
                                   const std::vector<double>& cand, double alpha) {
  LLMBENCH_CHECK(!base.empty() && !cand.empty(), "Hodges-Lehmann ratio of an empty sample");
  LLMBENCH_CHECK(alpha > 0 && alpha < 1, "alpha outside (0, 1)");
  std::vector<double> log_ratios;
  log_ratios.reserve(base.size() * cand.size());
  for (double b : base)
    for (double c : cand) {
      LLMBENCH_CHECK(b > 0 && c > 0, "Hodges-Lehmann ratio needs positive samples");
      log_ratios.push_back(std::log(c) - std::log(b));
    }
  std::sort(log_ratios.begin(), log_ratios.end());
  const std::size_t m = log_ratios.size();
  RatioEstimate e;
  e.confidence = 1.0 - alpha;
  e.ratio = std::exp(0.5 * (log_ratios[m / 2] + log_ratios[(m - 1) / 2]));

  const int n1 = int(base.size()), n2 = int(cand.size());
  std::size_t k = 0;  // 1-based order statistic of the lower bound
  if (n1 <= kExactMaxN && n2 <= kExactMaxN) {
    const auto counts = mann_whitney_null_counts(n1, n2);
    const double total = binomial(n1 + n2, n1);
    double cdf = 0;
    for (std::size_t u = 0; u < counts.size(); ++u) {
      cdf += double(counts[u]);
      if (cdf / total >= alpha / 2) {
        k = u;
        break;
      }
    }
  } else {
    const double a = n1, b = n2;
    const double half = a * b / 2.0;
    const double sd = std::sqrt(a * b * (a + b + 1.0) / 12.0);
    k = std::size_t(std::max(0.0, std::floor(half - normal_isf(alpha / 2) * sd + 0.5)));
  }
  k = std::clamp<std::size_t>(k, 1, (m + 1) / 2);
  e.ci_low = std::exp(log_ratios[k - 1]);
  e.ci_high = std::exp(log_ratios[m - k]);
  return e;
}

}  // namespace llmbench
