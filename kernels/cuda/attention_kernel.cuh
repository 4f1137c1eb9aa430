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
// Deliberately not: flash-attention tiling over queries, tensor cores, or split-K over keys for
// long-context decode (a batch-1 decode launches only n_heads blocks; that is the next version).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/common/error.h"
#include "kernels/common/layout.h"
#include "kernels/cuda/attention.cuh"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_common.cuh"

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
};

// How many keys query t of sequence b sees: causal over one shape (past_len + t + 1). The
// ragged kernel (ragged_attention.cu) passes its own, read per row.
struct CausalKeys {
  int past_len;
  __device__ int operator()(int /*b*/, int t) const { return past_len + t + 1; }
};

// blockIdx.x enumerates (b, h, t) with t fastest and reversed, so the queries that see the
// most keys are scheduled first and the short ones fill in at the end.
template <class KvAt, class KeysOf>
__global__ void __launch_bounds__(kAttentionThreads)
    attention_kernel(float* out, HeadStrides out_s, const float* q, HeadStrides q_s,
                     const float* k, const float* v, AttentionShape s, KvAt kv_at,
                     KeysOf keys_of, float scale) {
  __shared__ float q_sh[kAttentionMaxHeadDim];
  __shared__ float p_sh[kAttentionTile];
  __shared__ std::int64_t at_sh[kAttentionTile];
  __shared__ float scratch[kWarpSize];

  const int d = s.head_dim;
  const unsigned block = blockIdx.x;
  const int t = s.n_new - 1 - static_cast<int>(block % s.n_new);
  const int h = static_cast<int>((block / s.n_new) % s.n_heads);
  const int b = static_cast<int>(block / s.n_new / s.n_heads);
  const int g = h / (s.n_heads / s.n_kv_heads);  // the kv head this query head reads
  const float* qh = q + b * q_s.batch + t * q_s.seq + h * q_s.head;
  const int n_keys = keys_of(b, t);  // causal: keys [0, n_keys)

  const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
  for (int i = threadIdx.x; i < d; i += kAttentionThreads) q_sh[i] = qh[i];

  float acc[kAttentionDimsPerThread] = {};
  float running_max = -INFINITY, running_sum = 0.0f;
  for (int tile_start = 0; tile_start < n_keys; tile_start += kAttentionTile) {
    const int tile_keys = min(kAttentionTile, n_keys - tile_start);

    // 0. where each key (and value) of the tile lives.
    for (int j = threadIdx.x; j < tile_keys; j += kAttentionThreads)
      at_sh[j] = kv_at(b, g, tile_start + j);
    __syncthreads();  // publishes the offsets (and, on the first tile, q)

    // 1. scores[j] = q . k_j / sqrt(d), one warp per key.
    float local_max = -INFINITY;
    for (int j = warp; j < tile_keys; j += kAttentionWarps) {
      const float* kj = k + at_sh[j];
      float dot = 0.0f;
      for (int i = lane; i < d; i += kWarpSize) dot += q_sh[i] * kj[i];
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
      for (int j = 0; j < tile_keys; ++j) a += p_sh[j] * v[at_sh[j] + i];
      acc[c] = a;
    }
    __syncthreads();  // the next tile overwrites p_sh and at_sh
  }

  float* oh = out + b * out_s.batch + t * out_s.seq + h * out_s.head;
  for (int c = 0; c < kAttentionDimsPerThread; ++c) {
    const int i = threadIdx.x + c * kAttentionThreads;
    if (i < d) oh[i] = acc[c] / running_sum;
  }
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
