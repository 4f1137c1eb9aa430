// Paged KV cache scatter and gather: the plain CPU references. One memcpy per (sequence,
// position[, head]); the block table is followed for every position, never assumed contiguous.
// Deliberately not: bounds-checked (the engine sizes the pool and fills the table).
#include "kernels/cpu/paged_kv.h"

#include <cstddef>
#include <cstring>

namespace llmbench::cpu {

void kv_write_paged(float* pool, const std::int32_t* block_table, const PagedKv& paged,
                    const float* src, const HeadStrides& src_strides, int batch, int n_new,
                    int past_len, int n_kv_heads, int head_dim) {
  const int kv_dim = n_kv_heads * head_dim;
  const std::size_t bytes = static_cast<std::size_t>(head_dim) * sizeof(float);
#pragma omp parallel for collapse(2) if (static_cast<long>(batch) * n_new * kv_dim > (1 << 16))
  for (int b = 0; b < batch; ++b) {
    for (int t = 0; t < n_new; ++t) {
      float* row = pool + paged_row(block_table, paged, b, past_len + t, kv_dim);
      for (int h = 0; h < n_kv_heads; ++h) {
        std::memcpy(row + std::int64_t(h) * head_dim,
                    src + b * src_strides.batch + t * src_strides.seq + h * src_strides.head,
                    bytes);
      }
    }
  }
}

void kv_gather_paged(float* out, const float* pool, const std::int32_t* block_table,
                     const PagedKv& paged, int batch, int len, int kv_dim, int out_seq) {
  const std::size_t bytes = static_cast<std::size_t>(kv_dim) * sizeof(float);
#pragma omp parallel for collapse(2) if (static_cast<long>(batch) * len * kv_dim > (1 << 16))
  for (int b = 0; b < batch; ++b) {
    for (int pos = 0; pos < len; ++pos) {
      std::memcpy(out + (std::int64_t(b) * out_seq + pos) * kv_dim,
                  pool + paged_row(block_table, paged, b, pos, kv_dim), bytes);
    }
  }
}

}  // namespace llmbench::cpu
