// Embedding lookup: exact row copies, repeated tokens, and a large enough case to go parallel.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kernels/cpu/embedding.h"
#include "tests/kernels/check.h"

namespace llmbench::cpu {
namespace {

TEST(Embedding, CopiesTheRowOfEachToken) {
  // table: 3 tokens x 2 dims.
  const std::vector<float> table = {0.5f, -1.0f, 2.0f, 3.0f, -4.0f, 7.25f};
  const std::vector<int32_t> tokens = {2, 0, 2, 1};
  std::vector<float> out(tokens.size() * 2, -99.0f);
  embedding(out.data(), table.data(), tokens.data(), 4, 2);
  EXPECT_EQ(out, (std::vector<float>{-4.0f, 7.25f, 0.5f, -1.0f, -4.0f, 7.25f, 2.0f, 3.0f}));
}

TEST(Embedding, ManyTokensMatchARowByRowCopy) {
  const int vocab = 1000, dim = 257, n_tokens = 300;
  const std::vector<float> table = test::random_floats(static_cast<std::size_t>(vocab) * dim, 1);
  std::vector<int32_t> tokens(n_tokens);
  for (int i = 0; i < n_tokens; ++i) tokens[i] = (i * 7919) % vocab;
  std::vector<float> out(static_cast<std::size_t>(n_tokens) * dim);
  embedding(out.data(), table.data(), tokens.data(), n_tokens, dim);
  for (int i = 0; i < n_tokens; ++i) {
    for (int j = 0; j < dim; ++j) {
      ASSERT_EQ(out[i * dim + j], table[tokens[i] * dim + j]) << "token " << i << " dim " << j;
    }
  }
}

TEST(Embedding, ZeroTokensWritesNothing) {
  const std::vector<float> table = {1.0f, 2.0f};
  std::vector<float> out = {-1.0f};
  embedding(out.data(), table.data(), nullptr, 0, 2);
  EXPECT_EQ(out[0], -1.0f);
}

}  // namespace
}  // namespace llmbench::cpu
