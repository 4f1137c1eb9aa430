// KV-cache append on the GPU: one block per source row (sequence b, new token t), its threads
// copying the token's kv_dim floats into place. An exact copy: equal to the CPU reference.
// Deliberately not: paged, quantised, or fused with the k/v projection or RoPE.
#include "kernels/cuda/kv_cache.cuh"

#include <cstddef>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_common.cuh"

namespace llmbench::cuda {

namespace {

// blockIdx.x = src row = b * n_new + t.
__global__ void kv_cache_write_kernel(float* cache, const float* src, int src_stride, int n_new,
                                      int past_len, int cache_seq, int kv_dim) {
  const std::size_t src_row = blockIdx.x;
  const std::size_t b = src_row / n_new, t = src_row % n_new;
  const std::size_t dst_row = b * cache_seq + past_len + t;
  const float* from = src + src_row * src_stride;
  float* to = cache + dst_row * kv_dim;
  for (int i = threadIdx.x; i < kv_dim; i += blockDim.x) to[i] = from[i];
}

// kv_cache_write_kernel with the destination position of row r read from positions[r].
__global__ void kv_cache_write_at_kernel(float* cache, const float* src, int src_stride,
                                         int n_new, const std::int32_t* positions, int cache_seq,
                                         int kv_dim) {
  const std::size_t src_row = blockIdx.x;
  const std::size_t b = src_row / n_new;
  const std::size_t dst_row = b * cache_seq + static_cast<std::size_t>(positions[src_row]);
  const float* from = src + src_row * src_stride;
  float* to = cache + dst_row * kv_dim;
  for (int i = threadIdx.x; i < kv_dim; i += blockDim.x) to[i] = from[i];
}

}  // namespace

void kv_cache_write_at(float* cache, const float* src, int src_stride, int batch, int n_new,
                       const std::int32_t* positions, int cache_seq, int kv_dim,
                       cudaStream_t stream) {
  if (batch <= 0 || n_new <= 0 || kv_dim <= 0) return;
  const unsigned rows = static_cast<unsigned>(batch) * static_cast<unsigned>(n_new);
  kv_cache_write_at_kernel<<<rows, 1024, 0, stream>>>(cache, src, src_stride, n_new, positions,
                                                      cache_seq, kv_dim);
  LLMBENCH_CUDA_LAUNCH_CHECK();
}

void kv_cache_write(float* cache, const float* src, int src_stride, int batch, int n_new,
                    int past_len, int cache_seq, int kv_dim, cudaStream_t stream) {
  if (batch <= 0 || n_new <= 0 || kv_dim <= 0) return;
  const unsigned rows = static_cast<unsigned>(batch) * static_cast<unsigned>(n_new);
  // One block per row; 1024 threads copy a 4096-float row in four rounds (256 took 7 us).
  kv_cache_write_kernel<<<rows, 1024, 0, stream>>>(cache, src, src_stride, n_new,
                                                                   past_len, cache_seq, kv_dim);
  LLMBENCH_CUDA_LAUNCH_CHECK();
}

}  // namespace llmbench::cuda
