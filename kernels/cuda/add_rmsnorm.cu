// Residual add + RMSNorm on the GPU (see add_rmsnorm.cuh): rmsnorm.cu's kernel, one block per
// row, whose first pass also adds the residual and stores the sum. A decode step runs it twice a
// layer in place of four kernels, and reads x once instead of twice.
// Deliberately not: vectorised loads (rmsnorm.cu's 1024 threads already make a decode row one
// round of loads).
#include "kernels/cuda/add_rmsnorm.cuh"

#include <cstddef>

#include "kernels/common/op_math.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_common.cuh"

namespace llmbench::cuda {

namespace {

constexpr int kThreads = 1024;  // as rmsnorm.cu: the same per-thread elements and sum order

__global__ void add_rmsnorm_kernel(float* x, const float* __restrict__ residual,
                                   float* __restrict__ out, const float* __restrict__ weight,
                                   int dim, float eps) {
  __shared__ double scratch[detail::kWarpSize];
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * dim;
  float* xr = x + base;
  double sum_sq = 0.0;
  for (int i = threadIdx.x; i < dim; i += blockDim.x) {
    const float v = xr[i] + residual[base + i];
    xr[i] = v;  // each thread later reads back only the elements it wrote
    const double d = v;
    sum_sq += d * d;
  }
  sum_sq = detail::block_sum(sum_sq, scratch);
  const float scale = rmsnorm_inv_rms(sum_sq, dim, eps);
  for (int i = threadIdx.x; i < dim; i += blockDim.x) out[base + i] = xr[i] * scale * weight[i];
}

}  // namespace

void add_rmsnorm(float* x, const float* residual, float* out, const float* weight, int n_rows,
                 int dim, float eps, cudaStream_t stream) {
  if (n_rows <= 0 || dim <= 0) return;
  add_rmsnorm_kernel<<<n_rows, kThreads, 0, stream>>>(x, residual, out, weight, dim, eps);
  LLMBENCH_CUDA_LAUNCH_CHECK();
}

}  // namespace llmbench::cuda
