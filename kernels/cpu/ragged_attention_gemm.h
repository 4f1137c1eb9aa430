// Ragged paged attention with prompt chunks as GEMMs: the CPU backend's fast path for
// ragged_paged_attention (ragged_attention.h is the spec). A step's rows are split into runs:
// maximal stretches of consecutive rows of one sequence at consecutive positions (a prompt or a
// prompt chunk). A run of at least kAttentionGemmMinRows rows gathers its sequence's keys and
// values [0, last position] into a contiguous scratch cache (kv_gather_paged) and runs
// attention_gemm over it, as the static path does for a prompt; every other row (decode rows,
// short chunks) runs as one batch-1 query on paged_attention_decode (the static paged
// cache's decode kernel; AVX-512 where available), rows in parallel. Same result as the
// reference up to float rounding (the GEMM sums in sgemm's order, the AVX-512 kernel in its).
#pragma once
#include <cstdint>

#include "kernels/common/layout.h"

namespace llmbench::cpu {

void ragged_paged_attention_gemm(float* out, int out_stride, const float* q, int q_stride,
                                 const float* k_pool, const float* v_pool,
                                 const std::int32_t* block_table, const PagedKv& paged,
                                 const std::int32_t* seq, const std::int32_t* pos, int n_rows,
                                 int n_heads, int n_kv_heads, int head_dim);

// The same over an fp16 pool (kv_f16.h): decode rows on paged_attention_f16_decode, runs
// gathered and widened (kv_gather_paged_f16) for the GEMMs. Equal bit for bit to
// ragged_paged_attention_gemm over the widened pool.
void ragged_paged_attention_gemm_f16(float* out, int out_stride, const float* q, int q_stride,
                                     const std::uint16_t* k_pool, const std::uint16_t* v_pool,
                                     const std::int32_t* block_table, const PagedKv& paged,
                                     const std::int32_t* seq, const std::int32_t* pos,
                                     int n_rows, int n_heads, int n_kv_heads, int head_dim);

}  // namespace llmbench::cpu
