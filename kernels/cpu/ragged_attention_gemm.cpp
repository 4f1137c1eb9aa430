// Ragged paged attention, prompt chunks as GEMMs, other rows on the paged decode kernel (see
// ragged_attention_gemm.h). One loop for both pool types: the fp32 pool's rows go to
// paged_attention_decode and kv_gather_paged, the fp16 pool's to their kv_f16.h forms.
#include "kernels/cpu/ragged_attention_gemm.h"

#include <vector>

#include "kernels/cpu/attention_decode.h"
#include "kernels/cpu/attention_gemm.h"
#include "kernels/cpu/kv_f16.h"
#include "kernels/cpu/paged_kv.h"
#include "kernels/cpu/ragged_attention.h"

namespace llmbench::cpu {

namespace {

void decode_rows(float* out, const float* q, const float* k_pool, const float* v_pool,
                 const std::int32_t* table, const PagedKv& paged, const AttentionShape& s,
                 const HeadStrides& q_s, const HeadStrides& out_s) {
  paged_attention_decode(out, q, k_pool, v_pool, table, paged, s, q_s, out_s);
}
void decode_rows(float* out, const float* q, const std::uint16_t* k_pool,
                 const std::uint16_t* v_pool, const std::int32_t* table, const PagedKv& paged,
                 const AttentionShape& s, const HeadStrides& q_s, const HeadStrides& out_s) {
  paged_attention_f16_decode(out, q, k_pool, v_pool, table, paged, s, q_s, out_s);
}
void gather(float* out, const float* pool, const std::int32_t* table, const PagedKv& paged,
            int len, int kv_dim) {
  kv_gather_paged(out, pool, table, paged, 1, len, kv_dim, len);
}
void gather(float* out, const std::uint16_t* pool, const std::int32_t* table,
            const PagedKv& paged, int len, int kv_dim) {
  kv_gather_paged_f16(out, pool, table, paged, len, kv_dim);
}

template <class T>
void ragged_gemm(float* out, int out_stride, const float* q, int q_stride, const T* k_pool,
                 const T* v_pool, const std::int32_t* block_table, const PagedKv& paged,
                 const std::int32_t* seq, const std::int32_t* pos, int n_rows, int n_heads,
                 int n_kv_heads, int head_dim) {
  const int kv_dim = n_kv_heads * head_dim;
  std::vector<float> k_scratch, v_scratch;
  int loop_start = 0;  // first row of the current stretch of reference-loop rows
  // Rows outside GEMM runs (decode rows, short chunks): each is one query at its own position
  // over keys [0, pos] of its sequence, which is the static path's paged decode attention at
  // batch 1 (paged_attention_decode: AVX-512 where the CPU has it, else the reference), one row
  // per OpenMP thread. The plain reference loop (ragged_paged_attention) ran these rows
  // scalar, 5.6x slower than the static path's decode attention at 16 rows on `tiny`.
  auto decode_row = [&](int i) {
    const AttentionShape shape{1, 1, pos[i], n_heads, n_kv_heads, head_dim, 0, 0, 0};
    decode_rows(out + std::int64_t(i) * out_stride, q + std::int64_t(i) * q_stride, k_pool,
                v_pool, block_table + std::int64_t(seq[i]) * paged.max_blocks, paged, shape,
                token_major(1, q_stride, head_dim), token_major(1, out_stride, head_dim));
  };
  // A single row is called outside any parallel construct, so the kernel's own threads start
  // from the pool: inside even an inactive (if-false) region its region is nested, and libgomp
  // starts nested teams' threads anew (measured: a 1-row decode step of `small` bf16 in
  // `serve` took 36 ms instead of 4.6 once the kernel parallelised a single row).
  auto flush_loop = [&](int end) {
    if (end - loop_start == 1) return decode_row(loop_start);
#pragma omp parallel for schedule(static) if (end - loop_start > 1)
    for (int i = loop_start; i < end; ++i) decode_row(i);
  };
  for (int r = 0; r < n_rows;) {
    int end = r + 1;  // the run of sequence seq[r] at consecutive positions: rows [r, end)
    while (end < n_rows && seq[end] == seq[r] && pos[end] == pos[end - 1] + 1) ++end;
    const int n = end - r;
    if (n < kAttentionGemmMinRows) {
      r = end;
      continue;
    }
    flush_loop(r);
    // Keys and values [0, last] of this sequence, contiguous: [len, kv_dim].
    const int len = pos[end - 1] + 1;
    k_scratch.resize(std::size_t(len) * kv_dim);
    v_scratch.resize(std::size_t(len) * kv_dim);
    const std::int32_t* table = block_table + std::int64_t(seq[r]) * paged.max_blocks;
    gather(k_scratch.data(), k_pool, table, paged, len, kv_dim);
    gather(v_scratch.data(), v_pool, table, paged, len, kv_dim);
    const AttentionShape shape{1, n, pos[r], n_heads, n_kv_heads, head_dim, 0, 0, 0};
    const AttentionStrides strides{token_major(n, q_stride, head_dim),
                                   token_major(len, kv_dim, head_dim),
                                   token_major(n, out_stride, head_dim)};
    attention_gemm(out + std::int64_t(r) * out_stride, q + std::int64_t(r) * q_stride,
                   k_scratch.data(), v_scratch.data(), shape, strides);
    r = loop_start = end;
  }
  flush_loop(n_rows);
}

}  // namespace

void ragged_paged_attention_gemm(float* out, int out_stride, const float* q, int q_stride,
                                 const float* k_pool, const float* v_pool,
                                 const std::int32_t* block_table, const PagedKv& paged,
                                 const std::int32_t* seq, const std::int32_t* pos, int n_rows,
                                 int n_heads, int n_kv_heads, int head_dim) {
  ragged_gemm(out, out_stride, q, q_stride, k_pool, v_pool, block_table, paged, seq, pos, n_rows,
              n_heads, n_kv_heads, head_dim);
}

void ragged_paged_attention_gemm_f16(float* out, int out_stride, const float* q, int q_stride,
                                     const std::uint16_t* k_pool, const std::uint16_t* v_pool,
                                     const std::int32_t* block_table, const PagedKv& paged,
                                     const std::int32_t* seq, const std::int32_t* pos,
                                     int n_rows, int n_heads, int n_kv_heads, int head_dim) {
  ragged_gemm(out, out_stride, q, q_stride, k_pool, v_pool, block_table, paged, seq, pos, n_rows,
              n_heads, n_kv_heads, head_dim);
}

}  // namespace llmbench::cpu
