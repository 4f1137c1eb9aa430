// The forward pass with bf16 and fp16 weight matrices (--dtype) on the CPU, the oracle for the
// CUDA path: stored bytes, determinism, and closeness to the fp32 forward of the same random
// weights. Closeness is measured teacher-forced (both models are fed the fp32 model's greedy
// tokens), so one early disagreement does not make every later position incomparable: per
// position, KL(softmax(fp32 logits) || softmax(half logits)) and top-1 agreement.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "engine/model/cpu_backend.h"
#include "engine/model/memory.h"
#include "engine/model/model.h"
#include "engine/bench/prompts.h"
#include "tests/engine/logit_closeness.h"

namespace llmbench {

namespace {

using test::Closeness;
using test::compare;
using test::kBatch;
using test::kl_divergence;
using test::kPromptLen;
using test::kSteps;
using test::Pass;
using test::run_pass;

class ModelDtypes : public ::testing::TestWithParam<DType> {};

}  // namespace

TEST_P(ModelDtypes, StoresTwoBytesPerMatrixElement) {
  CpuBackend be;
  const ModelConfig c = *find_preset("tiny");
  const Weights w = load_weights(c, RandomWeights(1), be, GetParam());
  EXPECT_EQ(w.embed.dtype, GetParam());
  EXPECT_EQ(w.layers[0].w_down.dtype, GetParam());
  EXPECT_EQ(w.bytes(), c.weight_bytes(GetParam()));
  EXPECT_EQ(load_weights(c, RandomWeights(1), be).bytes(), c.weight_bytes(DType::kFp32));
  // Matrices at half the bytes; the fp32 norm weights are 4 * vector_params either way.
  EXPECT_EQ(2 * (c.weight_bytes(GetParam()) - 4 * c.vector_params()),
            c.weight_bytes(DType::kFp32) - 4 * c.vector_params());
  EXPECT_EQ(estimate_memory(c, GetParam(), 2, 8, 16).weight_bytes, c.weight_bytes(GetParam()));
}

TEST_P(ModelDtypes, SameSeedIsBitIdentical) {
  test::expect_same_seed_bit_identical(GetParam());
}

TEST_P(ModelDtypes, CloseToTheFp32Forward) {
  // Bounds from measurement on the tiny preset, seeds 1..3, 4 sequences x 13 positions each
  // (printed below): max KL 1.2e-4 to 1.4e-4 nats for bf16 (mean ~4e-5), 1.4e-6 to 1.9e-6
  // for fp16 (3 more mantissa bits: ~64x smaller squared rounding error, ~75x smaller KL);
  // top-1 agreement 50/52 to 52/52 (bf16) and 52/52 (fp16). The bounds leave ~10x headroom on
  // KL; the lower bound catches a path that silently stayed fp32.
  CpuBackend be;
  const ModelConfig c = *find_preset("tiny");
  const DType t = GetParam();
  const double max_kl_bound = t == DType::kBf16 ? 1.5e-3 : 2e-5;
  for (std::uint64_t seed : {1, 2, 3}) {
    const Model ref_model(c, load_weights(c, RandomWeights(seed), be), be);
    const Model model(c, load_weights(c, RandomWeights(seed), be, t), be);
    const auto prompt = synthetic_prompts(seed, kBatch, kPromptLen, c.vocab_size, true);
    const Pass ref = run_pass(ref_model, prompt);
    const std::vector<std::vector<std::int32_t>> feed(ref.tokens.begin(), ref.tokens.end() - 1);
    const Pass got = run_pass(model, prompt, feed);
    const Closeness cl = compare(ref, got, c.vocab_size);
    std::printf("[ measured ] %s seed %d: max KL %.3g, mean KL %.3g nats, top-1 %d/%d\n",
                std::string(dtype_name(t)).c_str(), int(seed), cl.max_kl, cl.mean_kl, cl.agree,
                cl.positions);
    EXPECT_LT(cl.max_kl, max_kl_bound) << "seed " << seed;
    EXPECT_GT(cl.max_kl, 0.0) << "seed " << seed << ": identical to fp32, nothing was rounded";
    EXPECT_GE(cl.agree, cl.positions * 9 / 10) << "seed " << seed;
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, ModelDtypes, ::testing::Values(DType::kBf16, DType::kFp16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

}  // namespace llmbench
