// Causal grouped-query attention for prefill as two GEMMs per (sequence, head):
//   S = scale * Q K^T  (n_new x n_keys, OpenBLAS sgemm), causal mask and row softmax in place,
//   O = P V            (n_new x head_dim, sgemm).
// Same result as attention_strided (attention.h, the spec) up to float rounding: the sums run
// in sgemm's order instead of the reference's. The reference loop reaches about a tenth of the
// sgemm rate at long prompts (18 against 180 GFLOP/s at prompt 1024 on the 2-vCPU machine), so
// the CPU backend uses this for prompts of at least kAttentionGemmMinRows new tokens; decode
// (one new token) stays on the reference loop, which has no GEMM shape to exploit.
// The upper triangle of S (future keys) is computed and discarded: half the FLOPs of the first
// GEMM are wasted, and it is still several times faster.
#pragma once

#include "kernels/cpu/attention.h"

namespace llmbench::cpu {

inline constexpr int kAttentionGemmMinRows = 16;

// Operands placed by `strides` as for attention_strided; head_dim values contiguous.
void attention_gemm(float* out, const float* q, const float* k_cache, const float* v_cache,
                    const AttentionShape& s, const AttentionStrides& strides);

}  // namespace llmbench::cpu
