// AVX2 + FMA + F16C decode kernels for fp32, bf16 and fp16 weights (matmul_avx2.cpp, compiled
// with those flags and called only when cpu_isa() says the CPU has them and lacks the AVX-512
// path). Internal to kernels/cpu: the public ops are matmul() and matmul_half(), whose
// references are the spec these are tested against.
//
// Why they exist: a CPU (or a VM) that exposes AVX2 but not AVX-512 otherwise decoded fp32
// through OpenBLAS sgemv and bf16/fp16 through compiler-vectorised loops that widen each weight
// with several instructions. Here every 32 weights cost one to four loads, at most four ALU or
// convert instructions and four FMAs:
//   fp32: four 8-float loads;
//   bf16: two 32-byte loads of 16 values; shifting each 32-bit lane left by 16 gives the 8
//         even-indexed weights as fp32, masking off the low half the 8 odd-indexed ones, so x
//         is prepared once per call in the same split order (per 16 values: the 8 even, then
//         the 8 odd, each rounded to bf16);
//   fp16: four vcvtph2ps of 8 weights each, x rounded to fp16 values once per call.
// Each output keeps four fp32 vector accumulators (one per 8-lane slice of each 32-weight step)
// summed in k order, then added pairwise and reduced by one fixed tree: the same operations for
// every tile shape, so row i of an m-row product does not depend on m.
// Deliberately not: more rows (they go to gemm_avx2.h's outer-product tiles; fp32 above 512
// rows to OpenBLAS sgemm).
#pragma once
#include <cstdint>

#include "kernels/common/dtype.h"

namespace llmbench::cpu::avx2 {

// out[m, n] = x[m, k] . w[n, k]^T in fp32 (the matmul semantics, summed in fp32 by the fixed
// order above). x rows lda apart; out [m, n] contiguous. Meant for decode's few rows (each
// weight is read from memory once for every row); threads over contiguous row ranges of w,
// rebalanced at run time (panel_schedule.h) with the same bits on any team.
void matmul_f32_rows(float* out, const float* x, int lda, const float* w, int m, int n, int k);

// out[m, n] = round(x[m, k]) . widen(w[n, k])^T (the matmul_half semantics) for 16-bit weights,
// `dtype` kBf16 or kFp16; otherwise as matmul_f32_rows.
void matmul_half_rows(float* out, const float* x, int lda, const std::uint16_t* w, DType dtype,
                      int m, int n, int k);

}  // namespace llmbench::cpu::avx2
