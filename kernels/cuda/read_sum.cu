// The device read test (see read_sum.cuh): a grid-stride loop of float4 loads per thread into
// four independent accumulators (so the loop waits on memory, not on one add chain), then one
// block sum per block.
#include "kernels/cuda/read_sum.cuh"

#include <algorithm>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_common.cuh"

namespace llmbench::cuda {

namespace {

constexpr int kThreads = 256;

__global__ void read_sum_kernel(float* partial, const float* x, std::int64_t n) {
  __shared__ float scratch[detail::kWarpSize];
  const std::int64_t n4 = n / 4;
  const float4* x4 = reinterpret_cast<const float4*>(x);
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  float a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n4; i += stride) {
    const float4 v = x4[i];
    a0 += v.x;
    a1 += v.y;
    a2 += v.z;
    a3 += v.w;
  }
  if (blockIdx.x == 0)
    for (std::int64_t i = n4 * 4 + threadIdx.x; i < n; i += blockDim.x) a0 += x[i];
  const float total = detail::block_sum((a0 + a1) + (a2 + a3), scratch);
  if (threadIdx.x == 0) partial[blockIdx.x] = total;
}

}  // namespace

int read_sum_blocks(std::int64_t n) {
  const std::int64_t want = (n / 4 + kThreads - 1) / kThreads;
  return int(std::max<std::int64_t>(1, std::min<std::int64_t>(want, kReadSumMaxBlocks)));
}

void read_sum_partial(float* partial, const float* x, std::int64_t n, cudaStream_t stream) {
  read_sum_kernel<<<read_sum_blocks(n), kThreads, 0, stream>>>(partial, x, n);
  LLMBENCH_CUDA_LAUNCH_CHECK();
}

}  // namespace llmbench::cuda
