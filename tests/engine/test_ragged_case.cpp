// Ragged offline cases (engine/bench/ragged_case.h): the seeded length draws are reproducible and
// have the asked-for mean and spread within their clamps; each sequence of a ragged run on the
// tiny preset generates exactly the static path's tokens for its prompt and length; the cost
// and metrics use the real token counts.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "engine/bench/bench_case.h"
#include "engine/model/cpu_backend.h"
#include "engine/model/model.h"
#include "engine/bench/ragged_case.h"
#include "engine/bench/stats.h"

namespace llmbench {
namespace {

TEST(RaggedLengths, SameSeedSameDrawsOtherSeedOtherDraws) {
  const RaggedLengths a = draw_ragged_lengths(7, 64, 128, 32, 64, 16, 2048);
  const RaggedLengths b = draw_ragged_lengths(7, 64, 128, 32, 64, 16, 2048);
  const RaggedLengths c = draw_ragged_lengths(8, 64, 128, 32, 64, 16, 2048);
  EXPECT_EQ(a.prompt, b.prompt);
  EXPECT_EQ(a.output, b.output);
  EXPECT_NE(a.prompt, c.prompt);
  EXPECT_NE(a.output, c.output);
  // A sequence's draw depends on (seed, index) only: a larger batch starts with the same ones.
  const RaggedLengths longer = draw_ragged_lengths(7, 100, 128, 32, 64, 16, 2048);
  EXPECT_TRUE(std::equal(a.prompt.begin(), a.prompt.end(), longer.prompt.begin()));
  EXPECT_TRUE(std::equal(a.output.begin(), a.output.end(), longer.output.begin()));
  // Not all equal: the spread is there.
  EXPECT_GT(*std::max_element(a.prompt.begin(), a.prompt.end()),
            *std::min_element(a.prompt.begin(), a.prompt.end()));
}

TEST(RaggedLengths, ZeroStddevGivesTheMean) {
  const RaggedLengths l = draw_ragged_lengths(3, 9, 40, 0, 12, 5, 2048);
  for (int p : l.prompt) EXPECT_EQ(p, 40);
  const RaggedLengths m = draw_ragged_lengths(3, 9, 40, 6, 12, 0, 2048);
  for (int o : m.output) EXPECT_EQ(o, 12);
}

TEST(RaggedLengths, MeanAndSpreadMatchTheNormal) {
  const int n = 4000;
  const RaggedLengths l = draw_ragged_lengths(11, n, 500, 50, 300, 20, 100000);
  std::vector<double> p(l.prompt.begin(), l.prompt.end()), o(l.output.begin(), l.output.end());
  // Standard error of the mean 50 / sqrt(4000) = 0.79: 4 of them, plus rounding to integers.
  EXPECT_NEAR(mean(p), 500.0, 3.5);
  EXPECT_NEAR(mean(o), 300.0, 1.5);
  EXPECT_NEAR(stdev(p), 50.0, 2.5);
  EXPECT_NEAR(stdev(o), 20.0, 1.0);
}

TEST(RaggedLengths, ClampedToOneAndToTheContext) {
  const int ctx = 64;
  const RaggedLengths l = draw_ragged_lengths(5, 500, 32, 100, 20, 100, ctx);
  int at_one = 0, at_ctx = 0;
  for (std::size_t i = 0; i < l.prompt.size(); ++i) {
    EXPECT_GE(l.prompt[i], 1);
    EXPECT_GE(l.output[i], 1);
    EXPECT_LE(l.prompt[i] + l.output[i], ctx);
    at_one += l.prompt[i] == 1;
    at_ctx += l.prompt[i] == ctx - 1;
  }
  EXPECT_GT(at_one, 0);
  EXPECT_GT(at_ctx, 0);
}

TEST(RaggedCost, CountsTheRealTokens) {
  const ModelConfig c = *find_preset("tiny");
  const CaseCost cost = ragged_case_cost(c, {3, 5, 2}, {1, 3, 2}, DType::kFp32);
  EXPECT_EQ(cost.prompt_tokens, 10);
  EXPECT_EQ(cost.generated_tokens, 6);
  EXPECT_EQ(cost.prefill_flops,
            prefill_flops(c, 1, 3) + prefill_flops(c, 1, 5) + prefill_flops(c, 1, 2));
  ASSERT_EQ(cost.decode_rows, (std::vector<int>{2, 1}));
  const std::int64_t kv = 2 * std::int64_t(c.n_layers) * c.kv_dim() * 4;
  // Step 1 advances sequences 1 (5 + 1 positions) and 2 (2 + 1); step 2 only sequence 1 (5 + 2).
  EXPECT_EQ(cost.decode_bytes[0], c.decode_weight_bytes(2, DType::kFp32) + kv * (6 + 3));
  EXPECT_EQ(cost.decode_bytes[1], c.decode_weight_bytes(1, DType::kFp32) + kv * 7);
  // Metrics: 10 prompt tokens over a 2 ms TTFT, 6 tokens over 2 + 1 + 3 ms, 1.5 rows per step
  // over a mean step of 2 ms.
  const CaseMetrics m = compute_metrics(3, 3, 2, cost, {{2'000'000, {1'000'000, 3'000'000}}},
                                        Peaks{10, 1, "t"});
  EXPECT_DOUBLE_EQ(m.prefill_tok_s, 10 / 0.002);
  EXPECT_DOUBLE_EQ(m.throughput_tok_s, 6 / 0.006);
  EXPECT_DOUBLE_EQ(*m.decode_tok_s, 1.5 / 0.002);
  EXPECT_DOUBLE_EQ(*m.decode_gbps,
                   double(cost.decode_bytes[0] + cost.decode_bytes[1]) / 0.004 / 1e9);
}

CaseSpec ragged_spec() {
  CaseSpec s;
  s.model = "tiny";
  s.batch = 7;
  s.prompt_len = 24;
  s.max_new_tokens = 10;
  s.variants.prompt_len_stddev = 12;
  s.variants.output_len_stddev = 5;
  s.warmup = 1;
  s.repeat = 2;
  s.seed = 1;
  s.distinct_prompts = true;
  s.trace = TraceLevel::kOps;
  return s;
}

TEST(RaggedCase, EachSequenceGeneratesTheStaticPathsTokens) {
  CpuBackend be;
  const ModelConfig c = *find_preset("tiny");
  Model model(c, load_weights(c, RandomWeights(1), be), be);
  const auto origin = std::chrono::steady_clock::now();
  const CaseSpec spec = ragged_spec();
  const CaseResult r = run_ragged_case(model, spec, Peaks{10, 1, "t"}, origin);
  const RaggedLengths lens = draw_ragged_lengths(1, 7, 24, 12, 10, 5, c.max_seq_len);
  ASSERT_EQ(r.prompt_lens, lens.prompt);
  ASSERT_EQ(r.generated.size(), 7u);
  EXPECT_GT(*std::max_element(lens.output.begin(), lens.output.end()),
            *std::min_element(lens.output.begin(), lens.output.end()));
  std::size_t at = 0;
  for (int i = 0; i < 7; ++i) {
    ASSERT_EQ(int(r.generated[std::size_t(i)].size()), lens.output[std::size_t(i)]) << i;
    CaseSpec one;
    one.model = "tiny";
    one.batch = 1;
    one.prompt.assign(r.prompt_ids.begin() + std::ptrdiff_t(at),
                      r.prompt_ids.begin() + std::ptrdiff_t(at) + lens.prompt[std::size_t(i)]);
    at += std::size_t(lens.prompt[std::size_t(i)]);
    one.prompt_len = int(one.prompt.size());
    one.max_new_tokens = lens.output[std::size_t(i)];
    one.warmup = 0;
    one.repeat = 1;
    one.trace = TraceLevel::kOff;
    const CaseResult s = run_case(model, one, Peaks{10, 1, "t"}, origin);
    EXPECT_EQ(r.generated[std::size_t(i)], s.generated[0]) << "sequence " << i;
  }
  // Timing and counts: one TTFT per repetition, one sample per decode step of the longest.
  const int max_out = *std::max_element(lens.output.begin(), lens.output.end());
  ASSERT_EQ(r.samples.size(), 2u);
  for (const RepSample& s : r.samples) {
    EXPECT_GT(s.ttft_ns, 0);
    EXPECT_EQ(int(s.decode_ns.size()), max_out - 1);
  }
  EXPECT_EQ(r.cost.generated_tokens,
            std::accumulate(lens.output.begin(), lens.output.end(), std::int64_t(0)));
  EXPECT_FALSE(r.trace.empty());
  ASSERT_TRUE(r.traced_sample.has_value());
  EXPECT_EQ(int(r.traced_sample->decode_ns.size()), max_out - 1);
}

TEST(RaggedCase, ExplicitPromptWithRaggedOutputs) {
  CpuBackend be;
  const ModelConfig c = *find_preset("tiny");
  Model model(c, load_weights(c, RandomWeights(1), be), be);
  CaseSpec spec = ragged_spec();
  spec.variants.prompt_len_stddev = 0;
  spec.prompt = {5, 9, 200, 31, 7};
  spec.prompt_len = 5;
  spec.trace = TraceLevel::kOff;
  const CaseResult r = run_ragged_case(model, spec, Peaks{10, 1, "t"},
                                       std::chrono::steady_clock::now());
  // Every sequence has the same prompt, so each output is a prefix of the longest one.
  std::size_t longest = 0;
  for (std::size_t i = 0; i < r.generated.size(); ++i)
    if (r.generated[i].size() > r.generated[longest].size()) longest = i;
  for (const auto& g : r.generated)
    EXPECT_TRUE(std::equal(g.begin(), g.end(), r.generated[longest].begin()));
  for (int p : r.prompt_lens) EXPECT_EQ(p, 5);
}

// Finite weights whose layer-1 input norm overflows (the CLI's overflowing_norm case, in
// process): the ragged case, like the static one, fails naming the first op whose output is
// not finite, found by the rerun with every op's output checked.
class OverflowingNorm final : public WeightSource {
 public:
  void fill(const TensorSpec& spec, float* dst) const override {
    base_.fill(spec, dst);
    if (spec.name == "model.layers.1.input_layernorm.weight")
      for (std::int64_t i = 0; i < spec.numel(); ++i) dst[i] = 3e38f;
  }

 private:
  RandomWeights base_{1};
};

TEST(RaggedCase, NonFiniteLogitsNameTheFirstOpLikeTheStaticPath) {
  CpuBackend be;
  const ModelConfig c = *find_preset("tiny");
  Model model(c, load_weights(c, OverflowingNorm(), be), be);
  CaseSpec spec = ragged_spec();
  spec.trace = TraceLevel::kOff;
  const auto origin = std::chrono::steady_clock::now();
  try {
    run_ragged_case(model, spec, Peaks{10, 1, "t"}, origin);
    FAIL() << "the ragged case ran on non-finite logits";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("first appears in layer 1, op attn_norm (engine step 1,"),
              std::string::npos)
        << e.what();
  }
  CaseSpec fixed = spec;
  fixed.variants = Variants{};
  try {
    run_case(model, fixed, Peaks{10, 1, "t"}, origin);
    FAIL() << "the static case ran on non-finite logits";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("first appears in layer 1, op attn_norm (prefill,"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace llmbench
