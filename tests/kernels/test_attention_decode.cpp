// attention_decode and paged_attention_decode (the vectorised decode attention) against the
// reference loop: decode and a few new tokens after a past, model-like and odd head sizes
// (masked vector tails), grouped and plain multi-head; paged equals strided bit for bit on the
// same data; the result does not depend on the thread count. Runs on whichever path cpu_isa()
// picks (the ctest "portable." copy forces the reference path); test_avx512_emulated compiles
// this file again and runs it on the SIMDe copy of the AVX-512 kernels (avx512_under_test.h).
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/attention_decode.h"
#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/paged_attention.h"
#include "kernels/cpu/paged_kv.h"
#include "tests/kernels/avx512_under_test.h"
#include "tests/kernels/check.h"

namespace llmbench::cpu {
namespace {

#if defined(LLMBENCH_AVX512_EMULATED)
// The emulated AVX-512 kernels, called directly, in place of the public ops.
using LLMBENCH_AVX512_NS::attention_decode;
using LLMBENCH_AVX512_NS::paged_attention_decode;
#endif

struct Case {
  AttentionShape s;
  std::vector<float> q, k, v;
};

Case make_case(int batch, int n_new, int past, int heads, int kv_heads, int d, unsigned seed) {
  Case c;
  c.s = {.batch = batch, .n_new = n_new, .past_len = past, .n_heads = heads,
         .n_kv_heads = kv_heads, .head_dim = d, .q_stride = heads * d, .out_stride = heads * d,
         .cache_seq = past + n_new + 3};  // unused positions at the end
  c.q = test::random_floats(std::size_t(batch) * n_new * heads * d, seed);
  // Keys scaled up so that the softmax is far from uniform.
  c.k = test::random_floats(std::size_t(batch) * c.s.cache_seq * kv_heads * d, seed + 1, -3, 3);
  c.v = test::random_floats(c.k.size(), seed + 2);
  return c;
}

TEST(AttentionDecode, MatchesTheReferenceLoop) {
  struct Shape { int batch, n_new, past, heads, kv_heads, d; };
  for (const Shape& sh : {Shape{1, 1, 143, 32, 4, 64}, Shape{3, 1, 133, 8, 2, 64},
                          Shape{2, 3, 17, 4, 2, 16}, Shape{1, 1, 0, 4, 4, 19},
                          Shape{2, 7, 5, 6, 3, 80}, Shape{1, 1, 733, 2, 1, 128},
                          Shape{4, 1, 18, 3, 1, 7}, Shape{1, 2, 40, 2, 2, 256}}) {
    SCOPED_TRACE(testing::Message() << "batch " << sh.batch << " new " << sh.n_new << " past "
                                    << sh.past << " heads " << sh.heads << "/" << sh.kv_heads
                                    << " d " << sh.d);
    const Case c = make_case(sh.batch, sh.n_new, sh.past, sh.heads, sh.kv_heads, sh.d, 40);
    const AttentionStrides st = row_major_strides(c.s);
    std::vector<float> out(c.q.size(), NAN), ref(c.q.size(), NAN);
    attention_strided(ref.data(), c.q.data(), c.k.data(), c.v.data(), c.s, st);
    attention_decode(out.data(), c.q.data(), c.k.data(), c.v.data(), c.s, st);
    EXPECT_TRUE(test::all_close(out, ref, 1e-6, 1e-5));
  }
}

TEST(AttentionDecode, Avx2KernelMatchesTheReferenceLoop) {
  // The AVX2 kernel called directly (the dispatch takes it on AVX2 CPUs without the AVX-512
  // path): every head size it serves, key counts around its 4-key and 8-lane blocks (1 to 9
  // keys and long), grouped and plain multi-head, a few new tokens after a past.
  if (!cpu_isa().avx2) GTEST_SKIP() << "no AVX2 + FMA (" << cpu_isa_name() << ")";
  EXPECT_FALSE(avx2::attention_decode_fits(80));
  EXPECT_FALSE(avx2::attention_decode_fits(256));
  unsigned seed = 70;
  for (int d : {8, 16, 32, 64, 128})
    for (int past : {0, 1, 3, 4, 7, 8, 33, 140})
      for (int kv_heads : {1, 4}) {
        const int batch = 2, n_new = past % 2 + 1, heads = 8;
        SCOPED_TRACE(testing::Message() << "d " << d << " past " << past << " kv " << kv_heads);
        ASSERT_TRUE(avx2::attention_decode_fits(d));
        const Case c = make_case(batch, n_new, past, heads, kv_heads, d, seed++);
        const AttentionStrides st = row_major_strides(c.s);
        std::vector<float> out(c.q.size(), NAN), ref(c.q.size(), NAN);
        attention_strided(ref.data(), c.q.data(), c.k.data(), c.v.data(), c.s, st);
        avx2::attention_decode(out.data(), st.out, c.q.data(), st.q, c.k.data(), c.v.data(), c.s,
                               avx2::KvRows{st.kv});
        EXPECT_TRUE(test::all_close(out, ref, 1e-6, 1e-5));
      }
}

TEST(AttentionDecode, PagedGivesTheSameBitsAsStrided) {
  const Case c = make_case(3, 1, 37, 8, 2, 64, 50);
  const AttentionShape& s = c.s;
  const int B = s.batch, L = s.cache_seq, KV = s.n_kv_heads * s.head_dim, bs = 16;
  const PagedKv paged{bs, (L + bs - 1) / bs};
  std::vector<std::int32_t> table(std::size_t(B) * paged.max_blocks);
  int next = B * paged.max_blocks - 1;  // blocks in descending order, interleaved
  for (int kb = 0; kb < paged.max_blocks; ++kb)
    for (int b = 0; b < B; ++b) table[std::size_t(b) * paged.max_blocks + kb] = next--;
  std::vector<float> k_pool(std::size_t(B) * paged.max_blocks * bs * KV, NAN);
  std::vector<float> v_pool(k_pool.size(), NAN);
  kv_write_paged(k_pool.data(), table.data(), paged, c.k.data(), token_major(L, KV, s.head_dim), B,
                 L, 0, s.n_kv_heads, s.head_dim);
  kv_write_paged(v_pool.data(), table.data(), paged, c.v.data(), token_major(L, KV, s.head_dim), B,
                 L, 0, s.n_kv_heads, s.head_dim);
  std::vector<float> strided(c.q.size()), paged_out(c.q.size());
  attention_decode(strided.data(), c.q.data(), c.k.data(), c.v.data(), s, row_major_strides(s));
  const HeadStrides rows = token_major(s.n_new, s.q_stride, s.head_dim);
  paged_attention_decode(paged_out.data(), c.q.data(), k_pool.data(), v_pool.data(), table.data(),
                         paged, s, rows, rows);
  EXPECT_EQ(paged_out, strided);
}

TEST(AttentionDecode, SameBitsWithOneAndTwoThreads) {
  const Case c = make_case(16, 1, 900, 32, 4, 64, 60);  // large enough to start threads
  std::vector<float> one(c.q.size()), two(c.q.size());
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  attention_decode(one.data(), c.q.data(), c.k.data(), c.v.data(), c.s, row_major_strides(c.s));
  omp_set_num_threads(2);
  attention_decode(two.data(), c.q.data(), c.k.data(), c.v.data(), c.s, row_major_strides(c.s));
  omp_set_num_threads(saved);
  EXPECT_EQ(one, two);
}

}  // namespace
}  // namespace llmbench::cpu
