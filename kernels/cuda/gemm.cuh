// GEMMs through cuBLAS against nn.Linear weights: out[m, n] = x[m, k] . w[n, k]^T, the GPU
// counterpart of kernels/cpu/matmul.h (matmul_reference is the spec). fp32, and bf16/fp16 inputs
// on tensor cores; every variant accumulates in fp32 and writes fp32.
// Deliberately not: cuBLASLt epilogues (bias, activation) or a hand-written GEMM.
#pragma once

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

namespace llmbench::cuda {

// One cuBLAS handle, move-only. Created in host pointer mode and CUBLAS_DEFAULT_MATH, which with
// the fp32 compute type below means true fp32 GEMMs: no TF32 (that needs
// CUBLAS_TF32_TENSOR_OP_MATH or CUBLAS_COMPUTE_32F_FAST_TF32) and no fp32 emulation.
// cuBLAS manages its own default workspace.
class CublasHandle {
 public:
  CublasHandle();  // throws llmbench::Error if cuBLAS cannot be initialised (e.g. no device)
  ~CublasHandle();
  CublasHandle(CublasHandle&& other) noexcept;
  CublasHandle& operator=(CublasHandle&& other) noexcept;
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;

  cublasHandle_t get() const { return handle_; }
  // Every later call through this handle is enqueued on `stream`.
  void set_stream(cudaStream_t stream);

 private:
  cublasHandle_t handle_ = nullptr;
};

// out[m, n] = x[m, k] . w[n, k]^T on the handle's stream. x: [m, k] with row stride lda >= k;
// w: [n, k] contiguous (row-major, nn.Linear layout); out: [m, n] contiguous fp32. Device
// pointers; the handle must be in host pointer mode (as CublasHandle creates it). k == 0 gives
// zeros, as on the CPU.
// gemm_f32: fp32 inputs, CUBLAS_COMPUTE_32F without TF32: matches matmul_reference to fp32
// rounding.
void gemm_f32(cublasHandle_t handle, float* out, const float* x, const float* w, int m, int n,
              int k, int lda);
// bf16 / fp16 inputs (weights and activations), fp32 accumulation (CUBLAS_COMPUTE_32F) on tensor
// cores, fp32 output.
void gemm_bf16(cublasHandle_t handle, float* out, const __nv_bfloat16* x, const __nv_bfloat16* w,
               int m, int n, int k, int lda);
void gemm_f16(cublasHandle_t handle, float* out, const __half* x, const __half* w, int m, int n,
              int k, int lda);

}  // namespace llmbench::cuda
