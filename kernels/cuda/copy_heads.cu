// Strided head copy on the GPU: a flat grid-stride loop over every element, head_dim fastest,
// so consecutive threads read and write consecutive floats of one head on both sides
// (coalesced whatever the two layouts are). An exact copy: equal to the CPU reference.
// Deliberately not: a shared-memory tiled transpose. Both layouts keep head_dim contiguous, so
// the accesses coalesce without one.
#include "kernels/cuda/copy_heads.cuh"

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_common.cuh"

namespace llmbench::cuda {

namespace {

__global__ void copy_heads_kernel(float* out, HeadStrides out_s, const float* in, HeadStrides in_s,
                                  int seq, int heads, int head_dim, std::size_t total) {
  const std::size_t step = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t e = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; e < total; e += step) {
    const std::int64_t i = static_cast<std::int64_t>(e % head_dim);
    std::size_t rest = e / head_dim;
    const std::int64_t h = static_cast<std::int64_t>(rest % heads);
    rest /= heads;
    const std::int64_t t = static_cast<std::int64_t>(rest % seq);
    const std::int64_t b = static_cast<std::int64_t>(rest / seq);
    out[b * out_s.batch + t * out_s.seq + h * out_s.head + i] =
        in[b * in_s.batch + t * in_s.seq + h * in_s.head + i];
  }
}

}  // namespace

void copy_heads(float* out, const HeadStrides& out_strides, const float* in,
                const HeadStrides& in_strides, int batch, int seq, int heads, int head_dim,
                cudaStream_t stream) {
  if (batch <= 0 || seq <= 0 || heads <= 0 || head_dim <= 0) return;
  const std::size_t total = static_cast<std::size_t>(batch) * seq * heads * head_dim;
  copy_heads_kernel<<<detail::flat_blocks(total), detail::kFlatThreads, 0, stream>>>(
      out, out_strides, in, in_strides, seq, heads, head_dim, total);
  LLMBENCH_CUDA_LAUNCH_CHECK();
}

}  // namespace llmbench::cuda
