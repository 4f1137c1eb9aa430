// --fuse small (engine/model/variants.h) on the CPU backend, tiny preset: with every other
// variant combination it generates the same tokens as the defaults and, since the CPU's fused ops
// do the unfused ops' arithmetic, the same logits bit for bit as the same variants unfused (fp32,
// bf16 and int8 weights, a q/k/v bias, batch 1 and 3 distinct prompts). The fused ops are traced
// under their own names in place of the ones they replace (rope_kv_write only on the prealloc
// cache with fused rows), with the same FLOPs in total and exactly the bytes each fusion saves.
// The Backend defaults (the unfused ops) equal the CPU overrides bit for bit.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "engine/bench/prompts.h"
#include "engine/model/cpu_backend.h"
#include "engine/model/model.h"
#include "tests/engine/generation.h"
#include "tests/kernels/check.h"

namespace llmbench {
namespace {

constexpr int kFusePromptLen = 11;
constexpr int kFuseDecodeSteps = 4;

std::vector<Variants> every_fusable_combination() { return test::every_variant_combination(4); }

test::Generation generate(const Model& m, int batch, const Variants& v) {
  const auto prompt = synthetic_prompts(31, batch, kFusePromptLen, m.config().vocab_size, true);
  Session s(m, batch, kFusePromptLen, kFusePromptLen + kFuseDecodeSteps, v);
  return test::generate(s, prompt, kFusePromptLen, kFuseDecodeSteps);
}

// Every variant combination, fused and not, on `model`: fused logits equal the unfused ones of
// the same variants bit for bit, and tokens equal the defaults'.
void expect_fused_equals_unfused(const Model& model, const std::string& what) {
  for (const int batch : {1, 3}) {
    const test::Generation ref = generate(model, batch, Variants{});
    for (Variants v : every_fusable_combination()) {
      const test::Generation unfused = generate(model, batch, v);
      v.fuse = FuseMode::kSmall;
      const test::Generation fused = generate(model, batch, v);
      const std::string label = what + " batch " + std::to_string(batch) + " [" + v.describe() + "]";
      EXPECT_EQ(fused.logits, unfused.logits) << label;
      EXPECT_EQ(fused.tokens, ref.tokens) << label;
    }
  }
}

class FuseVariantTest : public testing::Test {
 protected:
  FuseVariantTest() : c_(*find_preset("tiny")) {}
  CpuBackend be_;
  ModelConfig c_;
};

TEST_F(FuseVariantTest, EveryCombinationFusedGivesTheUnfusedLogitsBitForBit) {
  for (const DType t : {DType::kFp32, DType::kBf16, DType::kInt8}) {
    const Model model(c_, load_weights(c_, RandomWeights(21), be_, t), be_);
    expect_fused_equals_unfused(model, std::string(dtype_name(t)));
  }
}

TEST_F(FuseVariantTest, AQkvBiasStaysBeforeTheFusedRope) {
  ModelConfig c = c_;
  c.qkv_bias = true;
  const Model model(c, load_weights(c, RandomWeights(22), be_), be_);
  expect_fused_equals_unfused(model, "qkv_bias");
}

// The records of a traced prefill and one decode step (batch 2).
std::vector<OpRecord> traced(const Model& m, Backend& be, const Variants& v) {
  Tracer tracer(TraceLevel::kOps, be.make_op_timer(v.timer), std::chrono::steady_clock::now());
  Session s(m, 2, kFusePromptLen, kFusePromptLen + 1, v);
  s.set_tracer(&tracer);
  const auto next =
      s.prefill(synthetic_prompts(1, 2, kFusePromptLen, m.config().vocab_size, true), kFusePromptLen);
  s.decode_step(next);
  return tracer.records();
}

// name -> the layers it ran in (decode step only).
std::map<std::string, std::vector<int>> decode_ops(const std::vector<OpRecord>& records) {
  std::map<std::string, std::vector<int>> out;
  for (const OpRecord& r : records)
    if (r.phase == Phase::kDecode && r.category != OpCategory::kRange)
      out[r.name].push_back(r.layer);
  return out;
}

TEST_F(FuseVariantTest, FusedOpsAreTracedInPlaceOfTheOnesTheyReplace) {
  const Model model(c_, load_weights(c_, RandomWeights(21), be_), be_);
  const int last = c_.n_layers - 1;
  Variants fused;
  fused.fuse = FuseMode::kSmall;
  const auto ops = decode_ops(traced(model, be_, fused));
  for (const char* gone : {"attn_residual", "ffn_norm", "rope_q", "rope_k", "kv_write_k",
                           "kv_write_v", "swiglu", "down_proj"})
    EXPECT_FALSE(ops.count(gone)) << gone;
  std::vector<int> every_layer;
  for (int l = 0; l < c_.n_layers; ++l) every_layer.push_back(l);
  std::vector<int> all_but_last(every_layer.begin(), every_layer.end() - 1);
  EXPECT_EQ(ops.at("attn_residual_norm"), every_layer);
  EXPECT_EQ(ops.at("ffn_residual_norm"), all_but_last);
  EXPECT_EQ(ops.at("rope_kv_write"), every_layer);
  EXPECT_EQ(ops.at("swiglu_down"), every_layer);
  EXPECT_EQ(ops.at("attn_norm"), std::vector<int>{0});       // later ones come fused
  EXPECT_EQ(ops.at("ffn_residual"), std::vector<int>{last});  // the final norm is on last rows
  EXPECT_EQ(ops.at("final_norm"), std::vector<int>{-1});
  for (const OpRecord& r : traced(model, be_, fused)) {
    const std::string name = r.name;
    if (name.find("residual_norm") != std::string::npos) {
      EXPECT_EQ(r.category, OpCategory::kNorm) << name;
    } else if (name == "swiglu_down") {
      EXPECT_EQ(r.category, OpCategory::kGemm);
    } else if (name == "rope_kv_write") {
      EXPECT_EQ(r.category, OpCategory::kElementwise);
    }
  }

  // Other caches keep RoPE and their own writes; the other fusions still apply.
  for (const KvCacheKind kv : {KvCacheKind::kPaged, KvCacheKind::kConcat}) {
    Variants v = fused;
    v.kv_cache = kv;
    const auto names = decode_ops(traced(model, be_, v));
    EXPECT_TRUE(names.count("rope_q") && names.count("rope_k")) << v.describe();
    EXPECT_FALSE(names.count("rope_kv_write")) << v.describe();
    EXPECT_TRUE(names.count("attn_residual_norm") && names.count("swiglu_down")) << v.describe();
  }
  Variants permute = fused;
  permute.qkv = QkvLayout::kPermute;
  const auto names = decode_ops(traced(model, be_, permute));
  EXPECT_TRUE(names.count("rope_q") && names.count("kv_write_k"));
  EXPECT_FALSE(names.count("rope_kv_write"));
}

TEST_F(FuseVariantTest, FusionKeepsTheFlopsAndSavesExactlyTheBytesItNoLongerMoves) {
  const Model model(c_, load_weights(c_, RandomWeights(21), be_), be_);
  auto totals = [&](FuseMode f) {
    Variants v;
    v.fuse = f;
    std::int64_t flops = 0, bytes = 0;
    for (const OpRecord& r : traced(model, be_, v))
      if (r.phase == Phase::kDecode) flops += r.flops, bytes += r.bytes;
    return std::pair{flops, bytes};
  };
  const auto [flops_none, bytes_none] = totals(FuseMode::kNone);
  const auto [flops_small, bytes_small] = totals(FuseMode::kSmall);
  EXPECT_EQ(flops_small, flops_none);
  // Decode step, batch 2: R = 2 rows. Per fused residual + norm one read of x (R x dim floats);
  // per rope_kv_write one read of k (R x kv_dim); per swiglu_down act's write and read (R x ffn)
  // less gate_up's extra half (R x ffn): R x ffn_dim floats.
  const std::int64_t R = 2, L = c_.n_layers;
  const std::int64_t saved = 4 * ((2 * L - 1) * R * c_.dim + L * R * c_.kv_dim() +
                                  2 * L * R * c_.ffn_dim);
  EXPECT_EQ(bytes_none - bytes_small, saved);
}

TEST_F(FuseVariantTest, BackendDefaultsEqualTheCpuOverrides) {
  // The defaults (what a backend without fused kernels runs) called on the CPU backend.
  const int rows = 3, dim = 733;
  const std::vector<float> weight = test::random_floats(dim, 1, 0.5f, 1.5f);
  const std::vector<float> proj = test::random_floats(rows * dim, 2);
  std::vector<float> x1 = test::random_floats(rows * dim, 3), x2 = x1, h1(rows * dim),
                     h2(rows * dim);
  be_.add_rmsnorm(x1.data(), proj.data(), h1.data(), weight.data(), rows, dim, 1e-5f);
  be_.Backend::add_rmsnorm(x2.data(), proj.data(), h2.data(), weight.data(), rows, dim, 1e-5f);
  EXPECT_EQ(x1, x2);
  EXPECT_EQ(h1, h2);

  RopeKvShape s;
  s.batch = 2, s.n_new = 3, s.past_len = 5, s.cache_seq = 9;
  s.n_heads = 4, s.n_kv_heads = 2, s.head_dim = 8;
  std::vector<std::int32_t> positions(s.rows());
  for (int r = 0; r < s.rows(); ++r) positions[r] = s.past_len + r % s.n_new;
  std::vector<float> qkv1 = test::random_floats(std::size_t(s.rows()) * s.qkv_dim(), 4),
                     qkv2 = qkv1;
  const std::size_t cache_n = std::size_t(s.batch) * s.cache_seq * s.kv_dim();
  std::vector<float> k1(cache_n, 7.0f), v1(cache_n, 7.0f), k2 = k1, v2 = v1;
  be_.rope_kv_write(qkv1.data(), k1.data(), v1.data(), positions.data(), s);
  be_.Backend::rope_kv_write(qkv2.data(), k2.data(), v2.data(), positions.data(), s);
  EXPECT_EQ(qkv1, qkv2);
  EXPECT_EQ(k1, k2);
  EXPECT_EQ(v1, v2);
  EXPECT_NE(k1, std::vector<float>(cache_n, 7.0f));
}

TEST_F(FuseVariantTest, DescribeAndParseNameTheFuseMode) {
  Variants v;
  v.fuse = FuseMode::kSmall;
  EXPECT_EQ(v.describe(), "fuse=small");
  EXPECT_FALSE(v.is_default());
  EXPECT_EQ(parse_fuse_mode("small"), FuseMode::kSmall);
  EXPECT_EQ(parse_fuse_mode("none"), FuseMode::kNone);
  EXPECT_FALSE(parse_fuse_mode("all").has_value());
  EXPECT_EQ(fuse_mode_name(FuseMode::kNone), "none");
}

}  // namespace
}  // namespace llmbench
