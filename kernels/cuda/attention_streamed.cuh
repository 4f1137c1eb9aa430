// The streamed attention kernel (AttentionKernel::kStreamed, attention.cuh): the same queries,
// key splits and partial results as attention_kernel.cuh's tiled kernel, organised for decode,
// where a block has few keys and the tiled kernel's time is latency (a shared-memory pass per
// phase, one key per warp at a time, block-wide reductions between phases).
// Device code; include only from .cu files (through attention_launch.cuh).
//
// One block of kStreamedThreads threads per (query, split), as the tiled kernel. Each warp owns
// the block's keys in chunks of kKeys consecutive keys (warp w takes chunks w, w + warps, ...):
//   1. every lane loads its kVec dims of the chunk's key rows and value rows at once (vector
//      loads of whole 128-1024 B rows, 2 x kKeys of them in flight per lane);
//   2. each key's dot product is summed over the warp (shuffles), times 1/sqrt(head_dim);
//   3. the warp's online softmax, in registers: the running max grows to the chunk's, the
//      earlier sum and accumulators are rescaled by exp(old max - new max), p_j = exp(s_j - max),
//      the lane's kVec accumulators gain p_j v_j.
// At the end the block's warps merge their (max, sum, accumulators) once in shared memory with
// the same rescaling, and the block writes its output, or its split's partial result in the
// tiled kernel's layout (SplitOut), merged as the tiled kernel's are. No barrier inside the key
// loop.
// Arithmetic as the reference's up to summation order (float throughout; expf, not __expf).
// Needs head_dim == 32 * kVec (64, 128, 256) and every key and value row aligned to its vector
// loads; streamed_vec() says which, and launch_attention falls back to the tiled kernel.
// Over an fp16 cache (T = __half, --kv-dtype fp16) a lane's kVec dims are kVec halves, loaded in
// one 4-, 8- or 16-byte load (8 halves per 16 bytes at head_dim 256) and widened exactly to float
// before any arithmetic: the same scores, softmax and accumulators as over the widened cache.
// The chunk keeps kKeys keys, so a lane has half the bytes in flight of the fp32 kernel; the key
// partition over warps (and so the summation order) is the fp32 kernel's.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/common/layout.h"
#include "kernels/cuda/attention_kernel.cuh"
#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/widen.cuh"

namespace llmbench::cuda::detail {

inline constexpr int kStreamedThreads = 128;
inline constexpr int kStreamedWarps = kStreamedThreads / kWarpSize;

// Floats each lane holds of a head_dim row, or 0 when the streamed kernel cannot take the
// shape: head_dim must fill the warp's lanes exactly with 2, 4 or 8 floats each.
inline int streamed_vec(int head_dim) {
  static_assert(kWarpSize == 32);  // streamed_attention_takes counts 32 lanes
  return streamed_attention_takes(head_dim) ? head_dim / kWarpSize : 0;
}

// Elements of T a lane's load of kVec elements must be aligned to: the load's own size, up to 16
// bytes. Floats: float2 8 bytes (2), float4 and two float4 16 (4). Halves: __half2 4 bytes (2),
// uint2 8 (4), uint4 16 (8).
template <class T>
inline constexpr int streamed_align_elems(int vec) {
  constexpr int kPer16Bytes = static_cast<int>(16 / sizeof(T));
  return vec < kPer16Bytes ? vec : kPer16Bytes;
}

// Loads kVec consecutive floats at p (aligned as streamed_align_elems<float> says) into r.
template <int kVec>
__device__ inline void load_row_part(const float* p, float (&r)[kVec]) {
  if constexpr (kVec == 2) {
    const float2 x = *reinterpret_cast<const float2*>(p);
    r[0] = x.x;
    r[1] = x.y;
  } else {
    static_assert(kVec % 4 == 0);
#pragma unroll
    for (int c = 0; c < kVec; c += 4) {
      const float4 x = *reinterpret_cast<const float4*>(p + c);
      r[c] = x.x;
      r[c + 1] = x.y;
      r[c + 2] = x.z;
      r[c + 3] = x.w;
    }
  }
}

// Loads kVec consecutive halves at p (aligned as streamed_align_elems<__half> says: one load of
// 2 x kVec bytes) into r, widened exactly.
template <int kVec>
__device__ inline void load_row_part(const __half* p, float (&r)[kVec]) {
  if constexpr (kVec == 2) {
    const float2 x = __half22float2(*reinterpret_cast<const __half2*>(p));
    r[0] = x.x;
    r[1] = x.y;
  } else if constexpr (kVec == 4) {
    const uint2 x = *reinterpret_cast<const uint2*>(p);
    const auto* h = reinterpret_cast<const __half2*>(&x);
    const float2 lo = __half22float2(h[0]), hi = __half22float2(h[1]);
    r[0] = lo.x;
    r[1] = lo.y;
    r[2] = hi.x;
    r[3] = hi.y;
  } else {
    static_assert(kVec == 8);
    // One 16-byte load into a register copy first: widen8 reads its argument as four __half2,
    // which on a reference to global memory would be four 4-byte loads.
    const uint4 x = *reinterpret_cast<const uint4*>(p);
    widen8(x, p, r);
  }
}

// Keys per chunk: 2 x kKeys x kVec elements of loads in flight per lane, 64 at every head_dim.
template <int kVec>
inline constexpr int kStreamedKeys = 32 / kVec;

// T: the cache's element type (float or __half).
template <int kVec, class T, class KvAt, class KeysOf>
__global__ void __launch_bounds__(kStreamedThreads)
    attention_streamed_kernel(float* out, HeadStrides out_s, const float* q, HeadStrides q_s,
                              const T* k, const T* v, AttentionShape s, KvAt kv_at,
                              KeysOf keys_of, float scale, SplitOut split) {
  constexpr int kKeys = kStreamedKeys<kVec>;
  constexpr int kDim = kVec * kWarpSize;
  __shared__ float max_sh[kStreamedWarps];
  __shared__ float sum_sh[kStreamedWarps];
  __shared__ float acc_sh[kStreamedWarps][kDim];

  const unsigned block = blockIdx.x;
  int b, h, t;
  query_of(block, s, b, h, t);
  const int g = h / (s.n_heads / s.n_kv_heads);
  const auto [key_begin, key_end] = split_keys(split, keys_of(b, t));

  const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
  const int dim0 = lane * kVec;  // this lane's dims: [dim0, dim0 + kVec)
  float qv[kVec];
  const float* qh = q + b * q_s.batch + t * q_s.seq + h * q_s.head;
#pragma unroll
  for (int c = 0; c < kVec; ++c) qv[c] = qh[dim0 + c];  // q's rows need no alignment

  float acc[kVec] = {};
  float running_max = -INFINITY, running_sum = 0.0f;
  for (int chunk = key_begin + warp * kKeys; chunk < key_end; chunk += kStreamedWarps * kKeys) {
    // 1. the chunk's key and value rows, all loads issued before any is used.
    float kr[kKeys][kVec], vr[kKeys][kVec];
#pragma unroll
    for (int u = 0; u < kKeys; ++u) {
      const int j = chunk + u;
      if (j < key_end) {
        const std::int64_t at = kv_at(b, g, j) + dim0;
        load_row_part<kVec>(k + at, kr[u]);
        load_row_part<kVec>(v + at, vr[u]);
      } else {
#pragma unroll
        for (int c = 0; c < kVec; ++c) kr[u][c] = vr[u][c] = 0.0f;
      }
    }
    // 2. scores; keys past the end score -inf (weight exp(-inf) = 0).
    float score[kKeys];
    float chunk_max = -INFINITY;
#pragma unroll
    for (int u = 0; u < kKeys; ++u) {
      float dot = 0.0f;
#pragma unroll
      for (int c = 0; c < kVec; ++c) dot += qv[c] * kr[u][c];
      dot = warp_sum(dot) * scale;
      score[u] = chunk + u < key_end ? dot : -INFINITY;
      chunk_max = fmaxf(chunk_max, score[u]);
    }
    // 3. online softmax. The chunk's first key is always in range, so chunk_max is finite
    //    (unless a score overflowed to -inf, which the reference would not survive either).
    const float new_max = fmaxf(running_max, chunk_max);
    const float rescale = expf(running_max - new_max);  // 0 on the first chunk
    float chunk_sum = 0.0f;
#pragma unroll
    for (int c = 0; c < kVec; ++c) acc[c] *= rescale;
#pragma unroll
    for (int u = 0; u < kKeys; ++u) {
      const float p = expf(score[u] - new_max);
      chunk_sum += p;
#pragma unroll
      for (int c = 0; c < kVec; ++c) acc[c] += p * vr[u][c];
    }
    running_sum = running_sum * rescale + chunk_sum;
    running_max = new_max;
  }

  // Merge the warps. A warp that had no keys has max -inf and sum 0: weight 0, unless no warp
  // had any (an empty split), which writes max -inf, sum 0 and zero accumulators, as the tiled
  // kernel does.
  if (lane == 0) {
    max_sh[warp] = running_max;
    sum_sh[warp] = running_sum;
  }
#pragma unroll
  for (int c = 0; c < kVec; ++c) acc_sh[warp][dim0 + c] = acc[c];
  __syncthreads();
  float block_max_v = -INFINITY;
#pragma unroll
  for (int w = 0; w < kStreamedWarps; ++w) block_max_v = fmaxf(block_max_v, max_sh[w]);
  float weight[kStreamedWarps];
  float total = 0.0f;
#pragma unroll
  for (int w = 0; w < kStreamedWarps; ++w) {
    weight[w] = block_max_v == -INFINITY ? 0.0f : expf(max_sh[w] - block_max_v);
    total += sum_sh[w] * weight[w];
  }

  // The block's output (divided by the total) or, for a split, its partial result.
  float* part = nullptr;
  if (split.keys_per_split > 0) {
    part = split.partial + (static_cast<std::size_t>(block) * gridDim.y + blockIdx.y) *
                               static_cast<std::size_t>(kDim + 2);
    if (threadIdx.x == 0) {
      part[0] = block_max_v;
      part[1] = total;
    }
  }
  float* oh = out + b * out_s.batch + t * out_s.seq + h * out_s.head;
  for (int i = threadIdx.x; i < kDim; i += kStreamedThreads) {
    float a = 0.0f;
#pragma unroll
    for (int w = 0; w < kStreamedWarps; ++w) a += acc_sh[w][i] * weight[w];
    if (part)
      part[2 + i] = a;
    else
      oh[i] = a / total;
  }
  if (part != nullptr && split.arrivals != nullptr) merge_if_last(out, out_s, split, s, block);
}

}  // namespace llmbench::cuda::detail
