// Causal GQA attention on the GPU: one block of 128 threads per (sequence, query head, query
// token). The block walks the query's visible keys in tiles of kTile:
//   1. scores: one warp per key, lanes across head_dim (coalesced reads of the key row), a warp
//      shuffle sum, times 1/sqrt(head_dim); kept in shared memory;
//   2. softmax: the tile maximum; exp(score - running max) in place; their sum;
//   3. values: thread i owns output dims i and i + 128 and accumulates p_j * v_j[i] (coalesced).
// Keys beyond one tile use the online-softmax rescaling (the running max grows, and the earlier
// sum and accumulators are multiplied by exp(old max - new max)), so shared memory stays at
// 8 KB of scores for any context length. Up to kTile keys it is exactly the reference's
// algorithm: scores, max subtraction, exp, sum, weighted values, one division; only summation
// orders differ. Accumulation is in float, as in the reference.
// Deliberately not: flash-attention tiling over queries, tensor cores, or split-K over keys for
// long-context decode (a batch-1 decode launches only n_heads blocks; that is the next version).
#include "kernels/cuda/attention.cuh"

#include <cstddef>
#include <string>

#include "engine/error.h"
#include "kernels/common/op_math.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_common.cuh"

namespace llmbench::cuda {

namespace {

constexpr int kThreads = 128;
constexpr int kWarps = kThreads / detail::kWarpSize;
constexpr int kTile = 2048;  // keys whose scores are held at once: 8 KB of shared memory
constexpr int kDimsPerThread = kAttentionMaxHeadDim / kThreads;
static_assert(kAttentionMaxHeadDim % kThreads == 0);

// blockIdx.x enumerates (b, h, t) with t fastest and reversed, so the queries that see the
// most keys are scheduled first and the short ones fill in at the end.
__global__ void __launch_bounds__(kThreads)
    attention_kernel(float* out, const float* q, const float* k_cache, const float* v_cache,
                     AttentionShape s, float scale) {
  __shared__ float q_s[kAttentionMaxHeadDim];
  __shared__ float p_s[kTile];
  __shared__ float scratch[detail::kWarpSize];

  const int d = s.head_dim;
  const unsigned block = blockIdx.x;
  const int t = s.n_new - 1 - static_cast<int>(block % s.n_new);
  const int h = static_cast<int>((block / s.n_new) % s.n_heads);
  const int b = static_cast<int>(block / s.n_new / s.n_heads);
  const int group = s.n_heads / s.n_kv_heads;  // query heads sharing one kv head
  const std::size_t kv_dim = static_cast<std::size_t>(s.n_kv_heads) * d;
  const std::size_t row = static_cast<std::size_t>(b) * s.n_new + t;
  const float* qh = q + row * s.q_stride + static_cast<std::size_t>(h) * d;
  // Key/value j of this sequence and kv head: k_seq + j * kv_dim, d contiguous floats.
  const std::size_t seq_offset = static_cast<std::size_t>(b) * s.cache_seq * kv_dim +
                                 static_cast<std::size_t>(h / group) * d;
  const float* k_seq = k_cache + seq_offset;
  const float* v_seq = v_cache + seq_offset;
  const int n_keys = s.past_len + t + 1;  // causal: keys [0, past_len + t]

  const int lane = threadIdx.x % detail::kWarpSize, warp = threadIdx.x / detail::kWarpSize;
  for (int i = threadIdx.x; i < d; i += kThreads) q_s[i] = qh[i];
  __syncthreads();

  float acc[kDimsPerThread] = {};
  float running_max = -INFINITY, running_sum = 0.0f;
  for (int tile_start = 0; tile_start < n_keys; tile_start += kTile) {
    const int tile_keys = min(kTile, n_keys - tile_start);
    const float* k_tile = k_seq + static_cast<std::size_t>(tile_start) * kv_dim;
    const float* v_tile = v_seq + static_cast<std::size_t>(tile_start) * kv_dim;

    // 1. scores[j] = q . k_j / sqrt(d), one warp per key.
    float local_max = -INFINITY;
    for (int j = warp; j < tile_keys; j += kWarps) {
      const float* kj = k_tile + static_cast<std::size_t>(j) * kv_dim;
      float dot = 0.0f;
      for (int i = lane; i < d; i += detail::kWarpSize) dot += q_s[i] * kj[i];
      const float score = detail::warp_sum(dot) * scale;
      if (lane == 0) p_s[j] = score;
      local_max = fmaxf(local_max, score);
    }
    // The barrier inside block_max also publishes the scores.
    const float new_max = fmaxf(running_max, detail::block_max(local_max, scratch));

    // 2. softmax numerators exp(score - max) (each <= 1) and their sum. `rescale` carries the
    //    earlier tiles over to the new maximum; on the first tile it is exp(-inf) = 0.
    const float rescale = expf(running_max - new_max);
    float local_sum = 0.0f;
    for (int j = threadIdx.x; j < tile_keys; j += kThreads) {
      const float p = expf(p_s[j] - new_max);
      p_s[j] = p;
      local_sum += p;
    }
    running_sum = running_sum * rescale + detail::block_sum(local_sum, scratch);
    running_max = new_max;

    // 3. acc = sum_j p_j v_j over this tile, on top of the rescaled earlier tiles.
    for (int c = 0; c < kDimsPerThread; ++c) {
      const int i = threadIdx.x + c * kThreads;
      if (i >= d) break;
      float a = acc[c] * rescale;
      const float* vi = v_tile + i;
      for (int j = 0; j < tile_keys; ++j) a += p_s[j] * vi[static_cast<std::size_t>(j) * kv_dim];
      acc[c] = a;
    }
    __syncthreads();  // the next tile overwrites p_s
  }

  float* oh = out + row * s.out_stride + static_cast<std::size_t>(h) * d;
  for (int c = 0; c < kDimsPerThread; ++c) {
    const int i = threadIdx.x + c * kThreads;
    if (i < d) oh[i] = acc[c] / running_sum;
  }
}

}  // namespace

void attention(float* out, const float* q, const float* k_cache, const float* v_cache,
               const AttentionShape& s, cudaStream_t stream) {
  if (s.batch <= 0 || s.n_new <= 0 || s.n_heads <= 0) return;
  if (s.head_dim <= 0 || s.head_dim > kAttentionMaxHeadDim || s.n_kv_heads <= 0 ||
      s.n_heads % s.n_kv_heads != 0) {
    throw Error("cuda::attention: unsupported shape (head_dim " + std::to_string(s.head_dim) +
                ", max " + std::to_string(kAttentionMaxHeadDim) + "; n_heads " +
                std::to_string(s.n_heads) + ", n_kv_heads " + std::to_string(s.n_kv_heads) +
                ", which must divide it)");
  }
  const unsigned long long blocks =
      static_cast<unsigned long long>(s.batch) * s.n_heads * s.n_new;
  if (blocks > 0x7fffffffull) throw Error("cuda::attention: over 2^31 - 1 (query, head) pairs");
  attention_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      out, q, k_cache, v_cache, s, attention_scale(s.head_dim));
  LLMBENCH_CUDA_LAUNCH_CHECK();
}

}  // namespace llmbench::cuda
