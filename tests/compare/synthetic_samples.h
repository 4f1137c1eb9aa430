// Seeded synthetic benchmark samples for the calibration tests of `llmbench compare`:
// lognormal timings with a given coefficient of variation, optionally with outliers. Box-Muller
// over std::mt19937_64 (whose output the standard fixes), so the draws, and therefore the
// measured rates, are the same on every platform.
#pragma once
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace llmbench_test {

class SampleSource {
 public:
  explicit SampleSource(std::uint64_t seed) : rng_(seed) {}

  double uniform() { return (double(rng_() >> 11) + 0.5) * (1.0 / 9007199254740992.0); }

  double standard_normal() {
    const double u1 = uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

  // n lognormal values with median `median` and coefficient of variation `cv`; with
  // probability `outlier_p` a value is multiplied by `outlier_x` (a preempted repetition).
  std::vector<double> lognormal(int n, double median, double cv, double outlier_p = 0,
                                double outlier_x = 1) {
    const double sigma = std::sqrt(std::log(1.0 + cv * cv));
    std::vector<double> out;
    for (int i = 0; i < n; ++i) {
      double v = median * std::exp(sigma * standard_normal());
      if (outlier_p > 0 && uniform() < outlier_p) v *= outlier_x;
      out.push_back(v);
    }
    return out;
  }

 private:
  std::mt19937_64 rng_;
};

}  // namespace llmbench_test
