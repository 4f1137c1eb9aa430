// KV-cache append on the GPU: one block per source row (sequence b, new token t), its threads
// copying the token's kv_dim floats into place. fp32 caches get an exact copy; fp16 caches
// (--kv-dtype fp16) each value rounded to the nearest half (kv_element.cuh). Either way equal,
// bit for bit, to the CPU reference (kernels/cpu/kv_cache.h, kernels/cpu/kv_f16.h).
// Deliberately not: paged, quantised, or fused with the k/v projection or RoPE.
#include "kernels/cuda/kv_cache.cuh"

#include <cstddef>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/kv_element.cuh"

namespace llmbench::cuda {

namespace {

// One block per row; 1024 threads copy a 4096-float row in four rounds (256 took 7 us).
constexpr int kWriteThreads = 1024;

// blockIdx.x = src row = b * n_new + t. T: the cache's element type (float or __half).
template <class T>
__global__ void kv_cache_write_kernel(T* cache, const float* src, int src_stride, int n_new,
                                      int past_len, int cache_seq, int kv_dim) {
  const std::size_t src_row = blockIdx.x;
  const std::size_t b = src_row / n_new, t = src_row % n_new;
  const std::size_t dst_row = b * cache_seq + past_len + t;
  const float* from = src + src_row * src_stride;
  T* to = cache + dst_row * kv_dim;
  for (int i = threadIdx.x; i < kv_dim; i += blockDim.x)
    to[i] = detail::kv_from_float<T>(from[i]);
}

// kv_cache_write_kernel with the destination position of row r read from positions[r].
template <class T>
__global__ void kv_cache_write_at_kernel(T* cache, const float* src, int src_stride, int n_new,
                                         const std::int32_t* positions, int cache_seq,
                                         int kv_dim) {
  const std::size_t src_row = blockIdx.x;
  const std::size_t b = src_row / n_new;
  const std::size_t dst_row = b * cache_seq + static_cast<std::size_t>(positions[src_row]);
  const float* from = src + src_row * src_stride;
  T* to = cache + dst_row * kv_dim;
  for (int i = threadIdx.x; i < kv_dim; i += blockDim.x)
    to[i] = detail::kv_from_float<T>(from[i]);
}

template <class T>
void launch_write(T* cache, const float* src, int src_stride, int batch, int n_new,
                  int past_len, int cache_seq, int kv_dim, cudaStream_t stream) {
  if (batch <= 0 || n_new <= 0 || kv_dim <= 0) return;
  const unsigned rows = static_cast<unsigned>(batch) * static_cast<unsigned>(n_new);
  kv_cache_write_kernel<<<rows, kWriteThreads, 0, stream>>>(cache, src, src_stride, n_new,
                                                            past_len, cache_seq, kv_dim);
  LLMBENCH_CUDA_LAUNCH_CHECK();
}

template <class T>
void launch_write_at(T* cache, const float* src, int src_stride, int batch, int n_new,
                     const std::int32_t* positions, int cache_seq, int kv_dim,
                     cudaStream_t stream) {
  if (batch <= 0 || n_new <= 0 || kv_dim <= 0) return;
  const unsigned rows = static_cast<unsigned>(batch) * static_cast<unsigned>(n_new);
  kv_cache_write_at_kernel<<<rows, kWriteThreads, 0, stream>>>(cache, src, src_stride, n_new,
                                                               positions, cache_seq, kv_dim);
  LLMBENCH_CUDA_LAUNCH_CHECK();
}

}  // namespace

void kv_cache_write(float* cache, const float* src, int src_stride, int batch, int n_new,
                    int past_len, int cache_seq, int kv_dim, cudaStream_t stream) {
  launch_write(cache, src, src_stride, batch, n_new, past_len, cache_seq, kv_dim, stream);
}

void kv_cache_write_at(float* cache, const float* src, int src_stride, int batch, int n_new,
                       const std::int32_t* positions, int cache_seq, int kv_dim,
                       cudaStream_t stream) {
  launch_write_at(cache, src, src_stride, batch, n_new, positions, cache_seq, kv_dim, stream);
}

void kv_cache_write_f16(__half* cache, const float* src, int src_stride, int batch, int n_new,
                        int past_len, int cache_seq, int kv_dim, cudaStream_t stream) {
  launch_write(cache, src, src_stride, batch, n_new, past_len, cache_seq, kv_dim, stream);
}

void kv_cache_write_f16_at(__half* cache, const float* src, int src_stride, int batch, int n_new,
                           const std::int32_t* positions, int cache_seq, int kv_dim,
                           cudaStream_t stream) {
  launch_write_at(cache, src, src_stride, batch, n_new, positions, cache_seq, kv_dim, stream);
}

}  // namespace llmbench::cuda
