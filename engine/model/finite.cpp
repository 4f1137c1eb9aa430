// Finiteness scans (see finite.h).
#include "engine/model/finite.h"

#include <bit>
#include <cmath>
#include <cstdio>

namespace llmbench {

namespace {

// A float is NaN or Inf exactly when its 8 exponent bits are all set. The test on the bits
// vectorises (std::isfinite on floats does not, and -ffast-math would fold it to true).
inline bool non_finite_bits(float v) {
  return (std::bit_cast<std::uint32_t>(v) & 0x7f800000u) == 0x7f800000u;
}

}  // namespace

std::int64_t first_non_finite(const float* values, std::int64_t n) {
  int any = 0;
#pragma omp parallel for reduction(| : any) schedule(static) if (n > (std::int64_t(1) << 20))
  for (std::int64_t i = 0; i < n; ++i) any |= int(non_finite_bits(values[i]));
  if (!any) return -1;
  for (std::int64_t i = 0; i < n; ++i)
    if (non_finite_bits(values[i])) return i;
  return -1;
}

std::string float_text(float v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", double(v));
  return buf;
}

}  // namespace llmbench
