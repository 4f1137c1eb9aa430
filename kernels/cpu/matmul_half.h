// Matrix multiply against reduced-precision weights (bf16 or fp16 bits, nn.Linear layout
// [out_features, in_features]) with fp32 activations in and out: the CPU counterpart of the
// cuBLAS bf16/fp16 GEMM (kernels/cuda/gemm.cuh), and the oracle the CUDA path is tested against.
// Semantics, the same as the engine's CUDA path (convert x to the weight dtype, cublasGemmEx with
// fp32 accumulation):
//   out[m, n] = sum_k round(x[m, k]) * widen(w[n, k]),
// where round() takes fp32 to the weight dtype and back, rounding to nearest even (as cuBLAS's
// input conversion does), widen() is exact, and the sum is accumulated in fp32 (the reference:
// in double).
// On AVX-512 CPUs with AVX512_BF16, bf16 products are vdpbf16ps pairs: each bf16 x bf16 product
// is exact in fp32, but the instruction treats bf16 denormals (below 2^-126) as zero and flushes
// denormal sums; the tests hold it to the reference within the fp32-accumulation tolerance.
// Deliberately not: a half-precision accumulator.
#pragma once
#include <cstdint>

#include "kernels/common/dtype.h"

namespace llmbench::cpu {

// The spec: plain loops, double accumulation. `dtype` is kBf16 or kFp16 (w holds its bits).
// x: [m, k] with row stride lda (>= k); w: [n, k] contiguous; out: [m, n] contiguous.
void matmul_half_reference(float* out, const float* x, const std::uint16_t* w, DType dtype, int m,
                           int n, int k, int lda);

// What the engine runs, chosen by measurement (tests/bench/bench_kernels):
// On AVX-512 CPUs (cpu_isa.h), the weight-streaming kernels of matmul_avx512.h, whose outputs do
// not depend on m:
//   bf16 (with AVX512_BF16), every m: vdpbf16ps on x converted to bf16 bits once per call and
//        the weights as stored (decode at the bandwidth limit, prefill at about twice the sgemm
//        rate: bf16_decode / bf16_prefill);
//   fp16, m <= kFp16StreamRowsMax: weights widened in registers (vcvtph2ps), fp32 FMAs with x
//        rounded to fp16 once per call. Larger m: as the portable path (fp16 stays exact in
//        fp32; converting the weights to bf16 would lose 3 mantissa bits).
// CPUs with AVX2, FMA and F16C where the above does not apply (no AVX-512, or bf16 without
// AVX512_BF16), m <= kFewRowsMax: matmul_avx2.h's kernel (weights widened in registers, four
// fp32 accumulators per output, one weight row at a time; row i does not depend on m);
// m > kFewRowsMax (batched decode, prefill; on AVX-512 CPUs up to kFp16StreamRowsMax rows):
// gemm_avx2.h's kernel (6 weight rows widened per k block into L1, outer-product tiles of
// 16 packed x rows by 6 weight rows; row i does not depend on m either).
// The portable path (any other CPU): m <= kFewRowsMax (decode): weight rows widened four at a time
// into a per-thread tile (bf16 with m <= 2: widened in registers, read in place) and multiplied
// by every x row while in L1; each output is one fixed-order fp32 dot product, so row i does
// not depend on m. Larger m (prefill): kHalfTileRows weight rows at a time are widened and
// multiplied by OpenBLAS sgemm.
void matmul_half(float* out, const float* x, const std::uint16_t* w, DType dtype, int m, int n,
                 int k, int lda);

// The portable path's prefill (what matmul_half runs above kFewRowsMax on a CPU without AVX2,
// and past kFp16StreamRowsMax rows on AVX-512 CPUs where vdpbf16ps does not apply): x rounded
// once, then kHalfTileRows weight rows at a time widened to fp32 (in parallel) and multiplied
// by OpenBLAS sgemm. Public so bench_kernels can set it beside the AVX2 kernel on the same CPU.
void matmul_half_tiled_sgemm(float* out, const float* x, const std::uint16_t* w, DType dtype,
                             int m, int n, int k, int lda);

// Row counts up to which fp16 uses the AVX-512 kernel. bench_kernels at 128 rows (k 2048;
// medians of 3, machine shared): fp16_stream 69 / 53 GFLOP/s against widen-then-sgemm
// (fp16_prefill) 39 / 39 at n 2048 / 5632; at 2048 rows the two were within noise of each other
// (so the prompt-128 TTFT case takes the kernel, batched prefill keeps sgemm).
inline constexpr int kFp16StreamRowsMax = 128;

// Weight rows widened per sgemm call in the prefill path (a [kHalfTileRows, k] fp32 tile).
inline constexpr int kHalfTileRows = 256;

// dst[i] = the fp32 value of the dtype bits src[i] (exact), for i in [0, n).
void widen_half(float* dst, const std::uint16_t* src, std::int64_t n, DType dtype);
// dst[i] = src[i] rounded to `dtype` (nearest even) and widened back to fp32.
void round_to_half(float* dst, const float* src, std::int64_t n, DType dtype);
// dst[i] = the `dtype` bits of src[i], rounded to nearest even (weight loading).
void narrow_to_half(std::uint16_t* dst, const float* src, std::int64_t n, DType dtype);

}  // namespace llmbench::cpu
