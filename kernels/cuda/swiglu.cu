// SwiGLU on the GPU: a flat grid-stride loop over the n_rows * ffn_dim outputs, each computed
// by the shared swiglu_value (kernels/common/op_math.h). expf is CUDA's full-precision one
// (within 2 ulp; this project never builds with --use_fast_math).
// Deliberately not: fused into the gate/up matmul's epilogue.
#include "kernels/cuda/swiglu.cuh"

#include <cstddef>

#include "kernels/common/op_math.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_common.cuh"

namespace llmbench::cuda {

namespace {

__global__ void swiglu_kernel(float* out, const float* gate_up, int n_rows, int ffn_dim) {
  const std::size_t total = static_cast<std::size_t>(n_rows) * ffn_dim;
  const std::size_t step = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t e = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; e < total; e += step) {
    const std::size_t r = e / ffn_dim, i = e % ffn_dim;
    const float* row = gate_up + r * 2 * ffn_dim;
    out[e] = swiglu_value(row[i], row[ffn_dim + i]);
  }
}

}  // namespace

void swiglu(float* out, const float* gate_up, int n_rows, int ffn_dim, cudaStream_t stream) {
  if (n_rows <= 0 || ffn_dim <= 0) return;
  const std::size_t total = static_cast<std::size_t>(n_rows) * ffn_dim;
  swiglu_kernel<<<detail::flat_blocks(total), detail::kFlatThreads, 0, stream>>>(out, gate_up,
                                                                                 n_rows, ffn_dim);
  LLMBENCH_CUDA_LAUNCH_CHECK();
}

}  // namespace llmbench::cuda
