// Decode GEMMs against 16-bit weights (m <= kGemvRowsMax rows of activations): the weight-
// streaming counterpart of gemm_bf16 / gemm_f16 (gemm.cuh), with the same semantics:
//   out[r, j] = sum_k x[r, k] * w[j, k], x already in the weight dtype, fp32 accumulation.
// One warp per weight row: each lane reads 16 bytes (8 weights) at a time, four loads in flight,
// and multiplies them by every activation row (x stays in L1/L2: it is 8 KB per row at k 4096),
// then a warp shuffle sum. Every weight is read once whatever m is.
// Why: cuBLAS at m = 1 streamed llama2-7b's fp16 weights at 2.2-2.4 TB/s (75-80% of the
// H100's copy bandwidth, docs/gpu-validation.md); a decode step is those weights, read once.
// The _rounding_x forms take x in fp32 and round it to the weight dtype in the kernel (nearest
// even, as convert_f32_to_* does), so they give the bits of convert + gemv without the conversion
// kernel and its buffer: one launch fewer per decode GEMM. x then crosses L1 as fp32 (twice the
// bytes) with 16 more conversions per 8 weights and row, which is why the CUDA backend takes them
// only up to kGemvRoundsXRowsMax rows.
// Deliberately not: tensor cores (at m <= 4 the work is the bytes), split-k (the rows alone fill
// the GPU for every Llama projection).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

namespace llmbench::cuda {

// Most activation rows the kernel takes; more rows go to cuBLAS.
inline constexpr int kGemvRowsMax = 4;

// Most activation rows for which the CUDA backend lets the kernel round x itself (the L1 and
// conversion cost above grows with the rows; the convert + gemv pair takes 3 and 4).
inline constexpr int kGemvRoundsXRowsMax = 2;

// Whether gemv_* takes this shape: 1 <= m <= kGemvRowsMax, k and lda multiples of 8 (16-byte
// rows; x, w and out must come from allocations aligned to 16 bytes, as cudaMalloc's are).
bool gemv_half_supported(int m, int k, int lda);

// x: [m, k] with row stride lda, in the weight dtype; w: [n, k] contiguous; out: [m, n] fp32.
// Device pointers; the caller checks gemv_half_supported first (throws llmbench::Error if not).
void gemv_bf16(float* out, const __nv_bfloat16* x, const __nv_bfloat16* w, int m, int n, int k,
               int lda, cudaStream_t stream);
void gemv_f16(float* out, const __half* x, const __half* w, int m, int n, int k, int lda,
              cudaStream_t stream);
// As gemv_bf16 / gemv_f16 with x [m, k] (row stride lda) in fp32, 16-byte aligned, rounded to the
// weight dtype in the kernel: the same bits as converting x first. The same shapes
// (gemv_half_supported).
void gemv_bf16_rounding_x(float* out, const float* x, const __nv_bfloat16* w, int m, int n, int k,
                          int lda, cudaStream_t stream);
void gemv_f16_rounding_x(float* out, const float* x, const __half* w, int m, int n, int k,
                         int lda, cudaStream_t stream);

}  // namespace llmbench::cuda
