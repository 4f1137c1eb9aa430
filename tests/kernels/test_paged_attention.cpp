// Attention over other layouts: head-major operands (attention_strided) and a paged cache read
// through its block table (paged_attention) give exactly, bit for bit, what attention() gives
// on the same values in its row-major layout (they share one loop nest and summation order).
#include <gtest/gtest.h>

#include <vector>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/copy_heads.h"
#include "kernels/cpu/kv_cache.h"
#include "kernels/cpu/paged_attention.h"
#include "kernels/cpu/paged_kv.h"
#include "tests/kernels/check.h"

namespace llmbench::cpu {
namespace {

struct PagedCase {
  AttentionShape s;
  std::vector<float> q, k, v;  // row-major: q [B*T, H*D]; k, v [B, cache_seq, G*D]
};

PagedCase make_case(int batch, int n_new, int past, int heads, int kv_heads, int head_dim,
               unsigned seed) {
  PagedCase c;
  const int q_dim = heads * head_dim, kv_dim = kv_heads * head_dim;
  c.s = {batch, n_new, past, heads, kv_heads, head_dim, q_dim, q_dim, past + n_new};
  c.q = test::random_floats(std::size_t(batch) * n_new * q_dim, seed);
  c.k = test::random_floats(std::size_t(batch) * c.s.cache_seq * kv_dim, seed + 1);
  c.v = test::random_floats(std::size_t(batch) * c.s.cache_seq * kv_dim, seed + 2);
  return c;
}

std::vector<float> row_major_attention(const PagedCase& c) {
  std::vector<float> out(c.q.size(), -7.0f);
  attention(out.data(), c.q.data(), c.k.data(), c.v.data(), c.s);
  return out;
}

TEST(AttentionStrided, HeadMajorOperandsGiveTheSameBits) {
  for (const PagedCase& c : {make_case(2, 7, 5, 4, 2, 16, 60), make_case(3, 1, 40, 8, 2, 64, 61)}) {
    const AttentionShape& s = c.s;
    const int B = s.batch, T = s.n_new, L = s.cache_seq, H = s.n_heads, G = s.n_kv_heads;
    const int D = s.head_dim;
    // The same values, permuted to head-major.
    std::vector<float> q(c.q.size()), k(c.k.size()), v(c.v.size());
    copy_heads(q.data(), head_major(H, T, D), c.q.data(), token_major(T, H * D, D), B, T, H, D);
    copy_heads(k.data(), head_major(G, L, D), c.k.data(), token_major(L, G * D, D), B, L, G, D);
    copy_heads(v.data(), head_major(G, L, D), c.v.data(), token_major(L, G * D, D), B, L, G, D);
    std::vector<float> out_hm(c.q.size(), -7.0f);
    attention_strided(out_hm.data(), q.data(), k.data(), v.data(), s,
                      {head_major(H, T, D), head_major(G, L, D), head_major(H, T, D)});
    std::vector<float> out(c.q.size());
    copy_heads(out.data(), token_major(T, H * D, D), out_hm.data(), head_major(H, T, D), B, T, H,
               D);
    EXPECT_EQ(out, row_major_attention(c));
  }
}

TEST(PagedAttention, ReadsThroughTheTableAndGivesTheSameBits) {
  // Block size 5 divides neither 12 (prefill) nor 13: the last block is partly filled.
  for (const int past : {0, 12}) {
    const PagedCase c = make_case(3, past == 0 ? 12 : 1, past, 4, 2, 16, 70 + past);
    const AttentionShape& s = c.s;
    const int B = s.batch, L = s.cache_seq, KV = s.n_kv_heads * s.head_dim, bs = 5;
    const PagedKv paged{bs, (L + bs - 1) / bs};
    // Blocks in descending order, interleaved across sequences.
    std::vector<std::int32_t> table(std::size_t(B) * paged.max_blocks);
    int next = B * paged.max_blocks - 1;
    for (int kb = 0; kb < paged.max_blocks; ++kb)
      for (int b = 0; b < B; ++b) table[std::size_t(b) * paged.max_blocks + kb] = next--;
    std::vector<float> k_pool(std::size_t(B) * paged.max_blocks * bs * KV, NAN);
    std::vector<float> v_pool(k_pool.size(), NAN);  // unwritten slots must never be read
    kv_write_paged(k_pool.data(), table.data(), paged, c.k.data(), token_major(L, KV, s.head_dim),
                   B, L, 0, s.n_kv_heads, s.head_dim);
    kv_write_paged(v_pool.data(), table.data(), paged, c.v.data(), token_major(L, KV, s.head_dim),
                   B, L, 0, s.n_kv_heads, s.head_dim);
    std::vector<float> out(c.q.size(), -7.0f);
    const HeadStrides rows = token_major(s.n_new, s.q_stride, s.head_dim);
    paged_attention(out.data(), c.q.data(), k_pool.data(), v_pool.data(), table.data(), paged, s,
                    rows, rows);
    EXPECT_EQ(out, row_major_attention(c)) << "past " << past;
  }
}

}  // namespace
}  // namespace llmbench::cpu
