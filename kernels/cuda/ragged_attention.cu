// Ragged paged KV write and attention on the GPU. The attention is attention_kernel.cuh with one
// "sequence" per row (n_new = 1): keys found through the row's block-table row, counted from
// the row's own position. The write is a flat grid-stride copy, like paged_kv.cu.
// Both are templated on the pool's element type T: float, or __half for the continuous-batching
// pool in binary16 (--kv-cache-dtype fp16), touched only through kv_element.cuh (the write rounds
// to nearest even, attention widens exactly and sums in fp32), so the fp32 instantiations compile
// to the PTX the untemplated kernels did.
// Deliberately not: the streamed kernel, the split over keys or a cuBLAS route for prompt chunks
// (the fp32 ragged op has none of them either, and the fp16 one mirrors it).
#include "kernels/cuda/ragged_attention.cuh"

#include <cstddef>

#include "kernels/common/op_math.h"
#include "kernels/cuda/attention_kernel.cuh"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/kv_element.cuh"

namespace llmbench::cuda {

namespace {

// Key/value j of row r's sequence, kv head g, in elements of the pool (float or __half).
struct RaggedKvAt {
  const std::int32_t* table;
  const std::int32_t* seq;
  PagedKv paged;
  int kv_dim;
  int head_dim;
  __device__ std::int64_t operator()(int r, int g, int j) const {
    const std::int64_t block =
        table[static_cast<std::int64_t>(seq[r]) * paged.max_blocks + j / paged.block_size];
    return (block * paged.block_size + j % paged.block_size) * kv_dim +
           static_cast<std::int64_t>(g) * head_dim;
  }
};

// Row r sees keys [0, pos[r]].
struct RaggedKeys {
  const std::int32_t* pos;
  __device__ int operator()(int r, int /*t*/) const { return pos[r] + 1; }
};

// T: the pool's element type; each value stored as kv_from_float<T> makes it (exact for float).
template <class T>
__global__ void kv_write_ragged_kernel(T* pool, const std::int32_t* table, PagedKv paged,
                                       const float* src, int src_stride,
                                       const std::int32_t* seq, const std::int32_t* pos,
                                       int kv_dim, std::size_t total) {
  const std::size_t step = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t e = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; e < total; e += step) {
    const int c = static_cast<int>(e % kv_dim);
    const std::int64_t r = static_cast<std::int64_t>(e / kv_dim);
    const int p = pos[r];
    const std::int64_t block = table[static_cast<std::int64_t>(seq[r]) * paged.max_blocks +
                                     p / paged.block_size];
    pool[(block * paged.block_size + p % paged.block_size) * kv_dim + c] =
        detail::kv_from_float<T>(src[r * src_stride + c]);
  }
}

template <class T>
void launch_write_ragged(T* pool, const std::int32_t* block_table, const PagedKv& paged,
                         const float* src, int src_stride, const std::int32_t* seq,
                         const std::int32_t* pos, int n_rows, int kv_dim, cudaStream_t stream) {
  if (n_rows <= 0 || kv_dim <= 0) return;
  const std::size_t total = static_cast<std::size_t>(n_rows) * kv_dim;
  kv_write_ragged_kernel<<<detail::flat_blocks(total), detail::kFlatThreads, 0, stream>>>(
      pool, block_table, paged, src, src_stride, seq, pos, kv_dim, total);
  LLMBENCH_CUDA_LAUNCH_CHECK();
}

// The tiled attention kernel over pools of T, one block per (row, query head); `op` names the
// caller in shape errors.
template <class T>
void launch_ragged_attention(const char* op, float* out, int out_stride, const float* q,
                             int q_stride, const T* k_pool, const T* v_pool,
                             const std::int32_t* block_table, const PagedKv& paged,
                             const std::int32_t* seq, const std::int32_t* pos, int n_rows,
                             int n_heads, int n_kv_heads, int head_dim, cudaStream_t stream) {
  const AttentionShape s{n_rows, 1, 0, n_heads, n_kv_heads, head_dim, 0, 0, 0};
  const unsigned blocks = detail::attention_blocks(s, op);
  if (blocks == 0) return;
  const HeadStrides q_s{q_stride, 0, head_dim}, out_s{out_stride, 0, head_dim};
  const RaggedKvAt kv_at{block_table, seq, paged, n_kv_heads * head_dim, head_dim};
  detail::attention_kernel<<<blocks, detail::kAttentionThreads, 0, stream>>>(
      out, out_s, q, q_s, k_pool, v_pool, s, kv_at, RaggedKeys{pos}, attention_scale(head_dim));
  LLMBENCH_CUDA_LAUNCH_CHECK();
}

}  // namespace

void kv_write_ragged(float* pool, const std::int32_t* block_table, const PagedKv& paged,
                     const float* src, int src_stride, const std::int32_t* seq,
                     const std::int32_t* pos, int n_rows, int kv_dim, cudaStream_t stream) {
  launch_write_ragged(pool, block_table, paged, src, src_stride, seq, pos, n_rows, kv_dim,
                      stream);
}

void kv_write_ragged_f16(__half* pool, const std::int32_t* block_table, const PagedKv& paged,
                         const float* src, int src_stride, const std::int32_t* seq,
                         const std::int32_t* pos, int n_rows, int kv_dim, cudaStream_t stream) {
  launch_write_ragged(pool, block_table, paged, src, src_stride, seq, pos, n_rows, kv_dim,
                      stream);
}

void ragged_paged_attention(float* out, int out_stride, const float* q, int q_stride,
                            const float* k_pool, const float* v_pool,
                            const std::int32_t* block_table, const PagedKv& paged,
                            const std::int32_t* seq, const std::int32_t* pos, int n_rows,
                            int n_heads, int n_kv_heads, int head_dim, cudaStream_t stream) {
  launch_ragged_attention("cuda::ragged_paged_attention", out, out_stride, q, q_stride, k_pool,
                          v_pool, block_table, paged, seq, pos, n_rows, n_heads, n_kv_heads,
                          head_dim, stream);
}

void ragged_paged_attention_f16(float* out, int out_stride, const float* q, int q_stride,
                                const __half* k_pool, const __half* v_pool,
                                const std::int32_t* block_table, const PagedKv& paged,
                                const std::int32_t* seq, const std::int32_t* pos, int n_rows,
                                int n_heads, int n_kv_heads, int head_dim, cudaStream_t stream) {
  launch_ragged_attention("cuda::ragged_paged_attention_f16", out, out_stride, q, q_stride,
                          k_pool, v_pool, block_table, paged, seq, pos, n_rows, n_heads,
                          n_kv_heads, head_dim, stream);
}

}  // namespace llmbench::cuda
