// Small elementwise and copy ops on the GPU (residual add, bias add, row gather).
// Flat grid-stride loops, one element per thread step; the results are exact (one add or a copy
// per element), so they equal the CPU references bit for bit.
// Deliberately not: vectorised float4 paths or fusion; these ops are a small share of a step.
#include "kernels/cuda/elementwise.cuh"

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_common.cuh"

namespace llmbench::cuda {

namespace {

__global__ void add_inplace_kernel(float* x, const float* y, std::size_t n) {
  const std::size_t step = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += step)
    x[i] += y[i];
}

__global__ void add_bias_rows_kernel(float* x, int n_rows, int stride, const float* bias, int n) {
  const std::size_t total = static_cast<std::size_t>(n_rows) * n;
  const std::size_t step = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t e = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; e < total; e += step) {
    const std::size_t r = e / n, i = e % n;
    x[r * stride + i] += bias[i];
  }
}

// One block per output row; the threads copy the row's dim floats.
__global__ void gather_rows_kernel(float* out, const float* x, const int32_t* rows, int dim) {
  const std::size_t r = blockIdx.x;
  const float* src = x + static_cast<std::size_t>(rows[r]) * dim;  // size_t: vocab * dim > 2^31
  float* dst = out + r * dim;
  for (int i = threadIdx.x; i < dim; i += blockDim.x) dst[i] = src[i];
}

}  // namespace

void add_inplace(float* x, const float* y, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  add_inplace_kernel<<<detail::flat_blocks(n), detail::kFlatThreads, 0, stream>>>(x, y, n);
  LLMBENCH_CUDA_LAUNCH_CHECK();
}

void add_bias_rows(float* x, int n_rows, int stride, const float* bias, int n,
                   cudaStream_t stream) {
  if (n_rows <= 0 || n <= 0) return;
  const std::size_t total = static_cast<std::size_t>(n_rows) * n;
  add_bias_rows_kernel<<<detail::flat_blocks(total), detail::kFlatThreads, 0, stream>>>(
      x, n_rows, stride, bias, n);
  LLMBENCH_CUDA_LAUNCH_CHECK();
}

void gather_rows(float* out, const float* x, const int32_t* rows, int n_rows, int dim,
                 cudaStream_t stream) {
  if (n_rows <= 0 || dim <= 0) return;
  gather_rows_kernel<<<n_rows, detail::kFlatThreads, 0, stream>>>(out, x, rows, dim);
  LLMBENCH_CUDA_LAUNCH_CHECK();
}

}  // namespace llmbench::cuda
