// fp32 <-> bf16 / fp16 conversions: one grid-stride kernel template, four instantiations, each
// element converted by the CUDA intrinsic that rounds to nearest even (__float2bfloat16,
// __float2half) or widens exactly.
// Deliberately not: vectorised (these run once per weight load or once per GEMM input).
#include "kernels/cuda/convert.cuh"

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_common.cuh"

namespace llmbench::cuda {

namespace {

__device__ inline void convert_value(__nv_bfloat16* to, float from) {
  *to = __float2bfloat16(from);
}
__device__ inline void convert_value(__half* to, float from) { *to = __float2half(from); }
__device__ inline void convert_value(float* to, __nv_bfloat16 from) {
  *to = __bfloat162float(from);
}
__device__ inline void convert_value(float* to, __half from) { *to = __half2float(from); }

template <typename To, typename From>
__global__ void convert_kernel(To* out, const From* x, std::size_t n) {
  const std::size_t step = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += step)
    convert_value(&out[i], x[i]);
}

template <typename To, typename From>
void launch_convert(To* out, const From* x, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  convert_kernel<<<detail::flat_blocks(n), detail::kFlatThreads, 0, stream>>>(out, x, n);
  LLMBENCH_CUDA_LAUNCH_CHECK();
}

}  // namespace

void convert_f32_to_bf16(__nv_bfloat16* out, const float* x, std::size_t n, cudaStream_t stream) {
  launch_convert(out, x, n, stream);
}
void convert_f32_to_f16(__half* out, const float* x, std::size_t n, cudaStream_t stream) {
  launch_convert(out, x, n, stream);
}
void convert_bf16_to_f32(float* out, const __nv_bfloat16* x, std::size_t n, cudaStream_t stream) {
  launch_convert(out, x, n, stream);
}
void convert_f16_to_f32(float* out, const __half* x, std::size_t n, cudaStream_t stream) {
  launch_convert(out, x, n, stream);
}

}  // namespace llmbench::cuda
