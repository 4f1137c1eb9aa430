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
  detail::launch_strided("cuda::attention", out, q, k_cache, v_cache, s, strides, stream, split,
                         kernel);
}

void attention_strided_at(float* out, const float* q, const float* k_cache, const float* v_cache,
                          const AttentionShape& s, const AttentionStrides& strides,
                          const std::int32_t* positions, int max_keys, cudaStream_t stream,
                          const AttentionSplit& split, AttentionKernel kernel) {
  detail::launch_strided_at("cuda::attention_strided_at", out, q, k_cache, v_cache, s, strides,
                            positions, max_keys, stream, split, kernel);
}

void attention(float* out, const float* q, const float* k_cache, const float* v_cache,
               const AttentionShape& s, cudaStream_t stream, const AttentionSplit& split,
               AttentionKernel kernel) {
  attention_strided(out, q, k_cache, v_cache, s, row_major_strides(s), stream, split, kernel);
}

}  // namespace llmbench::cuda
