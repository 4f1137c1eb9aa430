// fp16 (IEEE binary16) and bf16 <-> fp32 conversions on raw bit patterns: the checkpoint reader
// widens stored halves to fp32, the safetensors writer (tools/) narrows fp32 to halves, and the
// tests round values through both. Header-only so the conversion loops inline.
// Deliberately not: a half type with arithmetic, or SIMD (F16C) paths.
#pragma once
#include <bit>
#include <cstdint>

namespace llmbench {

// IEEE binary16 bits of `f`, rounded to nearest even; overflow gives +-inf, NaN stays NaN.
inline std::uint16_t fp32_to_fp16(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t abs = x & 0x7FFFFFFFu;
  if (abs > 0x7F800000u)  // NaN: keep it quiet and keep the top payload bits
    return std::uint16_t(sign | 0x7E00u | ((abs >> 13) & 0x3FFu));
  // 65520 (0x477FF000) is halfway between the largest half, 65504, and 2^16; the tie goes to
  // the even neighbour, 2^16, which is out of range: everything from there on is infinity.
  if (abs >= 0x477FF000u) return std::uint16_t(sign | 0x7C00u);
  if (abs >= 0x38800000u) {  // normal half (>= 2^-14): rebias the exponent, round 13 bits away
    const std::uint32_t rounded = abs + 0xFFFu + ((abs >> 13) & 1u);  // a carry bumps the exponent
    return std::uint16_t(sign | ((rounded - 0x38000000u) >> 13));     // (127 - 15) << 23
  }
  // Subnormal half: a count of 2^-24 units. 2^-25 and below round to zero (2^-25 is a tie).
  if (abs <= 0x33000000u) return std::uint16_t(sign);
  const std::uint32_t exponent = abs >> 23;                // 102..112
  const std::uint32_t mantissa = (abs & 0x7FFFFFu) | 0x800000u;
  const std::uint32_t shift = 126u - exponent;             // value / 2^-24 = mantissa >> shift
  std::uint32_t q = mantissa >> shift;
  const std::uint32_t rest = mantissa & ((1u << shift) - 1u), half = 1u << (shift - 1u);
  if (rest > half || (rest == half && (q & 1u))) ++q;      // may carry into the smallest normal
  return std::uint16_t(sign | q);
}

// bfloat16 bits of `f` (the top half of the fp32 bits), rounded to nearest even; NaN stays NaN.
inline std::uint16_t fp32_to_bf16(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return std::uint16_t((x >> 16) | 0x0040u);  // quiet NaN
  return std::uint16_t((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);  // overflow rounds to inf
}

// The fp32 value of binary16 bits `h`. Exact: every half is a float.
inline float fp16_to_fp32(std::uint16_t h) {
  const std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1Fu, mantissa = h & 0x3FFu;
  if (exponent == 0x1Fu)  // inf, or NaN with its payload kept
    return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));
  if (exponent != 0)  // normal: rebias 15 -> 127
    return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  // Zero or subnormal: mantissa units of 2^-24, a float normal (or zero) computed exactly.
  const float magnitude = float(mantissa) * 0x1p-24f;
  return sign ? -magnitude : magnitude;
}

// The fp32 value of bfloat16 bits `b` (they are the top half of the fp32 bits).
inline float bf16_to_fp32(std::uint16_t b) { return std::bit_cast<float>(std::uint32_t(b) << 16); }

}  // namespace llmbench
