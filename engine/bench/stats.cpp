// Summary statistics (see stats.h for the exact definitions).
#include "engine/bench/stats.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "kernels/common/error.h"

namespace llmbench {

double mean(const std::vector<double>& xs) {
  LLMBENCH_CHECK(!xs.empty(), "mean of no samples");
  double s = 0;
  for (double x : xs) s += x;
  return s / double(xs.size());
}

double percentile_sorted(const std::vector<double>& xs, double p) {
  LLMBENCH_CHECK(!xs.empty(), "percentile of no samples");
  LLMBENCH_CHECK(p >= 0 && p <= 100, "percentile outside [0, 100]");
  const double rank = p / 100.0 * double(xs.size() - 1);
  const auto lo = std::size_t(std::floor(rank));
  const auto hi = std::min(lo + 1, xs.size() - 1);
  return xs[lo] + (rank - double(lo)) * (xs[hi] - xs[lo]);
}

double percentile(std::vector<double> xs, double p) {
  std::sort(xs.begin(), xs.end());
  return percentile_sorted(xs, p);
}

double median(const std::vector<double>& xs) { return percentile(xs, 50.0); }

double stdev(const std::vector<double>& xs) {
  LLMBENCH_CHECK(!xs.empty(), "stdev of no samples");
  if (xs.size() < 2) return 0.0;
  // Two passes: the one-pass sum-of-squares formula loses precision on large, close values
  // (ns timestamps).
  const double m = mean(xs);
  double ss = 0;
  for (double x : xs) ss += (x - m) * (x - m);
  return std::sqrt(ss / double(xs.size() - 1));
}

SampleStats sample_stats(std::vector<double> xs) {
  LLMBENCH_CHECK(!xs.empty(), "statistics of no samples");
  std::sort(xs.begin(), xs.end());
  SampleStats s;
  s.n = int(xs.size());
  s.mean = mean(xs);
  s.stdev = stdev(xs);
  s.sorted = std::move(xs);
  return s;
}

}  // namespace llmbench
