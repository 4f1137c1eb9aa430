// Small helpers shared by the kernel tests: seeded random fill and an element-wise closeness
// check that reports the worst element. Not a test framework; just what every kernel test needs.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <vector>

namespace llmbench::test {

// n floats uniform in [lo, hi), from a fixed seed so every run sees the same inputs.
inline std::vector<float> random_floats(std::size_t n, unsigned seed, float lo = -1.0f,
                                        float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// m random x rows of lda values whose padding columns (k..lda) are NaN: a kernel that read
// them would poison its result.
inline std::vector<float> padded_rows(int m, int k, int lda, unsigned seed) {
  std::vector<float> x = random_floats(static_cast<std::size_t>(m) * lda, seed);
  for (int i = 0; i < m; ++i)
    for (int p = k; p < lda; ++p) x[static_cast<std::size_t>(i) * lda + p] = NAN;
  return x;
}

// Passes when every got[i] is finite and |got[i] - ref[i]| <= atol + rtol * |ref[i]|.
// On failure names the worst element (largest excess over its tolerance) and the first few
// failing pairs. Use as EXPECT_TRUE(all_close(got, ref, atol, rtol)).
inline ::testing::AssertionResult all_close(const std::vector<float>& got,
                                            const std::vector<float>& ref, double atol,
                                            double rtol) {
  if (got.size() != ref.size()) {
    return ::testing::AssertionFailure()
           << "size mismatch: got " << got.size() << ", ref " << ref.size();
  }
  std::size_t n_bad = 0, worst = 0;
  double worst_excess = -1.0;
  std::ostringstream first_bad;
  first_bad.precision(9);  // enough digits to tell any two floats apart
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], r = ref[i];
    const double tol = atol + rtol * std::fabs(r);
    // NaN and Inf always fail: the comparison below is false for NaN, and Inf is checked.
    const bool ok = std::isfinite(g) && std::isfinite(r) && std::fabs(g - r) <= tol;
    if (ok) continue;
    const double excess = std::isfinite(g - r) ? std::fabs(g - r) - tol : INFINITY;
    if (n_bad == 0 || excess > worst_excess) {
      worst_excess = excess;
      worst = i;
    }
    if (n_bad < 5) first_bad << "\n  [" << i << "] got " << g << ", ref " << r;
    ++n_bad;
  }
  if (n_bad == 0) return ::testing::AssertionSuccess();
  std::ostringstream msg;
  msg.precision(9);
  msg << n_bad << " of " << got.size() << " elements outside atol " << atol << " + rtol " << rtol
      << "; worst [" << worst << "] got " << got[worst] << ", ref " << ref[worst]
      << "; first failures:" << first_bad.str();
  return ::testing::AssertionFailure() << msg.str();
}

// Bit patterns of floats: NaN sentinels compare equal to themselves here, unlike with ==.
inline std::vector<std::uint32_t> bits(const std::vector<float>& v) {
  std::vector<std::uint32_t> out(v.size());
  std::memcpy(out.data(), v.data(), v.size() * sizeof(float));
  return out;
}

}  // namespace llmbench::test
