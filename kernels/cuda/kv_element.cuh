// The KV cache's element types on the GPU (--kv-dtype): fp32, or IEEE binary16 as __half. The
// kernels that read or write a preallocated cache or the ragged pool (kv_cache.cu,
// rope_kv_write.cu, ragged_attention.cu, the attention kernels) are templated on the element
// type T and touch it only through these:
//   kv_from_float<T>: an fp32 value as the cache stores it, for halves the nearest one with ties
//                     to even (__float2half_rn: what kernels/common/half.h fp32_to_fp16 does);
//   kv_load:          a cached value widened to fp32 (exact: every half is a float).
// For float both are the identity, written so that `to[i] = kv_from_float<float>(from[i])` and
// `kv_load(p)` are the expressions the kernels had before they were templated: the fp32
// instantiations compile to the same PTX as the untemplated kernels did.
// Deliberately not: bf16 (kernels/cpu/kv_f16.h says why), or vector loads (the streamed
// attention kernel has its own, sized for its lanes). Device code; include only from .cu files.
#pragma once

#include <cuda_fp16.h>

namespace llmbench::cuda::detail {

template <class T>
__device__ T kv_from_float(float x);
template <>
__device__ inline float kv_from_float<float>(float x) {
  return x;
}
template <>
__device__ inline __half kv_from_float<__half>(float x) {
  return __float2half_rn(x);
}

__device__ inline float kv_load(const float* p) { return *p; }
__device__ inline float kv_load(const __half* p) { return __half2float(*p); }

}  // namespace llmbench::cuda::detail
