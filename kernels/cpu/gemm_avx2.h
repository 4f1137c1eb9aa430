// AVX2 + FMA + F16C GEMM for bf16, fp16 and fp32 weights at more rows than decode's few
// (prefill, batched decode): gemm_avx2.cpp, compiled with those flags and called by
// matmul_half() and matmul() only when cpu_isa() says the CPU has them and the AVX-512 paths do
// not apply. Internal to kernels/cpu: the public ops are matmul_half() and matmul(), whose
// references are the specs this is tested against.
//
// Why it exists: without it, a CPU (or a VM) with AVX2 but no AVX-512 ran the 16-bit shapes by
// widening 256 weight rows at a time to fp32 (a 2 MB tile at k = 2048, beyond the L2) in one
// OpenMP region, then OpenBLAS sgemm on it (which packs it again), tile after tile, two
// fork/joins each, and fp32 on OpenBLAS sgemm. Here one parallel region per call; each thread
// owns a contiguous slice of weight rows and widens (fp32: copies) 6 of them at a time, one
// 512-value k block at a time, into a 12 KB buffer that stays in L1 while every 16-row tile of
// x (packed k-major) passes over it in outer-product form (12 accumulators of 8 x rows by 1
// weight row). One template over the weight type computes all three.
// Deliberately not: the few-row decode shapes (matmul_avx2.h streams the weights faster there).
#pragma once
#include <cstdint>

#include "kernels/common/dtype.h"

namespace llmbench::cpu::avx2 {

// k values per cache block. The blocks do not change the sum: every output is one fp32 FMA
// chain over k in order (carried from block to block), so the result of row i does not depend
// on m, on the block size or on which tile shape computed it.
inline constexpr int kGemmBlockK = 512;

// out[m, n] = round(x[m, k]) . widen(w[n, k])^T (the matmul_half semantics), `dtype` kBf16 or
// kFp16. x rows lda apart (lda >= k; what lies past k is never read); out [m, n] contiguous.
// Any m >= 1 works; it is meant for m above kFewRowsMax. More than 256 rows are done in
// passes of 256 (each reads the weights again; the x block of a pass stays in L2).
void gemm_half(float* out, const float* x, int lda, const std::uint16_t* w, DType dtype, int m,
               int n, int k);

// out[m, n] = x[m, k] . w[n, k]^T (the matmul semantics) for fp32 weights, in the same tiles and
// the same per-output FMA chain over k: row i of the result does not depend on m.
void gemm_f32(float* out, const float* x, int lda, const float* w, int m, int n, int k);

}  // namespace llmbench::cpu::avx2
