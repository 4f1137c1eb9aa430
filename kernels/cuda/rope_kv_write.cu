// RoPE on q and k + the KV-cache write (see rope_kv_write.cuh): rope.cu's kernel, one block per
// row, over the row's q heads and k heads in one pass (the cos/sin table computed once for both,
// where rope_q and rope_k each computed it), storing each rotated k pair to the cache as well as
// in place, then copying the row's v. Four launches a layer become one. Templated on the caches'
// element type: fp32, or halves (--kv-dtype fp16), where each stored k and v is rounded to the
// nearest half (kv_element.cuh) after the same fp32 rotation.
// Deliberately not: skipping the in-place store of k (the spec keeps qkv equal to the unfused
// ops'; it is kv_dim floats a row), or paged caches.
#include "kernels/cuda/rope_kv_write.cuh"

#include <cstddef>

#include "kernels/common/op_math.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/kv_element.cuh"

namespace llmbench::cuda {

namespace {

constexpr int kThreads = 1024;  // as rope.cu

// Dynamic shared memory: cos of the half pairs, then their sin. T: the caches' element type.
template <class T>
__global__ void rope_kv_write_kernel(float* qkv, T* k_cache, T* v_cache,
                                     const int32_t* positions, RopeKvShape s) {
  extern __shared__ float table[];
  const int half = s.head_dim / 2;
  float* cos_i = table;
  float* sin_i = table + half;
  const int r = blockIdx.x;
  const int32_t position = positions[r];
  for (int i = threadIdx.x; i < half; i += blockDim.x)
    rope_cos_sin(position, rope_inv_freq(i, s.head_dim, s.theta), &cos_i[i], &sin_i[i]);
  __syncthreads();
  float* row = qkv + static_cast<std::size_t>(r) * s.qkv_dim();
  const std::size_t cache_row =
      (static_cast<std::size_t>(r / s.n_new) * s.cache_seq + position) * s.kv_dim();
  const int n_pairs = (s.n_heads + s.n_kv_heads) * half;
  for (int p = threadIdx.x; p < n_pairs; p += blockDim.x) {
    const int h = p / half, i = p % half;
    float* lo = row + static_cast<std::size_t>(h) * s.head_dim + i;
    rope_rotate_pair(lo, lo + half, cos_i[i], sin_i[i]);
    if (h >= s.n_heads) {  // a key: also to the cache
      T* to = k_cache + cache_row + static_cast<std::size_t>(h - s.n_heads) * s.head_dim + i;
      to[0] = detail::kv_from_float<T>(lo[0]);
      to[half] = detail::kv_from_float<T>(lo[half]);
    }
  }
  const float* v = row + s.q_dim() + s.kv_dim();
  for (int i = threadIdx.x; i < s.kv_dim(); i += blockDim.x)
    v_cache[cache_row + i] = detail::kv_from_float<T>(v[i]);
}

template <class T>
void launch_rope_kv_write(float* qkv, T* k_cache, T* v_cache, const std::int32_t* positions,
                          const RopeKvShape& s, cudaStream_t stream) {
  const int half = s.head_dim / 2;
  if (s.rows() <= 0 || half <= 0) return;
  const std::size_t shared_bytes = 2 * static_cast<std::size_t>(half) * sizeof(float);
  rope_kv_write_kernel<<<s.rows(), kThreads, shared_bytes, stream>>>(qkv, k_cache, v_cache,
                                                                     positions, s);
  LLMBENCH_CUDA_LAUNCH_CHECK();
}

}  // namespace

void rope_kv_write(float* qkv, float* k_cache, float* v_cache, const std::int32_t* positions,
                   const RopeKvShape& s, cudaStream_t stream) {
  launch_rope_kv_write(qkv, k_cache, v_cache, positions, s, stream);
}

void rope_kv_write_f16(float* qkv, __half* k_cache, __half* v_cache,
                       const std::int32_t* positions, const RopeKvShape& s,
                       cudaStream_t stream) {
  launch_rope_kv_write(qkv, k_cache, v_cache, positions, s, stream);
}

}  // namespace llmbench::cuda
