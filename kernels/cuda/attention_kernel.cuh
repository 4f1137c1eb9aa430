// The attention kernel shared by kernels/cuda/attention.cu (a strided cache) and
// kernels/cuda/paged_attention.cu (a paged one), templated on where key/value j of a sequence
// and kv head lives (KvAt, a device functor), like kernels/cpu/attention_core.h on the CPU.
// Device code; include only from .cu files.
//
// One block of 128 threads per (sequence, query head, query token). The block walks the query's
// visible keys in tiles of kTile:
//   0. offsets: each key's place (KvAt) once per tile, into shared memory;
//   1. scores: one warp per key, lanes across head_dim (coalesced reads of the key row), a warp
//      shuffle sum, times 1/sqrt(head_dim); kept in shared memory;
//   2. softmax: the tile maximum; exp(score - running max) in place; their sum;
//   3. values: thread i owns output dims i and i + 128 and accumulates p_j * v_j[i] (coalesced).
// Keys beyond one tile use the online-softmax rescaling (the running max grows, and the earlier
// sum and accumulators are multiplied by exp(old max - new max)), so shared memory stays at
// 24 KB for any context length. Up to kTile keys it is exactly the reference's algorithm:
// scores, max subtraction, exp, sum, weighted values, one division; only summation orders
// differ. Accumulation is in float, as in the reference.
// Split keys (flash-decoding): when there are too few queries to fill the GPU (decode at small
// batch launches only batch * n_heads blocks), blockIdx.y splits each query's keys into ranges
// of keys_per_split; each block writes its unnormalised partial result (running max, sum and
// accumulators) to scratch, and the splits are merged with the same rescaling (combine_query):
// by the last of a query's blocks to finish when the caller gave arrival counters, else by
// attention_combine_kernel. Prefill goes through cuBLAS instead (attention_gemm.cu).
// The cache's element type T is float, or __half for --kv-dtype fp16: keys and values are read
// through kv_load (kv_element.cuh), which widens a half exactly, and every sum stays in float, so
// over halves the kernel computes what it computes over the widened cache. KvAt offsets count
// elements of T.
// Deliberately not: flash-attention tiling over queries or tensor cores in this kernel.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/common/error.h"
#include "kernels/common/layout.h"
#include "kernels/cuda/attention.cuh"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/kv_element.cuh"

namespace llmbench::cuda::detail {

inline constexpr int kAttentionThreads = 128;
inline constexpr int kAttentionWarps = kAttentionThreads / kWarpSize;
inline constexpr int kAttentionTile = 2048;  // keys held at once: 8 KB of scores, 16 KB of offsets
inline constexpr int kAttentionDimsPerThread = kAttentionMaxHeadDim / kAttentionThreads;
static_assert(kAttentionMaxHeadDim % kAttentionThreads == 0);

// Key/value j of sequence b, kv head g, in a cache at fixed strides.
struct StridedKvAt {
  HeadStrides kv;
  __device__ std::int64_t operator()(int b, int g, int j) const {
    return b * kv.batch + g * kv.head + j * kv.seq;
  }
  // Whether every row's offset is a multiple of `elems` elements (the streamed kernel's vector
  // loads).
  bool rows_aligned(int elems) const {
    return kv.batch % elems == 0 && kv.head % elems == 0 && kv.seq % elems == 0;
  }
};

// How many keys query t of sequence b sees: causal over one shape (past_len + t + 1). The
// ragged kernel (ragged_attention.cu) passes its own, read per row.
struct CausalKeys {
  int past_len;
  __device__ int operator()(int /*b*/, int t) const { return past_len + t + 1; }
};

// How many keys query t of sequence b sees when the step's length lives in device memory:
// positions[b * n_new + t] + 1 (the query's own position plus one), the array the same step's
// RoPE reads. A captured decode step (--cuda-graphs) replays with whatever positions were
// uploaded before the replay, so nothing of the step's length is frozen into the launch.
struct PositionKeys {
  const std::int32_t* positions;
  int n_new;
  __device__ int operator()(int b, int t) const { return positions[b * n_new + t] + 1; }
};

// Where the blocks of a split launch leave their partial results: [query][split][head_dim + 2]
// floats (running max, running sum, then the unnormalised accumulators). keys_per_split == 0:
// no split, every block writes its final output.
// arrivals (or nullptr): one counter per query, zero before the launch and again after it; with
// them the last block of a query to finish merges its partials (merge_if_last).
struct SplitOut {
  float* partial = nullptr;
  int keys_per_split = 0;
  unsigned* arrivals = nullptr;
};

// Block index -> (sequence b, query head h, query token t): t fastest and reversed, so the
// queries that see the most keys are scheduled first and the short ones fill in at the end.
__device__ inline void query_of(unsigned block, const AttentionShape& s, int& b, int& h, int& t) {
  t = s.n_new - 1 - static_cast<int>(block % s.n_new);
  h = static_cast<int>((block / s.n_new) % s.n_heads);
  b = static_cast<int>(block / s.n_new / s.n_heads);
}

// Query `block`'s output from its n_splits partial results (query_of order):
// out = sum_s exp(max_s - M) acc_s / sum_s exp(max_s - M) sum_s with M the largest max_s, the same
// rescaling the kernels apply between tiles. The partials are read past L1 (__ldcg): in a fused
// merge other blocks wrote them during this launch.
__device__ inline void combine_query(float* out, HeadStrides out_s, const float* partial,
                                     const AttentionShape& s, int n_splits, unsigned block) {
  const int d = s.head_dim;
  int b, h, t;
  query_of(block, s, b, h, t);
  const std::size_t row = static_cast<std::size_t>(d + 2);
  const float* part = partial + static_cast<std::size_t>(block) * n_splits * row;
  float m = -INFINITY;
  for (int sp = 0; sp < n_splits; ++sp) m = fmaxf(m, __ldcg(part + sp * row));
  float total = 0.0f;
  for (int sp = 0; sp < n_splits; ++sp)
    total += __ldcg(part + sp * row + 1) * expf(__ldcg(part + sp * row) - m);
  float* oh = out + b * out_s.batch + t * out_s.seq + h * out_s.head;
  for (int i = threadIdx.x; i < d; i += blockDim.x) {
    float a = 0.0f;
    for (int sp = 0; sp < n_splits; ++sp)
      a += __ldcg(part + sp * row + 2 + i) * expf(__ldcg(part + sp * row) - m);
    oh[i] = a / total;
  }
}

// Called by every thread of a split block after it wrote its partial result, with split.arrivals
// set: the block that brings its query's count to gridDim.y merges the query (combine_query) and
// re-arms the counter. Each thread's writes are made visible device-wide before the block
// arrives (__threadfence, then the barrier), and the last block fences again before it reads
// the others' (the pattern of the CUDA samples' threadFenceReduction).
__device__ inline void merge_if_last(float* out, HeadStrides out_s, const SplitOut& split,
                                     const AttentionShape& s, unsigned block) {
  __shared__ unsigned last_sh[1];
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0)
    last_sh[0] = atomicAdd(split.arrivals + block, 1u) == gridDim.y - 1 ? 1u : 0u;
  __syncthreads();
  if (last_sh[0] == 0) return;
  __threadfence();
  combine_query(out, out_s, split.partial, s, static_cast<int>(gridDim.y), block);
  if (threadIdx.x == 0) split.arrivals[block] = 0;  // every split has arrived: none reads it now
}

// The keys [begin, end) block (x, y) of a launch reads of a query that sees all_keys keys: one
// split of them (blockIdx.y), or all when the launch is not split.
struct KeyRange {
  int begin, end;
};
__device__ inline KeyRange split_keys(const SplitOut& split, int all_keys) {
  if (split.keys_per_split <= 0) return {0, all_keys};
  const int begin = min(all_keys, static_cast<int>(blockIdx.y) * split.keys_per_split);
  return {begin, min(all_keys, begin + split.keys_per_split)};
}

// blockIdx.x enumerates the queries (query_of); blockIdx.y is the key split (0 when unsplit).
// T: the cache's element type (float or __half).
template <class T, class KvAt, class KeysOf>
__global__ void __launch_bounds__(kAttentionThreads)
    attention_kernel(float* out, HeadStrides out_s, const float* q, HeadStrides q_s,
                     const T* k, const T* v, AttentionShape s, KvAt kv_at,
                     KeysOf keys_of, float scale, SplitOut split = {}) {
  __shared__ float q_sh[kAttentionMaxHeadDim];
  __shared__ float p_sh[kAttentionTile];
  __shared__ std::int64_t at_sh[kAttentionTile];
  __shared__ float scratch[kWarpSize];

  const int d = s.head_dim;
  const unsigned block = blockIdx.x;
  int b, h, t;
  query_of(block, s, b, h, t);
  const int g = h / (s.n_heads / s.n_kv_heads);  // the kv head this query head reads
  const float* qh = q + b * q_s.batch + t * q_s.seq + h * q_s.head;
  // This block's keys: [key_begin, n_keys) of the causal [0, keys_of(b, t)), split or all.
  const auto [key_begin, n_keys] = split_keys(split, keys_of(b, t));

  const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
  for (int i = threadIdx.x; i < d; i += kAttentionThreads) q_sh[i] = qh[i];

  float acc[kAttentionDimsPerThread] = {};
  float running_max = -INFINITY, running_sum = 0.0f;
  for (int tile_start = key_begin; tile_start < n_keys; tile_start += kAttentionTile) {
    const int tile_keys = min(kAttentionTile, n_keys - tile_start);

    // 0. where each key (and value) of the tile lives.
    for (int j = threadIdx.x; j < tile_keys; j += kAttentionThreads)
      at_sh[j] = kv_at(b, g, tile_start + j);
    __syncthreads();  // publishes the offsets (and, on the first tile, q)

    // 1. scores[j] = q . k_j / sqrt(d), one warp per key.
    float local_max = -INFINITY;
    for (int j = warp; j < tile_keys; j += kAttentionWarps) {
      const T* kj = k + at_sh[j];
      float dot = 0.0f;
      for (int i = lane; i < d; i += kWarpSize) dot += q_sh[i] * kv_load(kj + i);
      const float score = warp_sum(dot) * scale;
      if (lane == 0) p_sh[j] = score;
      local_max = fmaxf(local_max, score);
    }
    // The barrier inside block_max also publishes the scores.
    const float new_max = fmaxf(running_max, block_max(local_max, scratch));

    // 2. softmax numerators exp(score - max) (each <= 1) and their sum. `rescale` carries the
    //    earlier tiles over to the new maximum; on the first tile it is exp(-inf) = 0.
    const float rescale = expf(running_max - new_max);
    float local_sum = 0.0f;
    for (int j = threadIdx.x; j < tile_keys; j += kAttentionThreads) {
      const float p = expf(p_sh[j] - new_max);
      p_sh[j] = p;
      local_sum += p;
    }
    running_sum = running_sum * rescale + block_sum(local_sum, scratch);
    running_max = new_max;

    // 3. acc = sum_j p_j v_j over this tile, on top of the rescaled earlier tiles.
    for (int c = 0; c < kAttentionDimsPerThread; ++c) {
      const int i = threadIdx.x + c * kAttentionThreads;
      if (i >= d) break;
      float a = acc[c] * rescale;
      for (int j = 0; j < tile_keys; ++j) a += p_sh[j] * kv_load(v + at_sh[j] + i);
      acc[c] = a;
    }
    __syncthreads();  // the next tile overwrites p_sh and at_sh
  }

  if (split.keys_per_split > 0) {
    // A split with no keys leaves max -inf, sum 0 and zero accumulators: it weighs nothing.
    float* part = split.partial + (static_cast<std::size_t>(block) * gridDim.y + blockIdx.y) *
                                      static_cast<std::size_t>(d + 2);
    if (threadIdx.x == 0) {
      part[0] = running_max;
      part[1] = running_sum;
    }
    for (int c = 0; c < kAttentionDimsPerThread; ++c) {
      const int i = threadIdx.x + c * kAttentionThreads;
      if (i < d) part[2 + i] = acc[c];
    }
    if (split.arrivals != nullptr) merge_if_last(out, out_s, split, s, block);
    return;
  }
  float* oh = out + b * out_s.batch + t * out_s.seq + h * out_s.head;
  for (int c = 0; c < kAttentionDimsPerThread; ++c) {
    const int i = threadIdx.x + c * kAttentionThreads;
    if (i < d) oh[i] = acc[c] / running_sum;
  }
}

// Merges the n_splits partial results of each query, one block per query (combine_query), for
// split launches without arrival counters.
// static: one copy per .cu file that includes this header (a kernel cannot be inline).
static __global__ void __launch_bounds__(kAttentionThreads)
    attention_combine_kernel(float* out, HeadStrides out_s, const float* partial,
                             AttentionShape s, int n_splits) {
  combine_query(out, out_s, partial, s, n_splits, blockIdx.x);
}

// Keys per split below which splitting costs more than it gains.
inline constexpr int kAttentionMinKeysPerSplit = 32;

// The most splits per query a launch of `queries` queries may use to reach `target_blocks`.
inline int attention_max_splits(unsigned long long queries, int target_blocks) {
  if (target_blocks <= 0 || queries == 0 || queries >= static_cast<unsigned long long>(target_blocks))
    return 1;
  return static_cast<int>((target_blocks + queries - 1) / queries);
}

// Checks the shape (throws llmbench::Error naming `who`) and returns the number of blocks to
// launch, 0 when there is nothing to do.
inline unsigned attention_blocks(const AttentionShape& s, const char* who) {
  if (s.batch <= 0 || s.n_new <= 0 || s.n_heads <= 0) return 0;
  if (s.head_dim <= 0 || s.head_dim > kAttentionMaxHeadDim || s.n_kv_heads <= 0 ||
      s.n_heads % s.n_kv_heads != 0) {
    throw Error(std::string(who) + ": unsupported shape (head_dim " + std::to_string(s.head_dim) +
                ", max " + std::to_string(kAttentionMaxHeadDim) + "; n_heads " +
                std::to_string(s.n_heads) + ", n_kv_heads " + std::to_string(s.n_kv_heads) +
                ", which must divide it)");
  }
  const unsigned long long blocks =
      static_cast<unsigned long long>(s.batch) * s.n_heads * s.n_new;
  if (blocks > 0x7fffffffull)
    throw Error(std::string(who) + ": over 2^31 - 1 (query, head) pairs");
  return static_cast<unsigned>(blocks);
}

}  // namespace llmbench::cuda::detail
