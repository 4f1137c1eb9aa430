// Eight 16-bit values in one 16-byte load, widened to float: the inner step of the weight-streaming
// kernels (gemv_half.cu, swiglu_down.cu); and the rounding of fp32 to the weight dtype that
// convert.cu applies (nearest even), for kernels that round their fp32 inputs themselves. The
// pointer argument only picks the dtype. Device code; include only from .cu files.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace llmbench::cuda::detail {

__device__ inline void widen8(const uint4& v, const __nv_bfloat16*, float (&f)[8]) {
  const auto* h = reinterpret_cast<const __nv_bfloat162*>(&v);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 p = __bfloat1622float2(h[i]);
    f[2 * i] = p.x;
    f[2 * i + 1] = p.y;
  }
}

__device__ inline void widen8(const uint4& v, const __half*, float (&f)[8]) {
  const auto* h = reinterpret_cast<const __half2*>(&v);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 p = __half22float2(h[i]);
    f[2 * i] = p.x;
    f[2 * i + 1] = p.y;
  }
}

// fp32 rounded to the weight dtype, nearest even: convert.cu's convert_value.
__device__ inline __nv_bfloat16 narrow(float v, const __nv_bfloat16*) {
  return __float2bfloat16(v);
}
__device__ inline __half narrow(float v, const __half*) { return __float2half(v); }

// One 16-bit value widened to float (exact), as widen8 widens each of its eight.
__device__ inline float widen1(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ inline float widen1(__half v) { return __half2float(v); }

}  // namespace llmbench::cuda::detail
