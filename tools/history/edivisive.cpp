// E-divisive means with a permutation test (see edivisive.h).
#include "tools/history/edivisive.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <utility>

#include "kernels/common/error.h"

namespace llmbench {

namespace {

// Fenwick tree of counts and sums over value ranks 0 .. n-1.
class Fenwick {
 public:
  explicit Fenwick(std::size_t n) : cnt_(n + 1, 0), sum_(n + 1, 0.0) {}
  void add(std::size_t rank, double v) {
    for (std::size_t i = rank + 1; i < cnt_.size(); i += i & (~i + 1)) {
      cnt_[i] += 1;
      sum_[i] += v;
    }
  }
  // Count and sum of the values with rank < `rank`.
  std::pair<double, double> below(std::size_t rank) const {
    double c = 0, s = 0;
    for (std::size_t i = rank; i > 0; i -= i & (~i + 1)) {
      c += double(cnt_[i]);
      s += sum_[i];
    }
    return {c, s};
  }

 private:
  std::vector<std::int64_t> cnt_;
  std::vector<double> sum_;
};

// Ranks 0 .. n-1 of x (ties broken by position: equal values are 0 apart, so any order works).
std::vector<std::size_t> ranks_of(const std::vector<double>& x) {
  std::vector<std::size_t> order(x.size());
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return x[a] < x[b]; });
  std::vector<std::size_t> rank(x.size());
  for (std::size_t r = 0; r < order.size(); ++r) rank[order[r]] = r;
  return rank;
}

// Forward (reversed = false): within[t] = sum over pairs i < j < t of |x_i - x_j|, t = 0 .. n.
// Reversed: within[t] = sum over pairs t <= i < j < end of |x_i - x_j|, t = 0 .. end.
void within_sums(const std::vector<double>& x, const std::vector<std::size_t>& rank, bool reversed,
                 std::size_t end, std::vector<double>& within) {
  const std::size_t n = x.size();
  within.assign(n + 1, 0.0);
  Fenwick f(n);
  double total = 0, seen = 0, acc = 0;
  for (std::size_t s = 0; s < end; ++s) {
    const std::size_t t = reversed ? end - 1 - s : s;
    const auto [c_below, s_below] = f.below(rank[t]);
    const double c_above = seen - c_below, s_above = total - s_below;
    acc += x[t] * c_below - s_below + s_above - x[t] * c_above;
    f.add(rank[t], x[t]);
    total += x[t];
    seen += 1;
    if (reversed)
      within[t] = acc;      // pairs inside x[t..end)
    else
      within[t + 1] = acc;  // pairs inside x[0..t+1)
  }
}

// The right ends kappa the statistic is maximised over (see edivisive.h).
std::vector<std::size_t> right_ends(std::size_t n) {
  std::vector<std::size_t> k;
  for (std::size_t j = 1; j <= kRightEnds; ++j) k.push_back(n * j / kRightEnds);
  return k;
}

std::vector<double> q_with_ranks(const std::vector<double>& x, const std::vector<std::size_t>& rank,
                                 int min_size) {
  const std::size_t n = x.size();
  std::vector<double> q(n + 1, 0.0), left, right;
  const std::size_t lo = std::size_t(std::max(min_size, 2));
  if (n < 2 * lo) return q;
  within_sums(x, rank, false, n, left);
  for (std::size_t kappa : right_ends(n)) {
    if (kappa < 2 * lo) continue;
    within_sums(x, rank, true, kappa, right);
    const double all = left[kappa];
    for (std::size_t tau = lo; tau + lo <= kappa; ++tau) {
      const double m = double(tau), k = double(kappa - tau);
      const double a = left[tau], b = right[tau];
      const double cross = all - a - b;
      const double e =
          2.0 * cross / (m * k) - 2.0 * a / (m * (m - 1.0)) - 2.0 * b / (k * (k - 1.0));
      q[tau] = std::max(q[tau], m * k / (m + k) * e);
    }
  }
  return q;
}

Split best_of(const std::vector<double>& q, std::size_t n, int min_size) {
  Split s;
  const std::size_t lo = std::size_t(std::max(min_size, 2));
  for (std::size_t tau = lo; tau + lo <= n; ++tau)
    if (s.tau < 0 || q[tau] > s.q) {
      s.tau = int(tau);
      s.q = q[tau];
    }
  return s;
}

// One segment [begin, end) of the series: its best split and its permutation maxima.
struct Segment {
  int begin = 0, end = 0;
  Split best;                 // tau relative to begin
  std::vector<double> perm_q; // the best Q of each permutation (size R); empty: too short
};

std::uint64_t segment_seed(std::uint64_t seed, int begin, int end) {
  // splitmix64 of the bounds mixed into the seed: each segment has its own stream.
  std::uint64_t z = seed ^ (std::uint64_t(std::uint32_t(begin)) << 32 | std::uint32_t(end));
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

Segment make_segment(const std::vector<double>& series, int begin, int end, const EDivisiveOptions& o) {
  Segment s;
  s.begin = begin;
  s.end = end;
  std::vector<double> x(series.begin() + begin, series.begin() + end);
  std::vector<std::size_t> rank = ranks_of(x);
  s.best = best_of(q_with_ranks(x, rank, o.min_size), x.size(), o.min_size);
  if (s.best.tau < 0) return s;
  std::mt19937_64 rng(segment_seed(o.seed, begin, end));
  s.perm_q.reserve(std::size_t(o.permutations));
  for (int r = 0; r < o.permutations; ++r) {
    // Fisher-Yates, shuffling values and their ranks together (a permutation keeps the ranks).
    for (std::size_t i = x.size() - 1; i > 0; --i) {
      const auto j = std::size_t((static_cast<unsigned __int128>(rng()) * (i + 1)) >> 64);
      std::swap(x[i], x[j]);
      std::swap(rank[i], rank[j]);
    }
    s.perm_q.push_back(best_of(q_with_ranks(x, rank, o.min_size), x.size(), o.min_size).q);
  }
  return s;
}

}  // namespace

std::vector<double> energy_q(const std::vector<double>& x, int min_size) {
  return q_with_ranks(x, ranks_of(x), min_size);
}

Split best_split(const std::vector<double>& x, int min_size) {
  return best_of(energy_q(x, min_size), x.size(), min_size);
}

std::vector<ChangePoint> e_divisive(const std::vector<double>& x, const EDivisiveOptions& o) {
  LLMBENCH_CHECK(o.max_p > 0 && o.max_p <= 1, "e_divisive: max_p outside (0, 1]");
  LLMBENCH_CHECK(o.permutations >= 1, "e_divisive: needs at least one permutation");
  LLMBENCH_CHECK(o.min_size >= 2, "e_divisive: min_size below 2");
  for (double v : x) LLMBENCH_CHECK(std::isfinite(v), "e_divisive: a value is NaN or infinite");
  std::vector<ChangePoint> found;
  std::vector<Segment> segments;
  segments.push_back(make_segment(x, 0, int(x.size()), o));
  for (;;) {
    // The candidate: the largest Q over segments (ties: the earliest segment).
    int best = -1;
    for (std::size_t i = 0; i < segments.size(); ++i)
      if (segments[i].best.tau >= 0 && (best < 0 || segments[i].best.q > segments[std::size_t(best)].best.q))
        best = int(i);
    if (best < 0) break;
    const double observed = segments[std::size_t(best)].best.q;
    int at_least = 0;
    for (int r = 0; r < o.permutations; ++r) {
      double m = 0;
      bool any = false;
      for (const Segment& s : segments)
        if (!s.perm_q.empty() && (!any || s.perm_q[std::size_t(r)] > m)) {
          m = s.perm_q[std::size_t(r)];
          any = true;
        }
      if (any && m >= observed) ++at_least;
    }
    const double p = double(1 + at_least) / double(o.permutations + 1);
    if (p > o.max_p) break;
    const Segment s = segments[std::size_t(best)];
    const int cut = s.begin + s.best.tau;
    found.push_back({cut, s.best.q, p});
    segments.erase(segments.begin() + best);
    segments.push_back(make_segment(x, s.begin, cut, o));
    segments.push_back(make_segment(x, cut, s.end, o));
  }
  std::sort(found.begin(), found.end(),
            [](const ChangePoint& a, const ChangePoint& b) { return a.index < b.index; });
  return found;
}

}  // namespace llmbench
