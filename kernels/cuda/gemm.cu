// cuBLAS GEMMs in the nn.Linear layout. cuBLAS is column-major; a row-major [r, c] matrix is the
// same memory as a column-major [c, r] one. So the row-major out[m, n] = x w^T is computed as the
// column-major out^T[n, m] = w x^T: A = w seen as column-major [k, n] (ld k) used transposed,
// B = x seen as column-major [k, m] (ld lda) used as is, C = out^T with ld n.
// One cublasGemmEx call serves all three input types; compute type CUBLAS_COMPUTE_32F always
// (fp32 accumulation; for bf16/fp16 inputs cuBLAS picks tensor-core kernels, for fp32 inputs the
// default math mode keeps it on true fp32 kernels).
// Deliberately not: algorithm selection by timing, or cuBLASLt (one heuristic call per shape
// would be the next step if the default heuristics fall short of the measured peak).
#include "kernels/cuda/gemm.cuh"

#include <cstddef>
#include <utility>

#include "kernels/cuda/cuda_check.h"

namespace llmbench::cuda {

CublasHandle::CublasHandle() {
  LLMBENCH_CUBLAS_CHECK(cublasCreate(&handle_));
  // Explicit, so that nothing set elsewhere (or a future default) turns TF32 on for gemm_f32.
  LLMBENCH_CUBLAS_CHECK(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH));
  LLMBENCH_CUBLAS_CHECK(cublasSetPointerMode(handle_, CUBLAS_POINTER_MODE_HOST));
}

CublasHandle::~CublasHandle() {
  if (handle_ != nullptr) LLMBENCH_CUBLAS_CHECK_NOTHROW(cublasDestroy(handle_));
}

CublasHandle::CublasHandle(CublasHandle&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)) {}

CublasHandle& CublasHandle::operator=(CublasHandle&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) LLMBENCH_CUBLAS_CHECK_NOTHROW(cublasDestroy(handle_));
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

void CublasHandle::set_stream(cudaStream_t stream) {
  LLMBENCH_CUBLAS_CHECK(cublasSetStream(handle_, stream));
}

namespace {

void gemm_ex(cublasHandle_t handle, float* out, const void* x, const void* w,
             cudaDataType_t input_type, int m, int n, int k, int lda) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    // The empty sum. cuBLAS rejects a leading dimension of 0, so do not call it.
    cudaStream_t stream = nullptr;
    LLMBENCH_CUBLAS_CHECK(cublasGetStream(handle, &stream));
    LLMBENCH_CUDA_CHECK(
        cudaMemsetAsync(out, 0, sizeof(float) * static_cast<std::size_t>(m) * n, stream));
    return;
  }
  const float alpha = 1.0f, beta = 0.0f;
  LLMBENCH_CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &alpha, w,
                                     input_type, k, x, input_type, lda, &beta, out, CUDA_R_32F,
                                     n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

}  // namespace

void gemm_f32(cublasHandle_t handle, float* out, const float* x, const float* w, int m, int n,
              int k, int lda) {
  gemm_ex(handle, out, x, w, CUDA_R_32F, m, n, k, lda);
}

void gemm_bf16(cublasHandle_t handle, float* out, const __nv_bfloat16* x, const __nv_bfloat16* w,
               int m, int n, int k, int lda) {
  gemm_ex(handle, out, x, w, CUDA_R_16BF, m, n, k, lda);
}

void gemm_f16(cublasHandle_t handle, float* out, const __half* x, const __half* w, int m, int n,
              int k, int lda) {
  gemm_ex(handle, out, x, w, CUDA_R_16F, m, n, k, lda);
}

}  // namespace llmbench::cuda
