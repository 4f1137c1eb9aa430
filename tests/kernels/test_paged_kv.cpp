// Paged KV cache: scatter through a scrambled block table then gather equals the contiguous
// cache kv_cache_write builds; unmapped blocks stay untouched; head-major sources work.
#include <gtest/gtest.h>

#include <vector>

#include "kernels/cpu/kv_cache.h"
#include "kernels/cpu/paged_kv.h"
#include "tests/kernels/check.h"

namespace llmbench::cpu {
namespace {

// A block table for `batch` sequences whose blocks are handed out in descending order from a
// pool of batch * max_blocks + spare blocks, sequence by sequence, as the engine does.
std::vector<std::int32_t> descending_table(int batch, int max_blocks, int spare) {
  std::vector<std::int32_t> table(std::size_t(batch) * max_blocks);
  int next = batch * max_blocks + spare - 1;
  for (int k = 0; k < max_blocks; ++k)
    for (int b = 0; b < batch; ++b) table[std::size_t(b) * max_blocks + k] = next--;
  return table;
}

TEST(PagedKv, PositionsMapThroughTheTable) {
  const std::vector<std::int32_t> table = {7, 2, 5, 0};  // 2 sequences, 2 blocks each
  const PagedKv p{3, 2};
  EXPECT_EQ(paged_row(table.data(), p, 0, 0, 4), 7 * 3 * 4);
  EXPECT_EQ(paged_row(table.data(), p, 0, 4, 4), (2 * 3 + 1) * 4);
  EXPECT_EQ(paged_row(table.data(), p, 1, 2, 4), (5 * 3 + 2) * 4);
  EXPECT_EQ(paged_row(table.data(), p, 1, 3, 4), 0);
}

TEST(PagedKv, ScatterThenGatherEqualsTheContiguousCache) {
  // Block size 4 does not divide the 11 prompt tokens; then two decode tokens, one of which
  // opens a new block. Source rows are padded (stride 37), like k inside a fused qkv row.
  const int B = 3, G = 2, D = 8, KV = G * D, stride = 37, bs = 4, L = 16;
  const PagedKv paged{bs, (L + bs - 1) / bs};
  const std::vector<std::int32_t> table = descending_table(B, paged.max_blocks, 2);
  const int n_blocks = B * paged.max_blocks + 2;
  std::vector<float> pool(std::size_t(n_blocks) * bs * KV, -3.0f);
  std::vector<float> contiguous(std::size_t(B) * L * KV, 0.0f);
  int past = 0;
  for (const int n_new : {11, 1, 1}) {
    const std::vector<float> src =
        test::random_floats(std::size_t(B) * n_new * stride, unsigned(40 + past));
    kv_write_paged(pool.data(), table.data(), paged, src.data(), token_major(n_new, stride, D),
                   B, n_new, past, G, D);
    kv_cache_write(contiguous.data(), src.data(), stride, B, n_new, past, L, KV);
    past += n_new;
  }
  std::vector<float> gathered(contiguous.size(), 0.0f);
  kv_gather_paged(gathered.data(), pool.data(), table.data(), paged, B, past, KV, L);
  EXPECT_TRUE(test::all_close(gathered, contiguous, 0.0, 0.0));
  // The two spare blocks (0 and 1, handed out last) were never written.
  for (std::size_t i = 0; i < std::size_t(2) * bs * KV; ++i) ASSERT_EQ(pool[i], -3.0f) << i;
}

TEST(PagedKv, HeadMajorSourceLandsInTokenMajorBlocks) {
  const int B = 2, G = 3, D = 4, KV = G * D, T = 5, bs = 2;
  const PagedKv paged{bs, 3};
  const std::vector<std::int32_t> table = descending_table(B, paged.max_blocks, 0);
  const std::vector<float> src = test::random_floats(std::size_t(B) * G * T * D, 50);
  std::vector<float> pool(std::size_t(B) * paged.max_blocks * bs * KV, 0.0f);
  kv_write_paged(pool.data(), table.data(), paged, src.data(), head_major(G, T, D), B, T, 0, G, D);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t)
      for (int g = 0; g < G; ++g)
        for (int i = 0; i < D; ++i)
          ASSERT_EQ(pool[paged_row(table.data(), paged, b, t, KV) + g * D + i],
                    src[((b * G + g) * T + t) * D + i]);
}

}  // namespace
}  // namespace llmbench::cpu
