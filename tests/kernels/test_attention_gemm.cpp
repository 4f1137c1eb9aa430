// Prefill attention as GEMMs against the reference loop (attention.h, the spec): token-major
// and head-major operands, grouped-query heads, a cached prefix (past_len > 0), padded rows,
// odd lengths; every output element written, rows of a batch independent.
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/attention_gemm.h"
#include "tests/kernels/check.h"

namespace llmbench::cpu {
namespace {

struct GemmCase {
  AttentionShape s;
  AttentionStrides st;
  std::vector<float> q, k, v;
  std::size_t out_size;
};

// Token-major operands with padded rows (q_stride, out_stride wider than the heads).
GemmCase token_major_case(int batch, int n_new, int past_len, int heads, int kv_heads, int d,
                      unsigned seed) {
  GemmCase c;
  c.s = {.batch = batch, .n_new = n_new, .past_len = past_len, .n_heads = heads,
         .n_kv_heads = kv_heads, .head_dim = d, .q_stride = heads * d + 5,
         .out_stride = heads * d + 3, .cache_seq = past_len + n_new + 2};
  c.st = row_major_strides(c.s);
  c.q = test::random_floats(std::size_t(batch) * n_new * c.s.q_stride, seed, -2.0f, 2.0f);
  const std::size_t cache = std::size_t(batch) * c.s.cache_seq * kv_heads * d;
  c.k = test::random_floats(cache, seed + 1, -2.0f, 2.0f);
  c.v = test::random_floats(cache, seed + 2);
  c.out_size = std::size_t(batch) * n_new * c.s.out_stride;
  return c;
}

// Head-major operands, as --qkv permute keeps them.
GemmCase head_major_case(int batch, int n_new, int past_len, int heads, int kv_heads, int d,
                     unsigned seed) {
  GemmCase c;
  const int seq = past_len + n_new;
  c.s = {.batch = batch, .n_new = n_new, .past_len = past_len, .n_heads = heads,
         .n_kv_heads = kv_heads, .head_dim = d, .q_stride = 0, .out_stride = 0, .cache_seq = seq};
  c.st = {head_major(heads, n_new, d), head_major(kv_heads, seq, d), head_major(heads, n_new, d)};
  c.q = test::random_floats(std::size_t(batch) * heads * n_new * d, seed, -2.0f, 2.0f);
  c.k = test::random_floats(std::size_t(batch) * kv_heads * seq * d, seed + 1, -2.0f, 2.0f);
  c.v = test::random_floats(std::size_t(batch) * kv_heads * seq * d, seed + 2);
  c.out_size = std::size_t(batch) * heads * n_new * d;
  return c;
}

void expect_matches_reference(GemmCase c) {
  std::vector<float> ref(c.out_size, -7.0f), got(c.out_size, -7.0f);
  attention_strided(ref.data(), c.q.data(), c.k.data(), c.v.data(), c.s, c.st);
  attention_gemm(got.data(), c.q.data(), c.k.data(), c.v.data(), c.s, c.st);
  // Padding (-7 in both) must stay untouched; values agree to float rounding.
  EXPECT_TRUE(test::all_close(got, ref, 2e-6, 2e-5));
}

TEST(AttentionGemm, MatchesTheReferenceOnTokenMajorRows) {
  expect_matches_reference(token_major_case(1, 16, 0, 4, 4, 64, 1));
  expect_matches_reference(token_major_case(3, 37, 0, 6, 2, 32, 2));    // GQA, odd length
  expect_matches_reference(token_major_case(2, 17, 9, 4, 1, 16, 3));    // cached prefix, MQA
  expect_matches_reference(token_major_case(1, 130, 0, 12, 4, 64, 4));  // the small preset
}

TEST(AttentionGemm, MatchesTheReferenceOnHeadMajorOperands) {
  expect_matches_reference(head_major_case(2, 23, 0, 4, 2, 32, 5));
  expect_matches_reference(head_major_case(1, 16, 5, 8, 8, 16, 6));
}

TEST(AttentionGemm, FutureKeysHaveNoInfluence) {
  // Changing keys and values after a query's position must not change its output.
  GemmCase c = token_major_case(1, 20, 0, 2, 1, 8, 7);
  std::vector<float> a(c.out_size), b(c.out_size);
  attention_gemm(a.data(), c.q.data(), c.k.data(), c.v.data(), c.s, c.st);
  const int kv_dim = c.s.n_kv_heads * c.s.head_dim;
  for (int pos = 10; pos < 20; ++pos)
    for (int i = 0; i < kv_dim; ++i) {
      c.k[std::size_t(pos) * kv_dim + i] += 3.0f;
      c.v[std::size_t(pos) * kv_dim + i] -= 5.0f;
    }
  attention_gemm(b.data(), c.q.data(), c.k.data(), c.v.data(), c.s, c.st);
  for (int t = 0; t < 10; ++t)
    for (int i = 0; i < c.s.n_heads * c.s.head_dim; ++i) {
      const std::size_t at = std::size_t(t) * c.s.out_stride + i;
      ASSERT_EQ(a[at], b[at]) << "query " << t << " saw a future key";
    }
}

TEST(AttentionGemm, IdenticalSequencesGiveIdenticalRows) {
  GemmCase c = token_major_case(3, 18, 0, 4, 2, 16, 8);
  // Make every sequence a copy of the first.
  const std::size_t q_seq = std::size_t(c.s.n_new) * c.s.q_stride;
  const std::size_t kv_seq = std::size_t(c.s.cache_seq) * c.s.n_kv_heads * c.s.head_dim;
  for (int b = 1; b < 3; ++b) {
    std::copy(c.q.begin(), c.q.begin() + q_seq, c.q.begin() + b * q_seq);
    std::copy(c.k.begin(), c.k.begin() + kv_seq, c.k.begin() + b * kv_seq);
    std::copy(c.v.begin(), c.v.begin() + kv_seq, c.v.begin() + b * kv_seq);
  }
  std::vector<float> out(c.out_size);
  attention_gemm(out.data(), c.q.data(), c.k.data(), c.v.data(), c.s, c.st);
  const std::size_t o_seq = std::size_t(c.s.n_new) * c.s.out_stride;
  for (int b = 1; b < 3; ++b)
    EXPECT_TRUE(std::equal(out.begin(), out.begin() + o_seq, out.begin() + b * o_seq));
}

}  // namespace
}  // namespace llmbench::cpu
