// AVX2 + FMA + F16C decode kernel for 16-bit weights (matmul_avx2.cpp, compiled with those
// flags and called only when cpu_isa() says the CPU has them and lacks the AVX-512 path).
// Internal to kernels/cpu: the public op is matmul_half(), whose reference is the spec this is
// tested against.
//
// Why it exists: a CPU (or a VM) that exposes AVX2 but not AVX-512 otherwise decoded bf16 and
// fp16 through the compiler-vectorised few-row loops, which widen each weight with several
// instructions (bf16 9 GB/s where fp32's sgemv streamed 25-31 GB/s in the same minutes).
// Here every 16 weights cost one load and two ALU or convert instructions plus two FMAs:
//   bf16: the 32-byte load holds 16 bf16 values; shifting each 32-bit lane left by 16 gives
//         the 8 even-indexed weights as fp32, masking off the low half the 8 odd-indexed ones,
//         so x is prepared once per call in the same split order (per 16 values: the 8 even,
//         then the 8 odd, each rounded to bf16);
//   fp16: two vcvtph2ps of 8 weights each, x rounded to fp16 values once per call.
// Each output keeps two fp32 vector accumulators (even/odd halves, or the two 8-weight halves)
// summed in k order, then added and reduced by one fixed tree: the same operations for every
// tile shape, so row i of an m-row product does not depend on m.
// Deliberately not: prefill shapes (OpenBLAS sgemm on widened tiles stays faster there).
#pragma once
#include <cstdint>

#include "kernels/common/dtype.h"

namespace llmbench::cpu::avx2 {

// out[m, n] = round(x[m, k]) . widen(w[n, k])^T (the matmul_half semantics) for 16-bit weights,
// `dtype` kBf16 or kFp16. x rows lda apart; out [m, n] contiguous. Any m (meant for decode's
// few rows: each weight is read once for every row); threads over column panels.
void matmul_half_rows(float* out, const float* x, int lda, const std::uint16_t* w, DType dtype,
                      int m, int n, int k);

}  // namespace llmbench::cpu::avx2
