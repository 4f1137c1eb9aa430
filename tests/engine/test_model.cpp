// The forward pass on the tiny preset: batch invariance, determinism, prefill/decode
// consistency, and finite activations on every preset shape family. (Agreement with an
// independent implementation is tests/reference/.)
#include <gtest/gtest.h>

#include <cmath>

#include "engine/model/cpu_backend.h"
#include "kernels/common/error.h"
#include "engine/model/model.h"
#include "engine/bench/prompts.h"
#include "tests/engine/generation.h"

namespace llmbench {

namespace {

ModelConfig tiny() { return *find_preset("tiny"); }

using test::Generation;

Generation generate(const Model& model, const std::vector<std::int32_t>& prompt, int batch,
                    int prompt_len, int steps) {
  Session s(model, batch, prompt_len, prompt_len + steps + 1);
  return test::generate(s, prompt, prompt_len, steps);
}

}  // namespace

TEST(Model, SameSeedIsBitIdentical) {
  CpuBackend be;
  const ModelConfig c = tiny();
  Model a(c, load_weights(c, RandomWeights(3), be), be);
  Model b(c, load_weights(c, RandomWeights(3), be), be);
  const auto prompt = synthetic_prompts(3, 2, 9, c.vocab_size, true);
  const Generation ra = generate(a, prompt, 2, 9, 4), rb = generate(b, prompt, 2, 9, 4);
  EXPECT_EQ(ra.tokens, rb.tokens);
  EXPECT_EQ(ra.logits, rb.logits);  // exact float equality
  Model other(c, load_weights(c, RandomWeights(4), be), be);
  EXPECT_NE(generate(other, prompt, 2, 9, 4).logits, ra.logits);
}

TEST(Model, BatchOfIdenticalPromptsEqualsBatchOne) {
  // The 16 rows agree with each other and with batch 1 to float rounding, not bit for bit:
  // OpenBLAS runs other kernels for other row counts (sgemv for one row, blocked sgemm for
  // many), and its AVX-512 sgemm (the "Cooperlake" kernels it picks on Zen 4) sums rows at
  // the edge of a register tile in another order than rows inside it. Greedy tokens are equal
  // exactly.
  CpuBackend be;
  const ModelConfig c = tiny();
  Model m(c, load_weights(c, RandomWeights(11), be), be);
  const int P = 13, B = 16;
  const auto one = synthetic_prompts(11, 1, P, c.vocab_size, false);
  const auto many = synthetic_prompts(11, B, P, c.vocab_size, false);
  for (int b = 0; b < B; ++b)
    ASSERT_TRUE(std::equal(one.begin(), one.end(), many.begin() + b * P));
  const Generation r1 = generate(m, one, 1, P, 5), rb = generate(m, many, B, P, 5);
  const std::size_t V = std::size_t(c.vocab_size);
  for (std::size_t stage = 0; stage < r1.logits.size(); ++stage)
    for (int b = 0; b < B; ++b) {
      ASSERT_EQ(rb.tokens[stage][b], r1.tokens[stage][0]) << "stage " << stage << " row " << b;
      for (std::size_t v = 0; v < V; ++v) {
        ASSERT_NEAR(rb.logits[stage][b * V + v], rb.logits[stage][v], 1e-5)
            << "rows differ: stage " << stage << " row " << b << " vocab " << v;
        ASSERT_NEAR(rb.logits[stage][b * V + v], r1.logits[stage][v], 1e-5)
            << "stage " << stage << " row " << b << " vocab " << v;
      }
    }
}

TEST(Model, DecodeMatchesPrefillOfTheLongerPrompt) {
  // Feeding tokens one by one through the KV cache must give the logits a prefill over the
  // whole sequence gives (within float tolerance: the GEMM shapes differ).
  CpuBackend be;
  const ModelConfig c = tiny();
  Model m(c, load_weights(c, RandomWeights(5), be), be);
  const int P = 6;
  const auto prompt = synthetic_prompts(5, 1, P, c.vocab_size, false);
  const Generation r = generate(m, prompt, 1, P, 3);
  std::vector<std::int32_t> longer = prompt;
  for (int i = 0; i < 3; ++i) longer.push_back(r.tokens[i][0]);
  Session s(m, 1, P + 3, P + 3);
  s.prefill(longer, P + 3);
  const auto full = s.last_logits();
  for (std::size_t v = 0; v < full.size(); ++v) EXPECT_NEAR(full[v], r.logits[3][v], 1e-4);
}

TEST(Model, ActivationsStayFiniteOnDeepWideShapes) {
  // The depth of the 7B presets (32 layers), with Qwen2's q/k/v biases and a tied head, but
  // narrow, so the test stays fast: logits must be finite and of moderate size.
  ModelConfig c = tiny();
  c.name = "deep";
  c.n_layers = 32;
  c.dim = 512;
  c.n_heads = 8;
  c.n_kv_heads = 2;
  c.ffn_dim = 256;
  c.qkv_bias = true;
  c.tied_embeddings = true;
  CpuBackend be;
  Model m(c, load_weights(c, RandomWeights(1), be), be);
  const auto prompt = synthetic_prompts(1, 2, 8, c.vocab_size, true);
  const Generation r = generate(m, prompt, 2, 8, 2);
  for (const auto& stage : r.logits)
    for (float v : stage) {
      ASSERT_TRUE(std::isfinite(v));
      ASSERT_LT(std::fabs(v), 1e3f);
    }
}

TEST(Model, RejectsBadInput) {
  CpuBackend be;
  const ModelConfig c = tiny();
  Model m(c, load_weights(c, RandomWeights(1), be), be);
  EXPECT_THROW(Session(m, 1, 4, c.max_seq_len + 1), BadInput);
  Session s(m, 1, 4, 8);
  EXPECT_THROW(s.prefill({1, 2, 3, c.vocab_size}, 4), BadInput);
  EXPECT_THROW(s.prefill({1, 2, 3}, 4), BadInput);
}

}  // namespace llmbench
