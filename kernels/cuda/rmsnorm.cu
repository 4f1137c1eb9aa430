// RMSNorm on the GPU: one block per row, a block-wide sum of squares (warp shuffles, then one
// value per warp through shared memory), then every thread scales its own elements.
// The sum of squares is accumulated in double, as in the CPU reference: the kernel is bound by
// memory traffic, not arithmetic, so double costs nothing measurable on data-centre GPUs, and
// the per-row factor then nearly always equals the CPU's bit for bit (only the summation order
// differs). The factor itself comes from the shared rmsnorm_inv_rms (kernels/common/op_math.h).
// Deliberately not: fused with the residual add, or vectorised (1024 threads already make a decode
// row one round of loads).
#include "kernels/cuda/rmsnorm.cuh"

#include <cstddef>

#include "kernels/common/op_math.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_common.cuh"

namespace llmbench::cuda {

namespace {

// 1024 threads: a decode row (dim 4096) is 4 elements per thread, one round of loads, not 16
// dependent rounds (a 256-thread block measured 13.7 us per row on an H100; docs/gpu-validation.md).
constexpr int kThreads = 1024;

// x and out are not __restrict__: they may alias. Each thread reads exactly the elements it
// later writes, and block_sum's barrier separates all reads of the first pass from any write.
__global__ void rmsnorm_kernel(float* out, const float* x, const float* weight, int dim,
                               float eps) {
  __shared__ double scratch[detail::kWarpSize];
  const float* xr = x + static_cast<std::size_t>(blockIdx.x) * dim;
  float* outr = out + static_cast<std::size_t>(blockIdx.x) * dim;

  double sum_sq = 0.0;
  for (int i = threadIdx.x; i < dim; i += blockDim.x) {
    const double v = xr[i];
    sum_sq += v * v;
  }
  sum_sq = detail::block_sum(sum_sq, scratch);
  const float scale = rmsnorm_inv_rms(sum_sq, dim, eps);

  for (int i = threadIdx.x; i < dim; i += blockDim.x) outr[i] = xr[i] * scale * weight[i];
}

}  // namespace

void rmsnorm(float* out, const float* x, const float* weight, int n_rows, int dim, float eps,
             cudaStream_t stream) {
  if (n_rows <= 0 || dim <= 0) return;
  rmsnorm_kernel<<<n_rows, kThreads, 0, stream>>>(out, x, weight, dim, eps);
  LLMBENCH_CUDA_LAUNCH_CHECK();
}

}  // namespace llmbench::cuda
