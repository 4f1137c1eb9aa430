// Paged attention on the GPU: attention_launch.cuh with each key's place read from the block
// table (the tiled kernel: once per key and tile, into shared memory; the streamed one: by
// every lane as it loads the row), so no gather copy is made.
#include "kernels/cuda/paged_attention.cuh"

#include "kernels/common/op_math.h"
#include "kernels/cuda/attention_launch.cuh"

namespace llmbench::cuda {

namespace {

// Key/value j of sequence b, kv head g: the pool row of position j (paged_row).
struct PagedKvAt {
  const std::int32_t* table;
  PagedKv paged;
  int kv_dim;
  int head_dim;
  __device__ std::int64_t operator()(int b, int g, int j) const {
    const std::int64_t block =
        table[static_cast<std::int64_t>(b) * paged.max_blocks + j / paged.block_size];
    return (block * paged.block_size + j % paged.block_size) * kv_dim +
           static_cast<std::int64_t>(g) * head_dim;
  }
  bool rows_aligned(int floats) const { return kv_dim % floats == 0 && head_dim % floats == 0; }
};

}  // namespace

void paged_attention(float* out, const float* q, const float* k_pool, const float* v_pool,
                     const std::int32_t* block_table, const PagedKv& paged,
                     const AttentionShape& s, const HeadStrides& q_strides,
                     const HeadStrides& out_strides, cudaStream_t stream,
                     const AttentionSplit& split, AttentionKernel kernel) {
  const unsigned blocks = detail::attention_blocks(s, "cuda::paged_attention");
  if (blocks == 0) return;
  const PagedKvAt kv_at{block_table, paged, s.n_kv_heads * s.head_dim, s.head_dim};
  detail::launch_attention(out, out_strides, q, q_strides, k_pool, v_pool, s, kv_at,
                           detail::CausalKeys{s.past_len}, attention_scale(s.head_dim), blocks,
                           s.past_len + s.n_new, split, stream, kernel);
}

}  // namespace llmbench::cuda
