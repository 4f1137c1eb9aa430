// Ragged paged KV write and attention: the plain CPU references. The attention is
// attention_core.h with one "sequence" per row (n_new = 1), each row's keys found through its
// sequence's block-table row and counted from its own position.
#include "kernels/cpu/ragged_attention.h"

#include <algorithm>
#include <cstring>

#include "kernels/cpu/attention_core.h"

namespace llmbench::cpu {

void kv_write_ragged(float* pool, const std::int32_t* block_table, const PagedKv& paged,
                     const float* src, int src_stride, const std::int32_t* seq,
                     const std::int32_t* pos, int n_rows, int kv_dim) {
  const std::size_t bytes = static_cast<std::size_t>(kv_dim) * sizeof(float);
#pragma omp parallel for if (static_cast<long>(n_rows) * kv_dim > (1 << 16))
  for (int r = 0; r < n_rows; ++r)
    std::memcpy(pool + paged_row(block_table, paged, seq[r], pos[r], kv_dim),
                src + std::int64_t(r) * src_stride, bytes);
}

void ragged_paged_attention(float* out, int out_stride, const float* q, int q_stride,
                            const float* k_pool, const float* v_pool,
                            const std::int32_t* block_table, const PagedKv& paged,
                            const std::int32_t* seq, const std::int32_t* pos, int n_rows,
                            int n_heads, int n_kv_heads, int head_dim) {
  if (n_rows <= 0) return;
  const int d = head_dim, kv_dim = n_kv_heads * head_dim;
  int max_keys = 0;
  for (int r = 0; r < n_rows; ++r) max_keys = std::max(max_keys, pos[r] + 1);
  // Row r is "sequence" r of a shape with one new token each; q/out rows are its batch stride.
  const AttentionShape shape{n_rows, 1, 0, n_heads, n_kv_heads, head_dim, 0, 0, 0};
  const HeadStrides q_s{q_stride, 0, head_dim}, out_s{out_stride, 0, head_dim};
  detail::attention_core(
      out, out_s, q, q_s, k_pool, v_pool, shape,
      [=](int r, int kv_head, int j) {
        return paged_row(block_table, paged, seq[r], j, kv_dim) + std::int64_t(kv_head) * d;
      },
      [=](int r, int) { return pos[r] + 1; }, max_keys);
}

}  // namespace llmbench::cpu
