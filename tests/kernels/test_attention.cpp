// Causal grouped-query attention: exact small cases (one key, causal mask, GQA mapping, strides),
// random cases against an independent double-precision loop, and 1- vs 2-thread bit equality.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstddef>
#include <vector>

#include "kernels/cpu/attention.h"
#include "tests/kernels/check.h"

namespace llmbench::cpu {
namespace {

// Buffers for one attention call, sized from the shape; rows are padded to the given strides.
struct AttentionCase {
  AttentionShape s;
  std::vector<float> q, k, v, out;

  explicit AttentionCase(const AttentionShape& shape) : s(shape) {
    const std::size_t rows = static_cast<std::size_t>(s.batch) * s.n_new;
    const std::size_t cache = static_cast<std::size_t>(s.batch) * s.cache_seq * kv_dim();
    q.assign(rows * s.q_stride, 0.0f);
    k.assign(cache, 0.0f);
    v.assign(cache, 0.0f);
    out.assign(rows * s.out_stride, -7.0f);  // -7 marks "not written"
  }
  int kv_dim() const { return s.n_kv_heads * s.head_dim; }
  float& q_at(int b, int t, int h, int i) {
    return q[(static_cast<std::size_t>(b) * s.n_new + t) * s.q_stride + h * s.head_dim + i];
  }
  float& k_at(int b, int pos, int kvh, int i) {
    return k[(static_cast<std::size_t>(b) * s.cache_seq + pos) * kv_dim() + kvh * s.head_dim + i];
  }
  float& v_at(int b, int pos, int kvh, int i) {
    return v[(static_cast<std::size_t>(b) * s.cache_seq + pos) * kv_dim() + kvh * s.head_dim + i];
  }
  float& out_at(int b, int t, int h, int i) {
    return out[(static_cast<std::size_t>(b) * s.n_new + t) * s.out_stride + h * s.head_dim + i];
  }
  void run() { attention(out.data(), q.data(), k.data(), v.data(), s); }
};

// Contiguous rows, cache exactly as long as needed.
AttentionShape dense_shape(int batch, int n_new, int past_len, int n_heads, int n_kv_heads,
                           int head_dim) {
  return {.batch = batch,
          .n_new = n_new,
          .past_len = past_len,
          .n_heads = n_heads,
          .n_kv_heads = n_kv_heads,
          .head_dim = head_dim,
          .q_stride = n_heads * head_dim,
          .out_stride = n_heads * head_dim,
          .cache_seq = past_len + n_new};
}

// The spec written independently of the kernel: double precision, straight from the formula.
std::vector<float> reference(AttentionCase& c) {
  const AttentionShape& s = c.s;
  std::vector<float> out(c.out.size(), -7.0f);
  const int group = s.n_heads / s.n_kv_heads;
  for (int b = 0; b < s.batch; ++b) {
    for (int t = 0; t < s.n_new; ++t) {
      for (int h = 0; h < s.n_heads; ++h) {
        const int n_keys = s.past_len + t + 1;
        std::vector<double> p(n_keys);
        double max_score = -INFINITY, sum = 0.0;
        for (int j = 0; j < n_keys; ++j) {
          double dot = 0.0;
          for (int i = 0; i < s.head_dim; ++i)
            dot += double(c.q_at(b, t, h, i)) * c.k_at(b, j, h / group, i);
          p[j] = dot / std::sqrt(double(s.head_dim));
          max_score = std::max(max_score, p[j]);
        }
        for (double& x : p) sum += (x = std::exp(x - max_score));
        for (int i = 0; i < s.head_dim; ++i) {
          double acc = 0.0;
          for (int j = 0; j < n_keys; ++j) acc += p[j] * c.v_at(b, j, h / group, i);
          out[(static_cast<std::size_t>(b) * s.n_new + t) * s.out_stride + h * s.head_dim + i] =
              float(acc / sum);
        }
      }
    }
  }
  return out;
}

void fill_random(AttentionCase& c, unsigned seed) {
  c.q = test::random_floats(c.q.size(), seed);
  c.k = test::random_floats(c.k.size(), seed + 1);
  c.v = test::random_floats(c.v.size(), seed + 2);
}

TEST(Attention, OneKeyReturnsItsValueExactly) {
  AttentionCase c(dense_shape(1, 1, 0, 2, 2, 4));
  fill_random(c, 21);
  c.run();
  for (int h = 0; h < 2; ++h) {
    for (int i = 0; i < 4; ++i) EXPECT_EQ(c.out_at(0, 0, h, i), c.v_at(0, 0, h, i));
  }
}

TEST(Attention, HandComputedTwoKeys) {
  // head_dim 4, so scores are q.k / 2. q = e0, k0 = 0, k1 = 2 ln 3 e0: scores 0 and ln 3,
  // softmax [1/4, 3/4]. v0 = [4, 0, 0, 0], v1 = [0, 8, 0, 0] -> out = [1, 6, 0, 0].
  AttentionCase c(dense_shape(1, 1, 1, 1, 1, 4));
  c.q_at(0, 0, 0, 0) = 1.0f;
  c.k_at(0, 1, 0, 0) = float(2.0 * std::log(3.0));
  c.v_at(0, 0, 0, 0) = 4.0f;
  c.v_at(0, 1, 0, 1) = 8.0f;
  c.run();
  EXPECT_NEAR(c.out_at(0, 0, 0, 0), 1.0, 1e-6);
  EXPECT_NEAR(c.out_at(0, 0, 0, 1), 6.0, 1e-6);
  EXPECT_EQ(c.out_at(0, 0, 0, 2), 0.0f);
  EXPECT_EQ(c.out_at(0, 0, 0, 3), 0.0f);
}

TEST(Attention, CausalMaskHidesLaterKeys) {
  // Three new tokens, no past. Key 2 is huge (score 200 against q = ones), so any query that
  // could see it would return v2. Query 0 sees only key 0; query 1 averages keys 0 and 1
  // (equal scores); query 2 is all v2 (exp(-200) underflows to 0 in float).
  AttentionCase c(dense_shape(1, 3, 0, 1, 1, 4));
  for (int t = 0; t < 3; ++t) {
    for (int i = 0; i < 4; ++i) c.q_at(0, t, 0, i) = 1.0f;
  }
  for (int i = 0; i < 4; ++i) {
    c.k_at(0, 2, 0, i) = 100.0f;
    c.v_at(0, 0, 0, i) = 1.0f;
    c.v_at(0, 1, 0, i) = 3.0f;
    c.v_at(0, 2, 0, i) = 1000.0f;
  }
  c.run();
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(c.out_at(0, 0, 0, i), 1.0f);
    EXPECT_EQ(c.out_at(0, 1, 0, i), 2.0f);
    EXPECT_EQ(c.out_at(0, 2, 0, i), 1000.0f);
  }
}

TEST(Attention, GroupedQueryHeadsReadTheirKvHead) {
  // 4 query heads, 2 kv heads: heads 0 and 1 read kv head 0, heads 2 and 3 read kv head 1.
  // With a single key the output of each head is exactly its kv head's value.
  AttentionCase c(dense_shape(1, 1, 0, 4, 2, 3));
  fill_random(c, 22);
  c.run();
  for (int h = 0; h < 4; ++h) {
    for (int i = 0; i < 3; ++i) EXPECT_EQ(c.out_at(0, 0, h, i), c.v_at(0, 0, h / 2, i)) << h;
  }
}

TEST(Attention, StridesAndUnusedCachePositionsAreRespected) {
  // Padded q and out rows, a cache longer than needed whose unused tail is NaN: the kernel
  // must read only positions [0, past_len + n_new) and write only n_heads * head_dim per row.
  AttentionShape s = dense_shape(2, 3, 4, 4, 2, 8);
  s.q_stride = s.n_heads * s.head_dim + 5;
  s.out_stride = s.n_heads * s.head_dim + 3;
  s.cache_seq = s.past_len + s.n_new + 6;
  AttentionCase c(s);
  fill_random(c, 23);
  for (int b = 0; b < s.batch; ++b) {
    for (int pos = s.past_len + s.n_new; pos < s.cache_seq; ++pos) {
      for (int kvh = 0; kvh < s.n_kv_heads; ++kvh) {
        for (int i = 0; i < s.head_dim; ++i) c.k_at(b, pos, kvh, i) = c.v_at(b, pos, kvh, i) = NAN;
      }
    }
  }
  c.run();
  EXPECT_TRUE(test::all_close(c.out, reference(c), 1e-6, 1e-5));  // padding: -7 in both
}

TEST(Attention, MatchesDoubleReferenceForPrefillAfterPast) {
  AttentionCase c(dense_shape(2, 7, 3, 4, 2, 16));
  fill_random(c, 24);
  c.run();
  EXPECT_TRUE(test::all_close(c.out, reference(c), 1e-6, 1e-5));
}

TEST(Attention, MatchesDoubleReferenceForDecode) {
  // Model-like head_dim and GQA ratio, large enough to run in parallel.
  AttentionCase c(dense_shape(3, 1, 133, 8, 2, 64));
  fill_random(c, 25);
  c.run();
  EXPECT_TRUE(test::all_close(c.out, reference(c), 1e-6, 1e-5));
}

TEST(Attention, SameBitsWithOneAndTwoThreads) {
  AttentionCase c(dense_shape(2, 19, 13, 8, 4, 64));
  fill_random(c, 26);
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  c.run();
  const std::vector<float> one = c.out;
  omp_set_num_threads(2);
  c.run();
  omp_set_num_threads(saved);
  EXPECT_EQ(c.out, one);
}

}  // namespace
}  // namespace llmbench::cpu
