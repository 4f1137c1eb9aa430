// The fp16 KV cache's CPU kernels (kernels/cpu/kv_f16.h) against their specs: the writes round
// each value as half.h's fp32_to_fp16 does (a value at a rounding tie, the largest half, an
// overflow, a subnormal); widening is exact; the decode kernel and the prefill GEMMs equal their
// fp32 forms over the widened cache bit for bit and the reference within the fp32 tolerances;
// the fused RoPE write equals the unfused ops. Runs on whichever path cpu_isa() picks (the
// ctest "portable." copy of test_kernels forces the reference). The ragged pool's ops likewise.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/common/half.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/attention_decode.h"
#include "kernels/cpu/attention_gemm.h"
#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/kv_cache.h"
#include "kernels/cpu/kv_f16.h"
#include "kernels/cpu/ragged_attention.h"
#include "kernels/cpu/ragged_attention_gemm.h"
#include "kernels/cpu/rope.h"
#include "tests/kernels/check.h"

namespace llmbench::cpu {
namespace {

std::vector<std::uint16_t> f16_halves(const std::vector<float>& x) {
  std::vector<std::uint16_t> h(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) h[i] = fp32_to_fp16(x[i]);
  return h;
}

std::vector<float> f16_widened(const std::vector<std::uint16_t>& h) {
  std::vector<float> x(h.size());
  for (std::size_t i = 0; i < h.size(); ++i) x[i] = fp16_to_fp32(h[i]);
  return x;
}

bool f16_same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0) return false;
  return true;
}

TEST(KvF16, WriteRoundsEachValueToTheNearestHalf) {
  const int batch = 2, n_new = 3, past = 4, seq = 9, kv_dim = 8, stride = 11;
  std::vector<float> src = test::random_floats(std::size_t(batch) * n_new * stride, 5, -4, 4);
  // Edge values in the first row: a tie (1 + 2^-11 rounds to even, 1), 1 + 3 * 2^-11 (ties up
  // to 1 + 2^-9), the largest half, an overflow to inf, a subnormal half.
  const float edges[] = {1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, 65504.0f, 1e6f, 3e-6f};
  for (int i = 0; i < 5; ++i) src[std::size_t(i)] = edges[i];
  std::vector<std::uint16_t> cache(std::size_t(batch) * seq * kv_dim, 0x7e00);  // NaN: untouched
  kv_cache_write_f16(cache.data(), src.data(), stride, batch, n_new, past, seq, kv_dim);
  std::vector<float> wide(std::size_t(batch) * seq * kv_dim, NAN);
  kv_cache_write(wide.data(), src.data(), stride, batch, n_new, past, seq, kv_dim);
  for (std::size_t i = 0; i < cache.size(); ++i) {
    const int pos = int(i / kv_dim) % seq;
    if (pos < past || pos >= past + n_new)
      EXPECT_EQ(cache[i], 0x7e00) << i;  // positions outside the write
    else
      EXPECT_EQ(cache[i], fp32_to_fp16(wide[i])) << i;
  }
  const std::size_t first = std::size_t(past) * kv_dim;  // sequence 0, position past
  EXPECT_EQ(cache[first + 0], 0x3c00);  // 1.0
  EXPECT_EQ(cache[first + 1], 0x3c02);  // 1 + 2^-9
  EXPECT_EQ(cache[first + 2], 0x7bff);  // 65504
  EXPECT_EQ(cache[first + 3], 0x7c00);  // inf
  EXPECT_EQ(fp16_to_fp32(cache[first + 4]), fp16_to_fp32(fp32_to_fp16(3e-6f)));
  EXPECT_LT(cache[first + 4], 0x0400);  // subnormal
}

TEST(KvF16, WriteRoundsEveryBitPatternAsHalfHDoes) {
  // The vectorised rounding (F16C on AVX2 CPUs) against the scalar spec over a million bit
  // patterns: every exponent, subnormal and NaN payload, both signs, rows of 1 to 23 values so
  // that vector bodies and scalar tails both run.
  std::vector<float> src(1 << 20);
  std::uint32_t x = 12345;
  for (float& f : src) {
    x = x * 1664525u + 1013904223u;  // a full-period LCG over 32-bit patterns
    std::memcpy(&f, &x, sizeof f);
  }
  std::vector<std::uint16_t> got(src.size(), 0);
  for (std::size_t at = 0, n = 1; at + n <= src.size(); at += n, n = n % 23 + 1)
    kv_cache_write_f16(got.data() + at, src.data() + at, int(n), 1, 1, 0, 1, int(n));
  std::size_t checked = 0;
  for (std::size_t at = 0, n = 1; at + n <= src.size(); at += n, n = n % 23 + 1)
    for (std::size_t i = at; i < at + n; ++i, ++checked)
      ASSERT_EQ(got[i], fp32_to_fp16(src[i]))
          << "bits " << std::hex << std::bit_cast<std::uint32_t>(src[i]);
  EXPECT_GT(checked, src.size() - 23);
}

TEST(KvF16, WidenPlacesEveryHeadByItsStrides) {
  const int batch = 2, len = 5, heads = 3, d = 8;
  const HeadStrides in = token_major(7, heads * d, d);  // a cache of 7 positions
  const HeadStrides out = head_major(heads, len, d);
  const auto h = f16_halves(test::random_floats(std::size_t(batch) * 7 * heads * d, 9));
  std::vector<float> got(std::size_t(batch) * heads * len * d, NAN);
  widen_kv_f16(got.data(), out, h.data(), in, batch, len, heads, d);
  for (int b = 0; b < batch; ++b)
    for (int j = 0; j < len; ++j)
      for (int g = 0; g < heads; ++g)
        for (int i = 0; i < d; ++i)
          ASSERT_EQ(got[b * out.batch + j * out.seq + g * out.head + i],
                    fp16_to_fp32(h[b * in.batch + j * in.seq + g * in.head + i]));
}

struct F16Case {
  AttentionShape s;
  std::vector<float> q;
  std::vector<std::uint16_t> k, v;
};

F16Case make_f16_case(int batch, int n_new, int past, int heads, int kv_heads, int d,
                      unsigned seed) {
  F16Case c;
  c.s = {.batch = batch, .n_new = n_new, .past_len = past, .n_heads = heads,
         .n_kv_heads = kv_heads, .head_dim = d, .q_stride = heads * d, .out_stride = heads * d,
         .cache_seq = past + n_new + 3};
  c.q = test::random_floats(std::size_t(batch) * n_new * heads * d, seed);
  const std::size_t n = std::size_t(batch) * c.s.cache_seq * kv_heads * d;
  c.k = f16_halves(test::random_floats(n, seed + 1, -3, 3));
  c.v = f16_halves(test::random_floats(n, seed + 2));
  return c;
}

TEST(KvF16, DecodeEqualsTheFp32KernelOverTheWidenedCache) {
  struct Shape { int batch, n_new, past, heads, kv_heads, d; };
  for (const Shape& sh : {Shape{1, 1, 143, 32, 4, 64}, Shape{3, 1, 133, 8, 2, 64},
                          Shape{2, 3, 17, 4, 2, 16}, Shape{1, 1, 0, 4, 4, 19},
                          Shape{1, 1, 1000, 4, 1, 128}, Shape{2, 2, 40, 2, 2, 256}}) {
    SCOPED_TRACE(testing::Message() << "batch " << sh.batch << " new " << sh.n_new << " past "
                                    << sh.past << " d " << sh.d);
    const F16Case c = make_f16_case(sh.batch, sh.n_new, sh.past, sh.heads, sh.kv_heads, sh.d, 60);
    const AttentionStrides st = row_major_strides(c.s);
    const std::vector<float> kw = f16_widened(c.k), vw = f16_widened(c.v);
    std::vector<float> out(c.q.size(), NAN), ref(c.q.size(), NAN), fp32(c.q.size(), NAN);
    attention_f16_decode(out.data(), c.q.data(), c.k.data(), c.v.data(), c.s, st);
    attention_f16_strided(ref.data(), c.q.data(), c.k.data(), c.v.data(), c.s, st);
    EXPECT_TRUE(test::all_close(out, ref, 1e-6, 1e-5));
    // The kernel the fp16 path takes, run in fp32 on the widened cache: the same bits.
    if (cpu_isa().avx2 && avx2::attention_decode_fits(sh.d))
      avx2::attention_decode(fp32.data(), st.out, c.q.data(), st.q, kw.data(), vw.data(), c.s,
                             avx2::KvRows{st.kv});
    else
      attention_strided(fp32.data(), c.q.data(), kw.data(), vw.data(), c.s, st);
    EXPECT_TRUE(f16_same_bits(out, fp32));
  }
}

TEST(KvF16, PrefillEqualsTheGemmsOverTheWidenedCache) {
  for (int past : {0, 21}) {
    SCOPED_TRACE(testing::Message() << "past " << past);
    const F16Case c = make_f16_case(2, kAttentionGemmMinRows + 5, past, 8, 2, 64, 80);
    const AttentionStrides st = row_major_strides(c.s);
    std::vector<float> scratch(std::size_t(attention_f16_scratch_floats(c.s)));
    std::vector<float> out(c.q.size(), NAN), gemm(c.q.size(), NAN), ref(c.q.size(), NAN);
    attention_f16_gemm(out.data(), c.q.data(), c.k.data(), c.v.data(), c.s, st, scratch.data());
    const std::vector<float> kw = f16_widened(c.k), vw = f16_widened(c.v);
    attention_gemm(gemm.data(), c.q.data(), kw.data(), vw.data(), c.s, st);
    EXPECT_TRUE(f16_same_bits(out, gemm));
    attention_f16_strided(ref.data(), c.q.data(), c.k.data(), c.v.data(), c.s, st);
    EXPECT_TRUE(test::all_close(out, ref, 1e-5, 1e-4));
  }
}

TEST(KvF16, HalvesDifferFromTheFp32CacheOnlyByTheirRounding) {
  // What the fp16 cache changes: attention over rounded keys and values stays within a few
  // halves' ulps (2^-11 relative) of attention over the exact ones.
  const F16Case c = make_f16_case(2, 1, 300, 8, 2, 64, 90);
  const AttentionStrides st = row_major_strides(c.s);
  const std::size_t n = c.k.size();
  const std::vector<float> k = test::random_floats(n, 91, -3, 3), v = test::random_floats(n, 92);
  std::vector<float> exact(c.q.size()), rounded(c.q.size());
  attention_strided(exact.data(), c.q.data(), k.data(), v.data(), c.s, st);
  attention_f16_decode(rounded.data(), c.q.data(), f16_halves(k).data(), f16_halves(v).data(),
                       c.s, st);
  EXPECT_TRUE(test::all_close(rounded, exact, 5e-3, 0));
  EXPECT_FALSE(f16_same_bits(rounded, exact));  // the rounding is real
}

TEST(KvF16, FusedRopeWriteEqualsTheUnfusedOps) {
  RopeKvShape s;
  s.batch = 2, s.n_new = 3, s.past_len = 5, s.cache_seq = 12;
  s.n_heads = 4, s.n_kv_heads = 2, s.head_dim = 16;
  const std::vector<float> qkv = test::random_floats(std::size_t(s.rows()) * s.qkv_dim(), 30);
  std::vector<std::int32_t> pos(std::size_t(s.rows()));
  for (int r = 0; r < s.rows(); ++r) pos[std::size_t(r)] = s.past_len + r % s.n_new;
  const std::size_t cache = std::size_t(s.batch) * s.cache_seq * s.kv_dim();
  std::vector<float> fused = qkv, unfused = qkv;
  std::vector<std::uint16_t> kf(cache, 0), vf(cache, 0), ku(cache, 0), vu(cache, 0);
  rope_kv_write_f16(fused.data(), kf.data(), vf.data(), pos.data(), s);
  rope(unfused.data(), s.rows(), s.qkv_dim(), s.n_heads, s.head_dim, pos.data(), s.theta);
  rope(unfused.data() + s.q_dim(), s.rows(), s.qkv_dim(), s.n_kv_heads, s.head_dim, pos.data(),
       s.theta);
  kv_cache_write_f16(ku.data(), unfused.data() + s.q_dim(), s.qkv_dim(), s.batch, s.n_new,
                     s.past_len, s.cache_seq, s.kv_dim());
  kv_cache_write_f16(vu.data(), unfused.data() + s.q_dim() + s.kv_dim(), s.qkv_dim(), s.batch,
                     s.n_new, s.past_len, s.cache_seq, s.kv_dim());
  EXPECT_TRUE(f16_same_bits(fused, unfused));
  EXPECT_EQ(kf, ku);
  EXPECT_EQ(vf, vu);
}

// The continuous-batching pool in halves: a step of decode rows of three sequences at
// different positions and one prompt chunk long enough for the GEMMs, over blocks handed out in
// a scattered order. The write rounds as kv_write_ragged then fp32_to_fp16 would; attention
// equals the fp32 fast path over the widened pool bit for bit and the reference within the fp32
// tolerances.
TEST(KvF16, RaggedPoolWritesAndAttendsAsTheFp32PoolOverItsHalves) {
  const int heads = 8, kv_heads = 2, d = 64, kv_dim = kv_heads * d, block = 16, max_blocks = 8;
  const PagedKv paged{block, max_blocks};
  const int n_seqs = 4, n_blocks = n_seqs * max_blocks;
  std::vector<std::int32_t> table(std::size_t(n_seqs) * max_blocks);
  for (std::size_t i = 0; i < table.size(); ++i)
    table[i] = std::int32_t((i * 11 + 5) % std::size_t(n_blocks));  // a permutation of the blocks
  const long pool_rows = long(n_blocks) * block;
  // Every position of every sequence already holds a key and value.
  std::vector<std::uint16_t> k =
      f16_halves(test::random_floats(std::size_t(pool_rows) * kv_dim, 1, -3, 3));
  std::vector<std::uint16_t> v = f16_halves(test::random_floats(k.size(), 2));
  // Rows: sequence 0 at 100, sequence 1 at 7, sequence 2 at 0, then sequence 3's chunk 20..44.
  std::vector<std::int32_t> seq = {0, 1, 2}, pos = {100, 7, 0};
  for (int p = 20; p < 20 + kAttentionGemmMinRows + 9; ++p) seq.push_back(3), pos.push_back(p);
  const int rows = int(seq.size());
  const std::vector<float> src = test::random_floats(std::size_t(rows) * 3 * kv_dim, 3);
  std::vector<float> wide_k = f16_widened(k);
  kv_write_ragged_f16(k.data(), table.data(), paged, src.data(), 3 * kv_dim, seq.data(),
                      pos.data(), rows, kv_dim);
  kv_write_ragged(wide_k.data(), table.data(), paged, src.data(), 3 * kv_dim, seq.data(),
                  pos.data(), rows, kv_dim);
  EXPECT_EQ(k, f16_halves(wide_k));  // written rows rounded, the rest untouched
  const std::vector<float> q = test::random_floats(std::size_t(rows) * heads * d, 4);
  const std::size_t n = std::size_t(rows) * heads * d;
  std::vector<float> out(n, NAN), fp32(n, NAN), ref(n, NAN);
  ragged_paged_attention_gemm_f16(out.data(), heads * d, q.data(), heads * d, k.data(), v.data(),
                                  table.data(), paged, seq.data(), pos.data(), rows, heads,
                                  kv_heads, d);
  const std::vector<float> kw = f16_widened(k), vw = f16_widened(v);
  ragged_paged_attention_gemm(fp32.data(), heads * d, q.data(), heads * d, kw.data(), vw.data(),
                              table.data(), paged, seq.data(), pos.data(), rows, heads, kv_heads,
                              d);
  EXPECT_TRUE(f16_same_bits(out, fp32));
  ragged_paged_attention_f16_reference(ref.data(), heads * d, q.data(), heads * d, k.data(),
                                       v.data(), table.data(), paged, seq.data(), pos.data(), rows,
                                       heads, kv_heads, d, pool_rows);
  EXPECT_TRUE(test::all_close(out, ref, 1e-5, 1e-4));
}

}  // namespace
}  // namespace llmbench::cpu
