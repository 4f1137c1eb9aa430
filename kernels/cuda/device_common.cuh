// Building blocks shared by the kernels in kernels/cuda: launch sizing for flat element-wise
// kernels and warp/block sum and max reductions. Device code; include only from .cu files.
// Deliberately not: cooperative-groups or CUB (a few shuffles are all these kernels need, and
// CUB's templates cost compile time).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

namespace llmbench::cuda::detail {

inline constexpr int kWarpSize = 32;

// Threads per block of the flat element-wise kernels.
inline constexpr int kFlatThreads = 256;

// Blocks for a grid-stride loop over n elements: enough to fill any current GPU several times
// over, capped so huge n still gives a valid grid (each thread then loops).
inline unsigned flat_blocks(std::size_t n) {
  constexpr std::size_t kMaxBlocks = std::size_t{1} << 16;
  return static_cast<unsigned>(
      std::min<std::size_t>((n + kFlatThreads - 1) / kFlatThreads, kMaxBlocks));
}

// Sum / max over the 32 lanes of a warp; every lane receives the result.
template <typename T>
__device__ inline T warp_sum(T v) {
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2)
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

__device__ inline float warp_max(float v) {
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// Sum over the whole block (blockDim.x a multiple of 32, at most 1024); every thread receives
// the result. `scratch` is shared memory for 32 values. Contains two __syncthreads(), so all
// threads must call it, and it also orders the shared-memory writes made before it.
template <typename T>
__device__ inline T block_sum(T v, T* scratch) {
  const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
  const int n_warps = blockDim.x / kWarpSize;
  v = warp_sum(v);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  T total = scratch[0];
  for (int w = 1; w < n_warps; ++w) total += scratch[w];
  __syncthreads();  // scratch may be reused right after
  return total;
}

// Maximum over the whole block; the same contract as block_sum.
__device__ inline float block_max(float v, float* scratch) {
  const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
  const int n_warps = blockDim.x / kWarpSize;
  v = warp_max(v);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  float result = scratch[0];
  for (int w = 1; w < n_warps; ++w) result = fmaxf(result, scratch[w]);
  __syncthreads();
  return result;
}

}  // namespace llmbench::cuda::detail
