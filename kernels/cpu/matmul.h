// Matrix multiply against a weight matrix stored as [out_features, in_features] (the
// PyTorch/Hugging Face nn.Linear layout): out[m, n] = sum_k x[m, k] * w[n, k].
// matmul_reference is the spec: plain loops, double accumulation, slow on purpose.
// matmul is the version the engine uses, chosen by measurement (tests/bench/bench_kernels):
//   m <= kFewRowsMax       decode: the path decode_dispatch.h picks (a table measured on this
//                          CPU, else the widest): avx512::matmul_f32 (below), avx2::
//                          matmul_f32_rows, one sequential weight stream per thread
//                          (matmul_avx2.h), or the portable sgemv / matmul_few_rows (below)
//   m <= kStreamRowsMax    on AVX-512 CPUs (cpu_isa.h): avx512::matmul_f32, the register-
//                          blocked weight-streaming kernel (matmul_avx512.h)
//   kFewRowsMax < m <= kAvx2GemmRowsMax  on AVX2 + FMA CPUs without AVX-512: avx2::gemm_f32,
//                          outer-product tiles (gemm_avx2.h; row i does not depend on m)
//   otherwise, and on other CPUs:
//   m == 1                 OpenBLAS sgemv (streams the weights at about memory bandwidth)
//   1 < m <= kFewRowsMax   matmul_few_rows (OpenBLAS sgemm streams weights at only a few GB/s
//                          with so few rows)
//   otherwise              OpenBLAS sgemm (prefill)
#pragma once

namespace llmbench::cpu {

// x: [m, k] with row stride lda (>= k); w: [n, k] contiguous; out: [m, n] contiguous.
void matmul_reference(float* out, const float* x, const float* w, int m, int n, int k, int lda);
void matmul(float* out, const float* x, const float* w, int m, int n, int k, int lda);

// Row counts from 2 up to which matmul uses matmul_few_rows (the portable path).
inline constexpr int kFewRowsMax = 8;

// Row counts up to which matmul uses the AVX-512 weight-streaming kernel, where the CPU has it.
// bench_kernels stream_crossover vs sgemm_crossover (n 5632, k 2048; medians of 3, one run,
// machine shared, load ~10): 35 vs 22 GFLOP/s at 32 rows, 49 vs 27 at 64, 55 vs 42 at 128,
// 49 vs 45 at 256 (at 128 rows with n 2048 sgemm won, 46 vs 33). The engine decided 128: TTFT
// of tinyllama-1.1b at 1 x 128 in fp32, alternating builds, 4627 and 4080 ms with the kernel
// up to 128 rows against 6150 and 7643 ms with sgemm from 65 rows. At 2048 rows sgemm is
// ahead (58 vs 52 GFLOP/s), so batched prefill stays on OpenBLAS.
inline constexpr int kStreamRowsMax = 128;

// Row counts up to which matmul uses the AVX2 outer-product GEMM (gemm_avx2.h) on a CPU with
// AVX2 but not AVX-512; sgemm above. bench_kernels gemm_f32_avx2_gemm against gemm_f32_sgemm
// (TinyLlama's four projections, medians of 3, interleaved, 2026-11-26): at 16 rows the kernel
// was level with sgemm or up to 1.5x faster, at 128 and 512 within 15% either way, mostly ahead;
// at 2048 sgemm led (gate/up 666 against 853 ms, o 110 against 122).
inline constexpr int kAvx2GemmRowsMax = 512;

// Reads each weight row once and multiplies it by all m rows of x while it is in L1: the
// weights stream from memory once per call, whatever m is. Each output element is one dot
// product in a fixed order, so row i of the result does not depend on m (batch-invariant).
void matmul_few_rows(float* out, const float* x, const float* w, int m, int n, int k, int lda);

// The fp32 four-weight-row dot block both matmul_few_rows (its odd last row) and matmul_half
// (its widened weight tiles) run: out[i, j..j+3] = x_i . w_{0..3} for i in [i_begin, m), x's
// rows x_stride apart, the four weight rows contiguous and k apart from `w`, out's rows n apart.
// Each output is one fp32 sum in a fixed order (four independent accumulators, vectorised over p).
void dot_rows_block4(float* out, int n, int j, const float* x, int x_stride, const float* w,
                     int k, int i_begin, int m);

}  // namespace llmbench::cpu
