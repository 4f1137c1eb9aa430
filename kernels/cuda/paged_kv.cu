// Paged KV scatter and gather on the GPU: flat grid-stride loops over every float written,
// the innermost dimension fastest so reads and writes coalesce within a row; each element looks
// its block up in the table. Exact copies: equal to the CPU references.
// Deliberately not: one block per row, or caching the table in shared memory (a table entry is
// read by consecutive threads of one row and stays in L1).
#include "kernels/cuda/paged_kv.cuh"

#include <cstddef>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_common.cuh"

namespace llmbench::cuda {

namespace {

// Float offset of position pos of sequence b in the pool (paged_row).
__device__ inline std::int64_t pool_row(const std::int32_t* table, PagedKv p, std::int64_t b,
                                        int pos, int kv_dim) {
  const std::int64_t block = table[b * p.max_blocks + pos / p.block_size];
  return (block * p.block_size + pos % p.block_size) * kv_dim;
}

__global__ void kv_write_paged_kernel(float* pool, const std::int32_t* table, PagedKv paged,
                                      const float* src, HeadStrides src_s, int n_new,
                                      int past_len, int n_kv_heads, int head_dim,
                                      std::size_t total) {
  const int kv_dim = n_kv_heads * head_dim;
  const std::size_t step = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t e = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; e < total; e += step) {
    const int c = static_cast<int>(e % kv_dim);  // column within the row: head * head_dim + i
    const std::size_t row = e / kv_dim;          // b * n_new + t
    const int t = static_cast<int>(row % n_new);
    const std::int64_t b = static_cast<std::int64_t>(row / n_new);
    const int h = c / head_dim, i = c % head_dim;
    pool[pool_row(table, paged, b, past_len + t, kv_dim) + c] =
        src[b * src_s.batch + t * src_s.seq + h * src_s.head + i];
  }
}

__global__ void kv_gather_paged_kernel(float* out, const float* pool, const std::int32_t* table,
                                       PagedKv paged, int len, int kv_dim, int out_seq,
                                       std::size_t total) {
  const std::size_t step = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t e = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; e < total; e += step) {
    const int c = static_cast<int>(e % kv_dim);
    const std::size_t row = e / kv_dim;  // b * len + pos
    const int pos = static_cast<int>(row % len);
    const std::int64_t b = static_cast<std::int64_t>(row / len);
    out[(b * out_seq + pos) * kv_dim + c] = pool[pool_row(table, paged, b, pos, kv_dim) + c];
  }
}

}  // namespace

void kv_write_paged(float* pool, const std::int32_t* block_table, const PagedKv& paged,
                    const float* src, const HeadStrides& src_strides, int batch, int n_new,
                    int past_len, int n_kv_heads, int head_dim, cudaStream_t stream) {
  if (batch <= 0 || n_new <= 0 || n_kv_heads <= 0 || head_dim <= 0) return;
  const std::size_t total = static_cast<std::size_t>(batch) * n_new * n_kv_heads * head_dim;
  kv_write_paged_kernel<<<detail::flat_blocks(total), detail::kFlatThreads, 0, stream>>>(
      pool, block_table, paged, src, src_strides, n_new, past_len, n_kv_heads, head_dim, total);
  LLMBENCH_CUDA_LAUNCH_CHECK();
}

void kv_gather_paged(float* out, const float* pool, const std::int32_t* block_table,
                     const PagedKv& paged, int batch, int len, int kv_dim, int out_seq,
                     cudaStream_t stream) {
  if (batch <= 0 || len <= 0 || kv_dim <= 0) return;
  const std::size_t total = static_cast<std::size_t>(batch) * len * kv_dim;
  kv_gather_paged_kernel<<<detail::flat_blocks(total), detail::kFlatThreads, 0, stream>>>(
      out, pool, block_table, paged, len, kv_dim, out_seq, total);
  LLMBENCH_CUDA_LAUNCH_CHECK();
}

}  // namespace llmbench::cuda
