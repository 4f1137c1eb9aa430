// cuda_sim's __half and __nv_bfloat16 (cuda_fp16.h, cuda_bf16.h): 16-bit storage with CUDA's
// conversions, rounding to nearest even as __float2half_rn and __float2bfloat16 do (through
// kernels/common/half.h, itself checked against the CPU's F16C conversion bit for bit). Only what
// the kernels in kernels/cuda use; no half arithmetic.
#pragma once

#include <cstdint>

#include "kernels/common/half.h"

struct __half {
  std::uint16_t bits;
  __half() = default;
  __half(float f) : bits(llmbench::fp32_to_fp16(f)) {}  // NOLINT: CUDA converts implicitly
  operator float() const { return llmbench::fp16_to_fp32(bits); }
};
struct alignas(4) __half2 {
  __half x, y;
};
struct __nv_bfloat16 {
  std::uint16_t bits;
  __nv_bfloat16() = default;
  __nv_bfloat16(float f) : bits(llmbench::fp32_to_bf16(f)) {}  // NOLINT
  operator float() const { return llmbench::bf16_to_fp32(bits); }
};
struct alignas(4) __nv_bfloat162 {
  __nv_bfloat16 x, y;
};
static_assert(sizeof(__half) == 2 && sizeof(__half2) == 4 && sizeof(__nv_bfloat162) == 4);

inline __half __float2half_rn(float f) { return __half(f); }
inline __half __float2half(float f) { return __half(f); }
inline float __half2float(__half h) { return float(h); }
inline float2 __half22float2(__half2 h) { return {float(h.x), float(h.y)}; }
inline __half2 __floats2half2_rn(float a, float b) { return {__half(a), __half(b)}; }
inline __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16(f); }
inline float __bfloat162float(__nv_bfloat16 b) { return float(b); }
inline float2 __bfloat1622float2(__nv_bfloat162 b) { return {float(b.x), float(b.y)}; }
inline unsigned short __half_as_ushort(__half h) { return h.bits; }
inline __half __ushort_as_half(unsigned short u) {
  __half h;
  h.bits = u;
  return h;
}
