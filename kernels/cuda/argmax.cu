// Per-row argmax on the GPU: one block of 1024 threads per row. Each thread scans a strided slice
// of the row, eight loads in flight at a time, keeping its best (value, index) under the shared
// rule argmax_prefers (kernels/common/op_math.h: NaN first, then the larger value, then the lower
// index), then the block combines the candidates with warp shuffles and one shared-memory round.
// The rule is a total order, so neither the combination order nor the slicing matters: the
// result equals the CPU reference's exactly.
// Why the loads in flight: with 256 threads and one dependent load per step (the scan stopped at
// a NaN), llama2-7b's 32000 logits took 49 us on an H200 (docs/gpu-validation.md, 2026-11-26),
// about one L2 round trip per 256 columns; eight independent loads per thread and four times the
// threads cut the round trips a row needs from 125 to 4 (not yet timed on a device).
// Deliberately not: top-k, temperature, or a two-pass split of very long rows across blocks.
#include "kernels/cuda/argmax.cuh"

#include <cstddef>

#include "kernels/common/op_math.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_common.cuh"

namespace llmbench::cuda {

namespace {

constexpr int kThreads = 1024;  // 32 warps: one shared-memory slot per warp below
constexpr int kUnroll = 8;      // loads in flight per thread
constexpr int32_t kNoIndex = 0x7fffffff;  // the identity's index: every real column beats it

struct Candidate {
  float value;
  int32_t index;
};

__device__ inline Candidate better(Candidate a, Candidate b) {
  return argmax_prefers(a.value, a.index, b.value, b.index) ? a : b;
}

__device__ inline Candidate warp_best(Candidate c) {
  for (int offset = detail::kWarpSize / 2; offset > 0; offset /= 2) {
    const Candidate other{__shfl_xor_sync(0xffffffffu, c.value, offset),
                          __shfl_xor_sync(0xffffffffu, c.index, offset)};
    c = better(c, other);
  }
  return c;
}

static_assert(kThreads / detail::kWarpSize <= detail::kWarpSize, "one scratch slot per warp");

__global__ void __launch_bounds__(kThreads)
    argmax_rows_kernel(int32_t* out, const float* x, int n_cols) {
  __shared__ Candidate scratch[detail::kWarpSize];
  const float* row = x + static_cast<std::size_t>(blockIdx.x) * n_cols;

  Candidate best{-INFINITY, kNoIndex};
  for (int j0 = threadIdx.x; j0 < n_cols; j0 += kThreads * kUnroll) {
    float v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int j = j0 + u * kThreads;
      v[u] = j < n_cols ? __ldg(row + j) : -INFINITY;
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int j = j0 + u * kThreads;
      if (j < n_cols) best = better(best, Candidate{v[u], j});
    }
  }

  best = warp_best(best);
  const int lane = threadIdx.x % detail::kWarpSize, warp = threadIdx.x / detail::kWarpSize;
  if (lane == 0) scratch[warp] = best;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kThreads / detail::kWarpSize; ++w)
      best = better(best, scratch[w]);
    out[blockIdx.x] = best.index;
  }
}

}  // namespace

void argmax_rows(int32_t* out, const float* x, int n_rows, int n_cols, cudaStream_t stream) {
  if (n_rows <= 0) return;
  if (n_cols <= 0) {
    // The reference yields 0 for an empty row.
    LLMBENCH_CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(int32_t) * n_rows, stream));
    return;
  }
  argmax_rows_kernel<<<n_rows, kThreads, 0, stream>>>(out, x, n_cols);
  LLMBENCH_CUDA_LAUNCH_CHECK();
}

}  // namespace llmbench::cuda
