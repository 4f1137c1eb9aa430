// Paged attention: the plain CPU reference. The loop nest is attention_core.h; each key's
// place comes from the block table (one table lookup per key and query, looked up once before
// the score loop).
#include "kernels/cpu/paged_attention.h"

#include "kernels/cpu/attention_core.h"

namespace llmbench::cpu {

void paged_attention(float* out, const float* q, const float* k_pool, const float* v_pool,
                     const std::int32_t* block_table, const PagedKv& paged,
                     const AttentionShape& s, const HeadStrides& q_strides,
                     const HeadStrides& out_strides) {
  const int d = s.head_dim, kv_dim = s.n_kv_heads * s.head_dim;
  detail::attention_core(out, out_strides, q, q_strides, k_pool, v_pool, s,
                         [=](int b, int kv_head, int j) {
                           return paged_row(block_table, paged, b, j, kv_dim) +
                                  std::int64_t(kv_head) * d;
                         });
}

}  // namespace llmbench::cpu
