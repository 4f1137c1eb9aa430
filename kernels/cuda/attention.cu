// Causal GQA attention on the GPU over a contiguous (strided) cache: attention_launch.cuh with
// keys at fixed strides. attention() is attention_strided() with the row-major strides.
#include "kernels/cuda/attention.cuh"

#include "kernels/common/op_math.h"
#include "kernels/cuda/attention_launch.cuh"

namespace llmbench::cuda {

std::size_t attention_split_floats(const AttentionShape& s, int target_blocks) {
  if (s.batch <= 0 || s.n_new <= 0 || s.n_heads <= 0 || s.head_dim <= 0) return 0;
  const unsigned long long queries =
      static_cast<unsigned long long>(s.batch) * s.n_heads * s.n_new;
  const int splits = detail::attention_max_splits(queries, target_blocks);
  if (splits <= 1) return 0;
  return static_cast<std::size_t>(queries) * splits * (s.head_dim + 2);
}

bool attention_streamed_supported(const AttentionShape& s, const AttentionStrides& strides,
                                  const float* k_cache, const float* v_cache) {
  return detail::streamed_vec_for(s, k_cache, v_cache, detail::StridedKvAt{strides.kv}) != 0;
}

void attention_strided(float* out, const float* q, const float* k_cache, const float* v_cache,
                       const AttentionShape& s, const AttentionStrides& strides,
                       cudaStream_t stream, const AttentionSplit& split,
                       AttentionKernel kernel) {
  const unsigned blocks = detail::attention_blocks(s, "cuda::attention");
  if (blocks == 0) return;
  detail::launch_attention(out, strides.out, q, strides.q, k_cache, v_cache, s,
                           detail::StridedKvAt{strides.kv}, detail::CausalKeys{s.past_len},
                           attention_scale(s.head_dim), blocks, s.past_len + s.n_new, split,
                           stream, kernel);
}

void attention_strided_at(float* out, const float* q, const float* k_cache, const float* v_cache,
                          const AttentionShape& s, const AttentionStrides& strides,
                          const std::int32_t* positions, int max_keys, cudaStream_t stream,
                          const AttentionSplit& split, AttentionKernel kernel) {
  const unsigned blocks = detail::attention_blocks(s, "cuda::attention_strided_at");
  if (blocks == 0) return;
  if (max_keys < s.n_new)
    throw Error("cuda::attention_strided_at: max_keys " + std::to_string(max_keys) +
                " is below the " + std::to_string(s.n_new) + " new tokens");
  detail::launch_attention(out, strides.out, q, strides.q, k_cache, v_cache, s,
                           detail::StridedKvAt{strides.kv},
                           detail::PositionKeys{positions, s.n_new},
                           attention_scale(s.head_dim), blocks, max_keys, split, stream, kernel);
}

void attention(float* out, const float* q, const float* k_cache, const float* v_cache,
               const AttentionShape& s, cudaStream_t stream, const AttentionSplit& split,
               AttentionKernel kernel) {
  attention_strided(out, q, k_cache, v_cache, s, row_major_strides(s), stream, split, kernel);
}

}  // namespace llmbench::cuda
