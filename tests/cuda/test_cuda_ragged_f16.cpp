// The continuous-batching pool in binary16 on CUDA (--kv-cache-dtype fp16 in serve and ragged
// cases) against the CPU spec (kernels/cpu/kv_f16.h), through CudaBackend's kv_write_ragged_f16
// and ragged_paged_attention_f16: the write bit for bit (every value rounded as the CPU rounds
// it, rows placed through a block table that scatters each sequence's blocks over the pool,
// every other pool position left as it was); attention within the CUDA ragged tests' tolerance
// (1e-5 + 1e-4 relative) on a mixed step (decode rows of four sequences at their own positions,
// up to 2999, past the kernel's 2048-key score tile, between the rows of a 33-row prompt
// chunk), GQA, head_dim 64 and 128; and, since the kernel widens each half exactly and does the
// fp32 kernel's arithmetic in its order, bit for bit the fp32 ragged_paged_attention over the
// widened pools. Output rows are padded and start random: the padding must stay.
// Every test skips (GTEST_SKIP) without a device.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

#include "kernels/common/error.h"
#include "kernels/common/layout.h"
#include "kernels/cpu/kv_f16.h"
#include "tests/cuda/cuda_stream_test.h"
#include "tests/cuda/kv_f16_test.h"
#include "tests/kernels/check.h"

namespace llmbench {
namespace {

using test::all_close;
using test::bits;
using test::kAttentionAtol;
using test::kAttentionRtol;
using test::random_floats;
using test::random_halves;
using test::rounding_sources;
using test::widened;

// The pool of a ragged step: n_seqs sequences of up to max_len positions each. Block-table entry
// i names pool block (i * m + 3) mod n_blocks, m the first of 7, 11, 13, ... coprime to n_blocks:
// a permutation, so no sequence's blocks are contiguous or in order.
struct ScatteredPool {
  PagedKv paged;
  long rows;  // positions the pool holds, all sequences together
  std::vector<std::int32_t> table;
};

ScatteredPool scattered_pool(int n_seqs, int max_len, int block_size) {
  const PagedKv paged{block_size, (max_len + block_size - 1) / block_size};
  const int n_blocks = n_seqs * paged.max_blocks;
  int m = 7;
  while (std::gcd(m, n_blocks) != 1) m += 2;
  std::vector<std::int32_t> table(static_cast<std::size_t>(n_blocks));
  for (int i = 0; i < n_blocks; ++i)
    table[std::size_t(i)] = std::int32_t((std::int64_t(i) * m + 3) % n_blocks);
  return {paged, long(n_blocks) * block_size, table};
}

// A mixed step over five sequences, rows in no particular order (the ops allow any): a prompt
// chunk of sequence 0 at positions 40..72 (across block boundaries; 33 rows, which the static
// cache's attention would send through cuBLAS, the ragged op never does), with decode rows of
// sequences 1 to 4 among its rows: deep in a long context (2999: past one 2048-key tile), just
// past a tile (2048), a first token (0), and 1000.
struct Step {
  std::vector<std::int32_t> seq, pos;
  int rows() const { return int(seq.size()); }
};

Step mixed_step() {
  Step s;
  const auto row = [&s](int seq, int pos) {
    s.seq.push_back(seq);
    s.pos.push_back(pos);
  };
  row(1, 2999);
  for (int p = 40; p < 57; ++p) row(0, p);
  row(3, 2048);
  row(2, 0);
  for (int p = 57; p < 73; ++p) row(0, p);
  row(4, 1000);
  return s;
}
constexpr int kSeqs = 5, kMaxLen = 3000;

class CudaRaggedF16 : public test::CudaKvF16Test {};

TEST_F(CudaRaggedF16, WriteRoundsEveryValueAsTheCpuDoesThroughAScatteredTable) {
  struct Case {
    int kv_dim, block_size;
  };
  for (const Case c : {Case{256, 16}, Case{192, 7}, Case{128, 1}}) {
    SCOPED_TRACE(::testing::Message() << "kv_dim " << c.kv_dim << ", block " << c.block_size);
    const ScatteredPool pool = scattered_pool(kSeqs, kMaxLen, c.block_size);
    const Step step = mixed_step();
    const int src_stride = 3 * c.kv_dim + 1;  // a fused qkv row's k or v, plus an odd pad
    const std::vector<float> src = rounding_sources(std::size_t(step.rows()) * src_stride, 20);
    const std::vector<std::uint16_t> before =
        random_halves(std::size_t(pool.rows) * c.kv_dim, 21);
    std::vector<std::uint16_t> ref = before;
    cpu::kv_write_ragged_f16(ref.data(), pool.table.data(), pool.paged, src.data(), src_stride,
                             step.seq.data(), step.pos.data(), step.rows(), c.kv_dim);
    ASSERT_NE(ref, before);  // the step wrote something the comparison can see
    const Buffer d_pool = upload(before), d_src = upload(src), d_table = upload(pool.table);
    const Buffer d_seq = upload(step.seq), d_pos = upload(step.pos);
    be_->kv_write_ragged_f16(d_pool.as<std::uint16_t>(), d_table.as<std::int32_t>(), pool.paged,
                             d_src.f32(), src_stride, d_seq.as<std::int32_t>(),
                             d_pos.as<std::int32_t>(), step.rows(), c.kv_dim);
    EXPECT_EQ(download<std::uint16_t>(d_pool), ref);
  }
}

TEST_F(CudaRaggedF16, MixedStepMatchesTheCpuReferenceAndTheFp32KernelOverTheWidenedPools) {
  struct Heads {
    int n_heads, n_kv_heads, head_dim, block_size;
  };
  for (const Heads h : {Heads{8, 2, 64, 16}, Heads{14, 2, 128, 7}, Heads{32, 8, 128, 16},
                        Heads{4, 4, 64, 32}}) {
    SCOPED_TRACE(::testing::Message() << "heads " << h.n_heads << "/" << h.n_kv_heads << "x"
                                      << h.head_dim << ", block " << h.block_size);
    const ScatteredPool pool = scattered_pool(kSeqs, kMaxLen, h.block_size);
    const Step step = mixed_step();
    const int rows = step.rows(), q_dim = h.n_heads * h.head_dim;
    const int kv_dim = h.n_kv_heads * h.head_dim;
    const int qkv_stride = q_dim + 2 * kv_dim, out_stride = q_dim + 5;
    // The step's fused qkv rows; the pools hold random halves (the sequences' earlier tokens).
    const std::vector<float> qkv = random_floats(std::size_t(rows) * qkv_stride, 30, -2.0f, 2.0f);
    const std::vector<float> out0 = random_floats(std::size_t(rows) * out_stride, 31);
    std::vector<std::uint16_t> k_ref = random_halves(std::size_t(pool.rows) * kv_dim, 32);
    std::vector<std::uint16_t> v_ref = random_halves(k_ref.size(), 33);
    const Buffer d_k = upload(k_ref), d_v = upload(v_ref), d_qkv = upload(qkv);
    const Buffer d_table = upload(pool.table), d_seq = upload(step.seq);
    const Buffer d_pos = upload(step.pos);
    const auto* table = d_table.as<std::int32_t>();
    const auto* seq = d_seq.as<std::int32_t>();
    const auto* pos = d_pos.as<std::int32_t>();

    // The step as ragged_forward runs it: write the new keys and values, then attend.
    cpu::kv_write_ragged_f16(k_ref.data(), pool.table.data(), pool.paged, qkv.data() + q_dim,
                             qkv_stride, step.seq.data(), step.pos.data(), rows, kv_dim);
    cpu::kv_write_ragged_f16(v_ref.data(), pool.table.data(), pool.paged,
                             qkv.data() + q_dim + kv_dim, qkv_stride, step.seq.data(),
                             step.pos.data(), rows, kv_dim);
    be_->kv_write_ragged_f16(d_k.as<std::uint16_t>(), table, pool.paged, d_qkv.f32() + q_dim,
                             qkv_stride, seq, pos, rows, kv_dim);
    be_->kv_write_ragged_f16(d_v.as<std::uint16_t>(), table, pool.paged,
                             d_qkv.f32() + q_dim + kv_dim, qkv_stride, seq, pos, rows, kv_dim);
    ASSERT_EQ(download<std::uint16_t>(d_k), k_ref);
    ASSERT_EQ(download<std::uint16_t>(d_v), v_ref);

    std::vector<float> ref = out0;
    cpu::ragged_paged_attention_f16_reference(
        ref.data(), out_stride, qkv.data(), qkv_stride, k_ref.data(), v_ref.data(),
        pool.table.data(), pool.paged, step.seq.data(), step.pos.data(), rows, h.n_heads,
        h.n_kv_heads, h.head_dim, pool.rows);
    const Buffer d_out = upload(out0);
    be_->ragged_paged_attention_f16(d_out.f32(), out_stride, d_qkv.f32(), qkv_stride,
                                    d_k.as<std::uint16_t>(), d_v.as<std::uint16_t>(), table,
                                    pool.paged, seq, pos, rows, h.n_heads, h.n_kv_heads,
                                    h.head_dim);
    const std::vector<float> got = download<float>(d_out);
    EXPECT_TRUE(all_close(got, ref, kAttentionAtol, kAttentionRtol));

    // The fp32 op over the same pools widened: the same kernel, reading the same values.
    const Buffer d_k32 = upload(widened(k_ref)), d_v32 = upload(widened(v_ref));
    const Buffer d_out32 = upload(out0);
    be_->ragged_paged_attention(d_out32.f32(), out_stride, d_qkv.f32(), qkv_stride, d_k32.f32(),
                                d_v32.f32(), table, pool.paged, seq, pos, rows, h.n_heads,
                                h.n_kv_heads, h.head_dim);
    EXPECT_EQ(bits(got), bits(download<float>(d_out32)));
  }
}

TEST_F(CudaRaggedF16, AnEmptyStepTouchesNothingAndUnsupportedHeadsAreRefused) {
  const ScatteredPool pool = scattered_pool(2, 64, 16);
  const int n_heads = 4, n_kv_heads = 2, head_dim = 64, kv_dim = n_kv_heads * head_dim;
  const std::vector<std::uint16_t> halves = random_halves(std::size_t(pool.rows) * kv_dim, 40);
  const std::vector<float> out0 = random_floats(std::size_t(n_heads) * head_dim, 41);
  const std::vector<std::int32_t> one{0};
  const Buffer d_k = upload(halves), d_out = upload(out0), d_src = upload(out0);
  const Buffer d_table = upload(pool.table), d_one = upload(one);
  const auto* table = d_table.as<std::int32_t>();
  const auto* k = d_k.as<std::uint16_t>();
  const auto* at = d_one.as<std::int32_t>();  // sequence 0, position 0

  be_->kv_write_ragged_f16(d_k.as<std::uint16_t>(), table, pool.paged, d_src.f32(), kv_dim, at,
                           at, 0, kv_dim);
  be_->ragged_paged_attention_f16(d_out.f32(), n_heads * head_dim, d_src.f32(),
                                  n_heads * head_dim, k, k, table, pool.paged, at, at, 0,
                                  n_heads, n_kv_heads, head_dim);
  EXPECT_EQ(download<std::uint16_t>(d_k), halves);
  EXPECT_EQ(bits(download<float>(d_out)), bits(out0));

  // head_dim past the kernel's 256, and query heads that kv heads do not divide.
  EXPECT_THROW(be_->ragged_paged_attention_f16(d_out.f32(), 0, d_src.f32(), 0, k, k, table,
                                               pool.paged, at, at, 1, 1, 1, 288),
               Error);
  EXPECT_THROW(be_->ragged_paged_attention_f16(d_out.f32(), 0, d_src.f32(), 0, k, k, table,
                                               pool.paged, at, at, 1, 3, 2, 64),
               Error);
}

}  // namespace
}  // namespace llmbench
