// Causal grouped-query attention over a KV cache on the GPU, for prefill (n_new > 1) and decode
// (n_new == 1) alike. The spec is kernels/cpu/attention.h; the shape struct is the CPU one.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/common/layout.h"

namespace llmbench::cuda {


// Largest head_dim the kernel supports (every Llama-family model uses 64, 128 or 256).
inline constexpr int kAttentionMaxHeadDim = 256;

// Scratch that lets a launch split each query's keys over several blocks (flash-decoding), for
// when there are too few queries to fill the GPU (decode at small batch). With scratch == nullptr
// or target_blocks == 0 every query is one block, as before.
// arrivals: one counter per query, all zero (cudaMemset once when allocated), or nullptr. With
// them a split launch merges its splits itself: the block of a query that finishes last (one
// atomic per block) combines the query's partial results and sets its counter back to zero, so
// the next launch finds them zero again; without them a second kernel combines (one launch more
// per call). The same arithmetic either way: the outputs are bit for bit equal.
struct AttentionSplit {
  float* scratch = nullptr;         // device floats
  std::size_t scratch_floats = 0;
  int target_blocks = 0;            // blocks to aim for, e.g. 2 x the SM count
  unsigned* arrivals = nullptr;     // device counters; used when arrival_slots >= the queries
  std::size_t arrival_slots = 0;
};

// Which kernel runs an attention call that does not go through cuBLAS (decode and short
// prefill; the engine's --decode-attention, docs/variants.md). Both split a query's keys over
// blocks by the same AttentionSplit and merge the splits the same way.
//   kTiled: one block per query (or split) walks its keys in shared-memory tiles, one warp per
//           key for the scores, then a block-wide softmax and one thread per output dim for the
//           values (attention_kernel.cuh);
//   kStreamed: each warp of the block streams its own keys, several rows in flight per lane
//           (vector loads of whole key and value rows), with the online softmax in registers,
//           and the block's warps merged once at the end (attention_streamed.cuh). Only for
//           head_dim 64, 128 or 256 with rows aligned for vector loads; any other call runs
//           kTiled.
enum class AttentionKernel { kTiled, kStreamed };

// Whether AttentionKernel::kStreamed runs a strided call with these operands (head_dim 64, 128
// or 256; k_cache, v_cache and every cache row aligned to the lanes' vector loads) rather than
// falling back to kTiled. Host code; reads no device memory.
bool attention_streamed_supported(const AttentionShape& s, const AttentionStrides& strides,
                                  const float* k_cache, const float* v_cache);

// The most scratch floats a call of shape `s` may use with this target (0: it never splits).
std::size_t attention_split_floats(const AttentionShape& s, int target_blocks);

// out_h = softmax_j(q_h . k_j / sqrt(head_dim)) v_j over j in [0, past_len + t] for query t of
// each sequence and query head h, reading kv head h / (n_heads / n_kv_heads). Layouts as in
// kernels/cpu/attention.h; all pointers are device pointers. Any key count works (the keys are
// processed in tiles). Throws llmbench::Error if head_dim > kAttentionMaxHeadDim.
void attention(float* out, const float* q, const float* k_cache, const float* v_cache,
               const AttentionShape& s, cudaStream_t stream, const AttentionSplit& split = {},
               AttentionKernel kernel = AttentionKernel::kTiled);

// attention() with every operand placed by `strides` (cpu::attention_strided).
void attention_strided(float* out, const float* q, const float* k_cache, const float* v_cache,
                       const AttentionShape& s, const AttentionStrides& strides,
                       cudaStream_t stream, const AttentionSplit& split = {},
                       AttentionKernel kernel = AttentionKernel::kTiled);

// attention_strided() with each query's key count read from device memory: query t of
// sequence b sees keys [0, positions[b * n_new + t]] (positions: device int32, [batch * n_new];
// s.past_len is not used). max_keys bounds every query's key count over all the calls that
// share this launch (a captured decode step replayed at growing lengths: the case's longest
// context) and alone sizes the split grid, so the launch is the same at every length. Equal to
// attention_strided() with past_len = positions[b * n_new] when the positions are past_len + t
// and max_keys = past_len + n_new.
void attention_strided_at(float* out, const float* q, const float* k_cache, const float* v_cache,
                          const AttentionShape& s, const AttentionStrides& strides,
                          const std::int32_t* positions, int max_keys, cudaStream_t stream,
                          const AttentionSplit& split = {},
                          AttentionKernel kernel = AttentionKernel::kTiled);

}  // namespace llmbench::cuda
