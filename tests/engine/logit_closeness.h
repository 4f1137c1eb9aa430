// What the dtype tests share: one prefill + decode pass of a model that records every stage's
// logits and greedy tokens, and the KL divergence / top-1 agreement between two such passes
// (tests/engine/test_model_dtypes.cpp, test_model_quant.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "engine/model/cpu_backend.h"
#include "engine/model/model.h"
#include "engine/bench/prompts.h"

namespace llmbench::test {

constexpr int kBatch = 4, kPromptLen = 24, kSteps = 12;

struct Pass {
  std::vector<std::vector<float>> logits;         // [batch, vocab] after prefill, each step
  std::vector<std::vector<std::int32_t>> tokens;  // greedy tokens of the same stages
};

// Prefill, then kSteps decode steps fed `feed[i]` (or, when feed is empty, the greedy tokens).
inline Pass run_pass(const Model& model, const std::vector<std::int32_t>& prompt,
              const std::vector<std::vector<std::int32_t>>& feed = {}) {
  Session s(model, kBatch, kPromptLen, kPromptLen + kSteps);
  Pass r;
  std::vector<std::int32_t> next = s.prefill(prompt, kPromptLen);
  for (int i = 0;; ++i) {
    r.tokens.push_back(next);
    r.logits.push_back(s.last_logits());
    if (i == kSteps) break;
    next = s.decode_step(feed.empty() ? next : feed[std::size_t(i)]);
  }
  return r;
}

// KL(softmax(p) || softmax(q)) in nats, in double.
inline double kl_divergence(const float* p, const float* q, int n) {
  const double pm = *std::max_element(p, p + n), qm = *std::max_element(q, q + n);
  double ps = 0, qs = 0;
  for (int i = 0; i < n; ++i) ps += std::exp(p[i] - pm), qs += std::exp(q[i] - qm);
  double kl = 0;
  for (int i = 0; i < n; ++i) {
    const double lp = p[i] - pm - std::log(ps), lq = q[i] - qm - std::log(qs);
    kl += std::exp(lp) * (lp - lq);
  }
  return kl;
}

struct Closeness {
  double max_kl = 0, mean_kl = 0;
  int agree = 0, positions = 0;
};

inline Closeness compare(const Pass& ref, const Pass& got, int vocab) {
  Closeness c;
  for (std::size_t stage = 0; stage < ref.logits.size(); ++stage)
    for (int b = 0; b < kBatch; ++b) {
      const float* p = ref.logits[stage].data() + std::size_t(b) * vocab;
      const float* q = got.logits[stage].data() + std::size_t(b) * vocab;
      const double kl = kl_divergence(p, q, vocab);
      c.max_kl = std::max(c.max_kl, kl);
      c.mean_kl += kl;
      c.agree += ref.tokens[stage][std::size_t(b)] == got.tokens[stage][std::size_t(b)];
      ++c.positions;
    }
  c.mean_kl /= c.positions;
  return c;
}

// Two models built from the same seed in `dtype` give the same tokens and bit-identical logits.
inline void expect_same_seed_bit_identical(DType dtype) {
  CpuBackend be;
  const ModelConfig c = *find_preset("tiny");
  const Model a(c, load_weights(c, RandomWeights(3), be, dtype), be);
  const Model b(c, load_weights(c, RandomWeights(3), be, dtype), be);
  const auto prompt = synthetic_prompts(3, kBatch, kPromptLen, c.vocab_size, true);
  const Pass ra = run_pass(a, prompt), rb = run_pass(b, prompt);
  EXPECT_EQ(ra.tokens, rb.tokens);
  EXPECT_EQ(ra.logits, rb.logits);  // exact float equality
}

}  // namespace llmbench::test
