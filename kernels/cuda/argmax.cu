// Per-row argmax on the GPU: one block per row. Each thread scans a strided slice of the row,
// keeping its best (value, index) under the shared rule argmax_prefers (kernels/common/op_math.h:
// NaN first, then the larger value, then the lower index), then the block combines the
// candidates with warp shuffles and one shared-memory round. The rule is a total order, so the
// combination order does not matter and the result equals the CPU reference's exactly.
// Deliberately not: top-k, temperature, or a two-pass split of very long rows across blocks.
#include "kernels/cuda/argmax.cuh"

#include <cstddef>

#include "kernels/common/op_math.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_common.cuh"

namespace llmbench::cuda {

namespace {

constexpr int kThreads = 256;
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

__global__ void argmax_rows_kernel(int32_t* out, const float* x, int n_cols) {
  __shared__ Candidate scratch[detail::kWarpSize];
  const float* row = x + static_cast<std::size_t>(blockIdx.x) * n_cols;

  Candidate best{-INFINITY, kNoIndex};
  for (int j = threadIdx.x; j < n_cols; j += blockDim.x) {
    const float v = row[j];
    best = better(best, Candidate{v, j});
    if (is_nan(v)) break;  // this thread's later columns have higher indices: they cannot win
  }

  best = warp_best(best);
  const int lane = threadIdx.x % detail::kWarpSize, warp = threadIdx.x / detail::kWarpSize;
  if (lane == 0) scratch[warp] = best;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < static_cast<int>(blockDim.x) / detail::kWarpSize; ++w)
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
