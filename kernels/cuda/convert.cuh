// fp32 <-> bf16 / fp16 conversion of device arrays: weights are narrowed once at load time and
// activations before a bf16/fp16 GEMM (gemm.cuh). Round to nearest even, like kernels/common/half.h:
// out-of-range values become +-inf, NaN stays NaN (its payload may differ from the host's).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstddef>

namespace llmbench::cuda {

// out[i] = convert(x[i]) for i in [0, n); device pointers, enqueued on `stream`.
void convert_f32_to_bf16(__nv_bfloat16* out, const float* x, std::size_t n, cudaStream_t stream);
void convert_f32_to_f16(__half* out, const float* x, std::size_t n, cudaStream_t stream);
void convert_bf16_to_f32(float* out, const __nv_bfloat16* x, std::size_t n, cudaStream_t stream);
void convert_f16_to_f32(float* out, const __half* x, std::size_t n, cudaStream_t stream);

}  // namespace llmbench::cuda
