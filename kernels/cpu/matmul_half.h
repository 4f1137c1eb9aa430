// Matrix multiply against reduced-precision weights (bf16 or fp16 bits, nn.Linear layout
// [out_features, in_features]) with fp32 activations in and out: the CPU counterpart of the
// cuBLAS bf16/fp16 GEMM (kernels/cuda/gemm.cuh), and the oracle the CUDA path is tested against.
// Semantics, the same as the engine's CUDA path (convert x to the weight dtype, cublasGemmEx with
// fp32 accumulation):
//   out[m, n] = sum_k round(x[m, k]) * widen(w[n, k]),
// where round() takes fp32 to the weight dtype and back, rounding to nearest even (as cuBLAS's
// input conversion does), widen() is exact, and the sum is accumulated in fp32 (the reference:
// in double).
// Deliberately not: a half-precision accumulator, or a hand-written large GEMM (prefill widens a
// tile of weight rows at a time and hands it to OpenBLAS sgemm).
#pragma once
#include <cstdint>

#include "kernels/common/dtype.h"

namespace llmbench::cpu {

// The spec: plain loops, double accumulation. `dtype` is kBf16 or kFp16 (w holds its bits).
// x: [m, k] with row stride lda (>= k); w: [n, k] contiguous; out: [m, n] contiguous.
void matmul_half_reference(float* out, const float* x, const std::uint16_t* w, DType dtype, int m,
                           int n, int k, int lda);

// What the engine runs. On AVX-512 CPUs (cpu_isa.h): bf16 with AVX512_BF16 and m <=
// kBf16DotRowsMax goes to avx512::matmul_bf16 (vdpbf16ps on x converted to bf16 once per call);
// fp16 with m <= kStreamRowsMax to avx512::matmul_fp16 (vcvtph2ps + fp32 FMA); the rest as
// follows. m <= kFewRowsMax (decode): weight rows are widened four at a time into
// a per-thread tile (bf16 with m <= 2: widened in registers, read in place) and multiplied by
// every x row while in L1 (weights stream once, in 2-byte
// elements; each output is one fixed-order fp32 dot product, so row i does not depend on m).
// Larger m (prefill): kHalfTileRows weight rows at a time are widened and multiplied by
// OpenBLAS sgemm.
void matmul_half(float* out, const float* x, const std::uint16_t* w, DType dtype, int m, int n,
                 int k, int lda);

// Row counts up to which bf16 uses the vdpbf16ps kernel where the CPU has it.
inline constexpr int kBf16DotRowsMax = 1 << 30;

// Weight rows widened per sgemm call in the prefill path (a [kHalfTileRows, k] fp32 tile).
inline constexpr int kHalfTileRows = 256;

// dst[i] = the fp32 value of the dtype bits src[i] (exact), for i in [0, n).
void widen_half(float* dst, const std::uint16_t* src, std::int64_t n, DType dtype);
// dst[i] = src[i] rounded to `dtype` (nearest even) and widened back to fp32.
void round_to_half(float* dst, const float* src, std::int64_t n, DType dtype);
// dst[i] = the `dtype` bits of src[i], rounded to nearest even (weight loading).
void narrow_to_half(std::uint16_t* dst, const float* src, std::int64_t n, DType dtype);

}  // namespace llmbench::cpu
