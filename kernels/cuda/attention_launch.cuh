// launch_attention: how attention.cu and paged_attention.cu run an attention call that does not
// go through cuBLAS: the split over keys (flash-decoding) sized for the GPU, the tiled kernel
// (attention_kernel.cuh) or the streamed one (attention_streamed.cuh), and the merge of the splits.
// Templated on the cache's element type T (float, or __half for --kv-dtype fp16, attention_f16.cu);
// the split partials and the combine are float either way.
// Device code; include only from .cu files.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/common/op_math.h"
#include "kernels/cuda/attention.cuh"
#include "kernels/cuda/attention_kernel.cuh"
#include "kernels/cuda/attention_streamed.cuh"
#include "kernels/cuda/cuda_check.h"

namespace llmbench::cuda::detail {

// The streamed kernel's lane width for this call, or 0 when it must run tiled: its head_dim
// (streamed_vec) and the alignment of k, v and every row kv_at places (KvAt::rows_aligned), in
// elements of T: a lane loads vec elements, so halves need half the bytes of alignment floats do.
template <class T, class KvAt>
int streamed_vec_for(const AttentionShape& s, const T* k, const T* v, const KvAt& kv_at) {
  const int vec = streamed_vec(s.head_dim);
  if (vec == 0) return 0;
  const int elems = streamed_align_elems<T>(vec);
  const auto bytes = static_cast<std::uintptr_t>(elems) * sizeof(T);
  if (reinterpret_cast<std::uintptr_t>(k) % bytes != 0 ||
      reinterpret_cast<std::uintptr_t>(v) % bytes != 0 || !kv_at.rows_aligned(elems))
    return 0;
  return vec;
}

template <int kVec, class T, class KvAt, class KeysOf>
void launch_streamed(dim3 grid, float* out, HeadStrides out_s, const float* q, HeadStrides q_s,
                     const T* k, const T* v, const AttentionShape& s, KvAt kv_at,
                     KeysOf keys_of, float scale, SplitOut split, cudaStream_t stream) {
  attention_streamed_kernel<kVec><<<grid, kStreamedThreads, 0, stream>>>(
      out, out_s, q, q_s, k, v, s, kv_at, keys_of, scale, split);
  LLMBENCH_CUDA_LAUNCH_CHECK();
}

// Runs `kernel` (the tiled one where the streamed one cannot take the call) over `queries`
// blocks, split over keys when `split` allows it and the longest query (max_keys keys) is long
// enough, followed by the combine kernel unless the split blocks merge themselves (arrival
// counters in `split`). The grid depends only on max_keys: a caller whose
// lengths change between replays of one launch (PositionKeys) passes the most keys any replay
// may see, and splits past a query's keys exit empty (weight zero in the combine).
template <class T, class KvAt, class KeysOf>
void launch_attention(float* out, HeadStrides out_s, const float* q, HeadStrides q_s,
                      const T* k, const T* v, const AttentionShape& s, KvAt kv_at,
                      KeysOf keys_of, float scale, unsigned queries, int max_keys,
                      const AttentionSplit& split, cudaStream_t stream,
                      AttentionKernel kernel) {
  const int want = attention_max_splits(queries, split.target_blocks);
  int keys_per_split = 0, n_splits = 1;
  if (want > 1 && split.scratch != nullptr) {
    keys_per_split = std::max(kAttentionMinKeysPerSplit, (max_keys + want - 1) / want);
    n_splits = (max_keys + keys_per_split - 1) / keys_per_split;
    const std::size_t need = static_cast<std::size_t>(queries) * n_splits * (s.head_dim + 2);
    if (n_splits <= 1 || need > split.scratch_floats) n_splits = 1;
  }
  // With a counter per query the split blocks merge themselves (merge_if_last): no combine kernel.
  unsigned* arrivals = split.arrival_slots >= queries ? split.arrivals : nullptr;
  const SplitOut split_out =
      n_splits == 1 ? SplitOut{} : SplitOut{split.scratch, keys_per_split, arrivals};
  const dim3 grid(queries, static_cast<unsigned>(n_splits));
  const int vec = kernel == AttentionKernel::kStreamed ? streamed_vec_for(s, k, v, kv_at) : 0;
  switch (vec) {
    case 2:
      launch_streamed<2>(grid, out, out_s, q, q_s, k, v, s, kv_at, keys_of, scale, split_out,
                         stream);
      break;
    case 4:
      launch_streamed<4>(grid, out, out_s, q, q_s, k, v, s, kv_at, keys_of, scale, split_out,
                         stream);
      break;
    case 8:
      launch_streamed<8>(grid, out, out_s, q, q_s, k, v, s, kv_at, keys_of, scale, split_out,
                         stream);
      break;
    default:
      attention_kernel<<<grid, kAttentionThreads, 0, stream>>>(out, out_s, q, q_s, k, v, s,
                                                               kv_at, keys_of, scale, split_out);
      LLMBENCH_CUDA_LAUNCH_CHECK();
  }
  if (n_splits == 1 || arrivals != nullptr) return;
  attention_combine_kernel<<<queries, kAttentionThreads, 0, stream>>>(out, out_s, split.scratch,
                                                                      s, n_splits);
  LLMBENCH_CUDA_LAUNCH_CHECK();
}

// attention_strided and attention_strided_at (attention.cuh) over a cache of T: the fp32 ones
// (attention.cu) and the fp16 ones (attention_f16.cu) are these, `op` naming the caller in errors.
template <class T>
void launch_strided(const char* op, float* out, const float* q, const T* k_cache, const T* v_cache,
                    const AttentionShape& s, const AttentionStrides& strides, cudaStream_t stream,
                    const AttentionSplit& split, AttentionKernel kernel) {
  const unsigned blocks = attention_blocks(s, op);
  if (blocks == 0) return;
  launch_attention(out, strides.out, q, strides.q, k_cache, v_cache, s, StridedKvAt{strides.kv},
                   CausalKeys{s.past_len}, attention_scale(s.head_dim), blocks,
                   s.past_len + s.n_new, split, stream, kernel);
}

template <class T>
void launch_strided_at(const char* op, float* out, const float* q, const T* k_cache,
                       const T* v_cache, const AttentionShape& s, const AttentionStrides& strides,
                       const std::int32_t* positions, int max_keys, cudaStream_t stream,
                       const AttentionSplit& split, AttentionKernel kernel) {
  const unsigned blocks = attention_blocks(s, op);
  if (blocks == 0) return;
  if (max_keys < s.n_new)
    throw Error(std::string(op) + ": max_keys " + std::to_string(max_keys) + " is below the " +
                std::to_string(s.n_new) + " new tokens");
  launch_attention(out, strides.out, q, strides.q, k_cache, v_cache, s, StridedKvAt{strides.kv},
                   PositionKeys{positions, s.n_new}, attention_scale(s.head_dim), blocks,
                   max_keys, split, stream, kernel);
}

}  // namespace llmbench::cuda::detail
