// The CUDA decode path that had never run before cuda_sim, in one case small enough for every
// ctest run: CudaBackend on the simulated device with every decode-path option on at once
// (--cuda-graphs on, --fuse small, --decode-attention streamed), over the fp32 and the fp16 KV
// cache, against the CPU backend with the same cache dtype. The same checks as
// tests/cuda/test_cuda_forward.cpp (every logit within 1e-4 of the largest, the same greedy
// tokens, graphs actually replayed), whose full loops run on a GPU or in scripts/cuda_sim.sh.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "engine/bench/prompts.h"
#include "engine/model/cpu_backend.h"
#include "engine/model/cuda_backend.h"
#include "engine/model/model.h"
#include "tests/cuda/forward_check.h"
#include "tests/engine/generation.h"

namespace llmbench {
namespace {

constexpr int kSimDecodeSteps = 5;

TEST(CudaSimForward, GraphsFusedStreamedDecodeMatchesTheCpuOverFp32AndFp16Caches) {
  const ModelConfig c = test::wide();
  const int batch = 2, P = 19;
  const auto prompts = synthetic_prompts(6, batch, P, c.vocab_size, true);
  for (const KvDtype kv : {KvDtype::kFp32, KvDtype::kFp16}) {
    Variants ref_v;
    ref_v.kv_dtype = kv;
    Variants v = ref_v;
    v.cuda_graphs = true;
    v.fuse = FuseMode::kSmall;
    v.decode_attention = DecodeAttention::kStreamed;
    const std::string what = "cuda [" + v.describe() + "]";
    CpuBackend cpu;
    const Model ref_model(c, load_weights(c, RandomWeights(6), cpu), cpu);
    Session ref_s(ref_model, batch, P, P + kSimDecodeSteps, ref_v);
    const test::Generation ref = test::generate(ref_s, prompts, P, kSimDecodeSteps);
    CudaBackend gpu;
    const Model model(c, load_weights(c, RandomWeights(6), gpu), gpu);
    Session s(model, batch, P, P + kSimDecodeSteps, v);
    const test::Generation got = test::generate(s, prompts, P, kSimDecodeSteps);
    ASSERT_NE(s.graphs(), nullptr) << what;
    EXPECT_EQ(s.graph_note(), "") << what;
    EXPECT_EQ(s.graphs()->captures(), 1) << what;
    EXPECT_EQ(s.graphs()->replays(), kSimDecodeSteps - 2) << what;
    ASSERT_EQ(got.logits.size(), ref.logits.size()) << what;
    for (std::size_t stage = 0; stage < ref.logits.size(); ++stage) {
      const double tol = test::kLogitRelTol * test::max_abs(ref.logits[stage]);
      double worst = 0;
      for (std::size_t i = 0; i < ref.logits[stage].size(); ++i)
        worst = std::max(worst, std::isfinite(got.logits[stage][i])
                                    ? std::fabs(double(got.logits[stage][i]) -
                                                double(ref.logits[stage][i]))
                                    : INFINITY);
      EXPECT_LE(worst, tol) << what << ", stage " << stage;
      EXPECT_EQ(got.tokens[stage], ref.tokens[stage]) << what << ", stage " << stage;
    }
  }
}

}  // namespace
}  // namespace llmbench
