// Ragged paged KV write and attention (kernels/cpu/ragged_attention.h): rows of several
// sequences in one call, each at its own position, keys read through a scrambled block table.
// Checked against an independent double-precision loop over contiguous caches, and bit for bit
// against attention_strided() (the static path's kernel) one sequence at a time.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/paged_kv.h"
#include "kernels/cpu/ragged_attention.h"
#include "kernels/cpu/ragged_attention_gemm.h"
#include "tests/kernels/check.h"

namespace llmbench::cpu {
namespace {

// Three sequences share a pool of blocks handed out in a scrambled order. `rows` lists
// (sequence, position) pairs in the order a scheduler might put them in one step.
struct RaggedCase {
  int n_heads, n_kv_heads, head_dim, block;
  int n_seqs = 3, max_len = 40;
  PagedKv paged;
  std::vector<std::int32_t> table;
  std::vector<float> k_pool, v_pool;
  std::vector<std::vector<float>> k_seq, v_seq;  // per sequence, [max_len, kv_dim] contiguous

  RaggedCase(int heads, int kv_heads, int hd, int block_size)
      : n_heads(heads), n_kv_heads(kv_heads), head_dim(hd), block(block_size) {
    paged = {block, (max_len + block - 1) / block};
    const int n_blocks = n_seqs * paged.max_blocks;
    table.resize(std::size_t(n_blocks));
    for (int i = 0; i < n_blocks; ++i) table[i] = (i * 7 + 3) % n_blocks;  // a permutation
    const int kv = kv_dim();
    k_pool.assign(std::size_t(n_blocks) * block * kv, NAN);  // unwritten slots poison
    v_pool = k_pool;
    for (int s = 0; s < n_seqs; ++s) {
      k_seq.push_back(test::random_floats(std::size_t(max_len) * kv, 10 + s));
      v_seq.push_back(test::random_floats(std::size_t(max_len) * kv, 20 + s));
    }
  }
  int kv_dim() const { return n_kv_heads * head_dim; }

  // Writes positions [0, len) of sequence s into the pool through kv_write_ragged.
  void fill(int s, int len) {
    std::vector<std::int32_t> seq(static_cast<std::size_t>(len), s), pos(static_cast<std::size_t>(len));
    for (int p = 0; p < len; ++p) pos[p] = p;
    kv_write_ragged(k_pool.data(), table.data(), paged, k_seq[s].data(), kv_dim(), seq.data(),
                    pos.data(), len, kv_dim());
    kv_write_ragged(v_pool.data(), table.data(), paged, v_seq[s].data(), kv_dim(), seq.data(),
                    pos.data(), len, kv_dim());
  }
};

TEST(RaggedAttention, WriteThenGatherIsExact) {
  RaggedCase c(4, 2, 8, 5);
  const int lens[3] = {17, 40, 3};
  for (int s = 0; s < 3; ++s) c.fill(s, lens[s]);
  for (int s = 0; s < 3; ++s) {
    std::vector<float> got(std::size_t(c.max_len) * c.kv_dim(), 0.0f);
    kv_gather_paged(got.data(), c.k_pool.data(), c.table.data() + s * c.paged.max_blocks,
                    c.paged, 1, lens[s], c.kv_dim(), c.max_len);
    for (int i = 0; i < lens[s] * c.kv_dim(); ++i) ASSERT_EQ(got[i], c.k_seq[s][i]) << s << " " << i;
  }
}

void check_mixed(int n_heads, int n_kv_heads, int head_dim, int block) {
  RaggedCase c(n_heads, n_kv_heads, head_dim, block);
  // A decode row of sequence 1 at position 33, a prefill chunk of sequence 0 (positions 9..16),
  // the first row of sequence 2, interleaved.
  std::vector<std::int32_t> seq = {0, 1, 0, 0, 2, 0, 0, 0, 0, 0};
  std::vector<std::int32_t> pos = {9, 33, 10, 11, 0, 12, 13, 14, 15, 16};
  c.fill(0, 17);
  c.fill(1, 34);
  c.fill(2, 1);
  const int n_rows = int(seq.size()), q_dim = n_heads * head_dim, stride = q_dim + 3;
  const std::vector<float> q = test::random_floats(std::size_t(n_rows) * stride, 99);
  std::vector<float> out(std::size_t(n_rows) * stride, -7.0f);
  ragged_paged_attention(out.data(), stride, q.data(), stride, c.k_pool.data(), c.v_pool.data(),
                         c.table.data(), c.paged, seq.data(), pos.data(), n_rows, n_heads,
                         n_kv_heads, head_dim);

  const int group = n_heads / n_kv_heads, kv = c.kv_dim();
  std::vector<float> got, ref, same_kernel;
  for (int r = 0; r < n_rows; ++r) {
    const int s = seq[r], n_keys = pos[r] + 1;
    // The static kernel on the sequence's contiguous cache, this row as its one new query.
    std::vector<float> one(static_cast<std::size_t>(q_dim));
    const AttentionShape shape{1, 1, pos[r], n_heads, n_kv_heads, head_dim, stride, q_dim,
                               c.max_len};
    attention(one.data(), q.data() + std::size_t(r) * stride, c.k_seq[s].data(),
              c.v_seq[s].data(), shape);
    for (int h = 0; h < n_heads; ++h) {
      const float* qh = q.data() + std::size_t(r) * stride + h * head_dim;
      const int g = h / group;
      std::vector<double> p(static_cast<std::size_t>(n_keys));
      double mx = -INFINITY, sum = 0.0;
      for (int j = 0; j < n_keys; ++j) {
        double dot = 0.0;
        for (int i = 0; i < head_dim; ++i)
          dot += double(qh[i]) * c.k_seq[s][std::size_t(j) * kv + g * head_dim + i];
        p[j] = dot / std::sqrt(double(head_dim));
        mx = std::max(mx, p[j]);
      }
      for (auto& x : p) sum += (x = std::exp(x - mx));
      for (int i = 0; i < head_dim; ++i) {
        double acc = 0.0;
        for (int j = 0; j < n_keys; ++j)
          acc += p[j] * c.v_seq[s][std::size_t(j) * kv + g * head_dim + i];
        ref.push_back(float(acc / sum));
        got.push_back(out[std::size_t(r) * stride + h * head_dim + i]);
        same_kernel.push_back(one[h * head_dim + i]);
      }
    }
    for (int i = q_dim; i < stride; ++i) EXPECT_EQ(out[std::size_t(r) * stride + i], -7.0f);
  }
  EXPECT_TRUE(test::all_close(got, ref, 1e-5, 1e-4));
  EXPECT_EQ(got, same_kernel);  // bit for bit: the static path's arithmetic
}

TEST(RaggedAttention, MixedRowsMatchReferenceAndStaticKernel) { check_mixed(4, 2, 8, 5); }
TEST(RaggedAttention, OddShapes) {
  check_mixed(3, 3, 7, 1);
  check_mixed(6, 1, 19, 16);
}

// The GEMM path (prompt chunks of 16+ rows as GEMMs, the rest on the loop) against the
// reference: decode rows, a 20-row chunk, a 5-row chunk, a 17-row prompt, and a chunk of one
// sequence split by another's row (two runs, neither long enough for a GEMM).
TEST(RaggedAttention, GemmPathMatchesTheReference) {
  for (int heads : {4, 6}) {
    RaggedCase c(heads, 2, 16, 5);
    c.fill(0, 40);
    c.fill(1, 40);
    c.fill(2, 40);
    std::vector<std::int32_t> seq, pos;
    auto add = [&](int s, int from, int n) {
      for (int i = 0; i < n; ++i) seq.push_back(s), pos.push_back(from + i);
    };
    add(1, 33, 1);
    add(2, 39, 1);
    add(0, 5, 20);   // GEMM
    add(1, 10, 5);   // loop
    add(2, 0, 17);   // GEMM
    add(0, 30, 8);   // loop, split by the next row
    add(1, 20, 1);
    add(0, 38, 2);
    const int n_rows = int(seq.size()), q_dim = heads * c.head_dim, stride = q_dim + 1;
    const std::vector<float> q = test::random_floats(std::size_t(n_rows) * stride, 5);
    std::vector<float> ref(std::size_t(n_rows) * stride, -7.0f), got = ref;
    ragged_paged_attention(ref.data(), stride, q.data(), stride, c.k_pool.data(),
                           c.v_pool.data(), c.table.data(), c.paged, seq.data(), pos.data(),
                           n_rows, heads, 2, c.head_dim);
    ragged_paged_attention_gemm(got.data(), stride, q.data(), stride, c.k_pool.data(),
                                c.v_pool.data(), c.table.data(), c.paged, seq.data(),
                                pos.data(), n_rows, heads, 2, c.head_dim);
    EXPECT_TRUE(test::all_close(got, ref, 1e-5, 1e-4)) << heads << " heads";
  }
}

}  // namespace
}  // namespace llmbench::cpu
