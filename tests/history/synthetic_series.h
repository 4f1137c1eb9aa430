// Seeded synthetic series for the change-point tests: Gaussian noise from std::mt19937_64 by
// Box-Muller over 53-bit uniforms (std::normal_distribution's algorithm is left to the library,
// so its stream would differ between platforms; this one does not).
#pragma once
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace llmbench::testing {

class Gaussian {
 public:
  explicit Gaussian(std::uint64_t seed) : rng_(seed) {}
  double operator()() {
    if (have_spare_) {
      have_spare_ = false;
      return spare_;
    }
    const double u1 = (double(rng_() >> 11) + 1.0) * 0x1.0p-53;  // (0, 1]
    const double u2 = double(rng_() >> 11) * 0x1.0p-53;          // [0, 1)
    const double r = std::sqrt(-2.0 * std::log(u1));
    spare_ = r * std::sin(2.0 * M_PI * u2);
    have_spare_ = true;
    return r * std::cos(2.0 * M_PI * u2);
  }

 private:
  std::mt19937_64 rng_;
  bool have_spare_ = false;
  double spare_ = 0;
};

// n points of level + sigma * noise, with `steps` (index, shift) added from that index on.
inline std::vector<double> step_series(std::uint64_t seed, int n, double level, double sigma,
                                       const std::vector<std::pair<int, double>>& steps) {
  Gaussian g(seed);
  std::vector<double> x(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    double v = level + sigma * g();
    for (const auto& [at, shift] : steps)
      if (i >= at) v += shift;
    x[std::size_t(i)] = v;
  }
  return x;
}

}  // namespace llmbench::testing
