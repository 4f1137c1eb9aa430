// The CUDA decode path that had never run before cuda_sim, in one case small enough for every
// ctest run: CudaBackend on the simulated device with every decode-path option on at once
// (--cuda-graphs on, --fuse small, --decode-attention streamed), over the fp32 and the fp16 KV
// cache, against the CPU backend with the same cache dtype. The same checks as
// tests/cuda/test_cuda_forward.cpp (every logit within 1e-4 of the largest, the same greedy
// tokens, graphs actually replayed), whose full loops run on a GPU or in scripts/cuda_sim.sh.
// And the number of kernels a decode step runs per layer (counted by the simulator), which a
// launch-bound decode step's time follows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "engine/bench/prompts.h"
#include "engine/model/cpu_backend.h"
#include "engine/model/cuda_backend.h"
#include "engine/model/model.h"
#include "engine/model/config.h"
#include "tests/cuda/forward_check.h"
#include "tests/cuda_sim/cuda_sim_counters.h"
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

// Kernels one eager decode step at batch 1 runs on CudaBackend with fp16 weights, after a
// 40-token prompt (41 keys: the attention splits over keys, as llama2-7b's decode does past 32):
// the count on the tiny preset with 3 layers minus the count with 2 (what runs outside the layers
// cancels).
int kernels_per_layer(FuseMode fuse) {
  auto step_kernels = [fuse](int n_layers) {
    ModelConfig c = *find_preset("tiny");
    c.n_layers = n_layers;
    c.validate();
    Variants v;
    v.fuse = fuse;
    const int P = 40;
    CudaBackend gpu;
    const Model model(c, load_weights(c, RandomWeights(8), gpu, DType::kFp16), gpu);
    Session s(model, 1, P, P + 1, v);
    const std::vector<std::int32_t> next =
        s.prefill(synthetic_prompts(8, 1, P, c.vocab_size, true), P);
    const std::uint64_t before = cuda_sim::grids_run();
    s.decode_step(next);
    return static_cast<int>(cuda_sim::grids_run() - before);
  };
  return step_kernels(3) - step_kernels(2);
}

TEST(CudaSimForward, ABatchOneDecodeStepRunsEightKernelsALayerFusedAndFourteenUnfused) {
  // --fuse small: attn_residual_norm's add_rmsnorm, qkv_proj's GEMV (rounding its fp32 input
  // itself), rope_kv_write, attention (its splits merged by their last block), o_proj's GEMV,
  // ffn_residual_norm's add_rmsnorm, gate_up_proj's GEMV, swiglu_down. Until the twentieth
  // session each GEMV but swiglu_down's ran after a conversion kernel and the splits after the
  // attention kernel were merged by a combine kernel: 12.
  EXPECT_EQ(kernels_per_layer(FuseMode::kSmall), 8);
  // none: rmsnorm, qkv GEMV, rope on q, rope on k, the k and v writes, attention, o_proj GEMV,
  // the residual add, rmsnorm, gate_up GEMV, swiglu, down_proj GEMV, the residual add (19 before:
  // four conversions and the combine kernel).
  EXPECT_EQ(kernels_per_layer(FuseMode::kNone), 14);
}

}  // namespace
}  // namespace llmbench
