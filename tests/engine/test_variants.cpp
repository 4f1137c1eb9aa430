// Engine variants (engine/model/variants.h) on the tiny preset: every combination of --qkv x
// --kv-cache x --logits generates the same greedy tokens as the defaults, with logits within
// 1e-4 of max |logit|, over a prefill and several decode steps, for batch 1 and for 3 distinct
// prompts; the paged caches use a block size that divides neither the prompt length nor any
// later length. Also: repeated requests on one Session (the paged free list and the concat
// buffers are reset), each variant's ops traced under their own names, the host-nosync timer
// leaving tokens alone, and --decode-attention streamed giving tiled's logits on the CPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <string>

#include "engine/model/cpu_backend.h"
#include "engine/model/memory.h"
#include "engine/model/model.h"
#include "engine/bench/prompts.h"
#include "tests/engine/generation.h"

namespace llmbench {
namespace {

constexpr int kPromptLen = 11;   // not a multiple of kBlock
constexpr int kBlock = 4;        // paged caches: blocks of 4 tokens
constexpr int kDecodeSteps = 6;  // lengths 12..17: crosses the block boundaries at 12 and 16
constexpr double kLogitRelTol = 1e-4;

using test::Generation;

// Prefill, then kDecodeSteps greedy steps, on `session`.
Generation generate(Session& s, const std::vector<std::int32_t>& prompt) {
  return test::generate(s, prompt, kPromptLen, kDecodeSteps);
}

std::vector<Variants> every_combination() { return test::every_variant_combination(kBlock); }

double top2_margin(const std::vector<float>& logits, int vocab, int row) {
  std::vector<float> r(logits.begin() + std::ptrdiff_t(row) * vocab,
                       logits.begin() + std::ptrdiff_t(row + 1) * vocab);
  std::partial_sort(r.begin(), r.begin() + 2, r.end(), std::greater<float>());
  return double(r[0]) - double(r[1]);
}

void expect_same(const Generation& got, const Generation& ref, int vocab, const std::string& what) {
  ASSERT_EQ(got.logits.size(), ref.logits.size()) << what;
  for (std::size_t stage = 0; stage < ref.logits.size(); ++stage) {
    const auto& a = got.logits[stage];
    const auto& b = ref.logits[stage];
    ASSERT_EQ(a.size(), b.size()) << what;
    double scale = 0, worst = 0;
    for (float x : b) scale = std::max(scale, double(std::fabs(x)));
    for (std::size_t i = 0; i < a.size(); ++i) {
      const double d = std::isfinite(a[i]) ? std::fabs(double(a[i]) - b[i]) : INFINITY;
      worst = std::max(worst, d);
    }
    const double tol = kLogitRelTol * scale;
    EXPECT_LE(worst, tol) << what << ", stage " << stage;
    // Equal tokens follow from close logits only away from near-ties: a tie is a bad seed.
    for (int row = 0; row < int(b.size()) / vocab; ++row)
      ASSERT_GT(top2_margin(b, vocab, row), 2 * tol) << what << ", stage " << stage << ": near-tie";
    ASSERT_EQ(got.tokens[stage], ref.tokens[stage]) << what << ", stage " << stage;
  }
}

class VariantsTest : public testing::Test {
 protected:
  VariantsTest()
      : c_(*find_preset("tiny")), model_(c_, load_weights(c_, RandomWeights(21), be_), be_) {}
  CpuBackend be_;
  ModelConfig c_;
  Model model_;
};

TEST_F(VariantsTest, EveryCombinationGeneratesTheDefaultTokens) {
  for (const int batch : {1, 3}) {
    const auto prompt = synthetic_prompts(21, batch, kPromptLen, c_.vocab_size, true);
    const int max_len = kPromptLen + kDecodeSteps;
    Session fast(model_, batch, kPromptLen, max_len);
    const Generation ref = generate(fast, prompt);
    for (const Variants& v : every_combination()) {
      Session s(model_, batch, kPromptLen, max_len, v);
      expect_same(generate(s, prompt), ref, c_.vocab_size,
                  "batch " + std::to_string(batch) + " [" + v.describe() + "]");
    }
  }
}

// Within one quantised dtype (--dtype int8|int4), every variant still generates the default's
// tokens: the variants change only how activations and the KV cache move, never the weights.
TEST_F(VariantsTest, EveryCombinationGeneratesTheDefaultTokensQuantised) {
  for (const DType t : {DType::kInt8, DType::kInt4}) {
    const Model model(c_, load_weights(c_, RandomWeights(21), be_, t), be_);
    for (const int batch : {1, 3}) {
      const auto prompt = synthetic_prompts(21, batch, kPromptLen, c_.vocab_size, true);
      const int max_len = kPromptLen + kDecodeSteps;
      Session fast(model, batch, kPromptLen, max_len);
      const Generation ref = generate(fast, prompt);
      for (const Variants& v : every_combination()) {
        Session s(model, batch, kPromptLen, max_len, v);
        expect_same(generate(s, prompt), ref, c_.vocab_size,
                    std::string(dtype_name(t)) + " batch " + std::to_string(batch) + " [" +
                        v.describe() + "]");
      }
    }
  }
}

// --decode-attention picks a CUDA kernel; the CPU backend runs its one attention for both, so
// every combination gives tiled's tokens and logits bit for bit.
TEST_F(VariantsTest, DecodeAttentionStreamedRunsTheTiledTokensOnTheCpu) {
  for (const int batch : {1, 3}) {
    const auto prompt = synthetic_prompts(23, batch, kPromptLen, c_.vocab_size, true);
    const int max_len = kPromptLen + kDecodeSteps;
    for (Variants v : every_combination()) {
      Session tiled(model_, batch, kPromptLen, max_len, v);
      const Generation ref = generate(tiled, prompt);
      v.decode_attention = DecodeAttention::kStreamed;
      Session streamed(model_, batch, kPromptLen, max_len, v);
      const Generation got = generate(streamed, prompt);
      EXPECT_EQ(got.tokens, ref.tokens) << v.describe();
      EXPECT_EQ(got.logits, ref.logits) << v.describe();
    }
  }
}

TEST_F(VariantsTest, RepeatedRequestsOnOneSessionRepeatTheirTokens) {
  // run_case reuses one Session for warm-up, measured and traced repetitions: each prefill
  // must start from an empty cache (concat buffers dropped, paged blocks all free again).
  const auto prompt = synthetic_prompts(22, 3, kPromptLen, c_.vocab_size, true);
  for (const Variants& v : every_combination()) {
    Session s(model_, 3, kPromptLen, kPromptLen + kDecodeSteps, v);
    const Generation first = generate(s, prompt);
    const Generation second = generate(s, prompt);
    EXPECT_EQ(second.tokens, first.tokens) << v.describe();
    EXPECT_EQ(second.logits, first.logits) << v.describe();
  }
}

// The names of the ops a traced prefill + one decode step records.
std::set<std::string> traced_names(const Model& m, Backend& be, const Variants& v) {
  const ModelConfig& c = m.config();
  Tracer tracer(TraceLevel::kOps, be.make_op_timer(v.timer), std::chrono::steady_clock::now());
  Session s(m, 2, kPromptLen, kPromptLen + 1, v);
  s.set_tracer(&tracer);
  const auto next = s.prefill(synthetic_prompts(1, 2, kPromptLen, c.vocab_size, true), kPromptLen);
  s.decode_step(next);
  std::set<std::string> names;
  for (const OpRecord& r : tracer.records()) {
    names.insert(r.name);
    EXPECT_GE(r.dur_ns, 0) << r.name;
  }
  return names;
}

TEST_F(VariantsTest, EachVariantTracesItsOwnOps) {
  const std::set<std::string> variant_ops = {
      "permute_q",        "permute_k",        "permute_v",      "permute_out",
      "kv_concat_k",      "kv_concat_v",      "kv_write_paged_k", "kv_write_paged_v",
      "kv_gather_k",      "kv_gather_v",      "paged_attention", "block_table_to_device",
      "logits_to_host",   "argmax_host"};
  const auto fast = traced_names(model_, be_, Variants{});
  for (const auto& name : variant_ops) EXPECT_FALSE(fast.count(name)) << name;
  for (const char* name : {"kv_write_k", "kv_write_v", "attention", "argmax", "tokens_to_host"})
    EXPECT_TRUE(fast.count(name)) << name;

  auto expect_ops = [&](const Variants& v, std::set<std::string> present,
                        std::set<std::string> absent) {
    const auto names = traced_names(model_, be_, v);
    for (const auto& n : present) EXPECT_TRUE(names.count(n)) << v.describe() << ": " << n;
    for (const auto& n : absent) EXPECT_FALSE(names.count(n)) << v.describe() << ": " << n;
  };
  Variants naive;
  naive.qkv = QkvLayout::kPermute;
  naive.kv_cache = KvCacheKind::kConcat;
  naive.logits = LogitsMode::kAll;
  naive.timer = TimerMode::kHostNoSync;
  expect_ops(naive,
             {"permute_q", "permute_k", "permute_v", "permute_out", "kv_concat_k", "kv_concat_v",
              "attention", "logits_to_host", "argmax_host"},
             {"kv_write_k", "gather_last", "argmax", "tokens_to_host"});
  Variants paged;
  paged.kv_cache = KvCacheKind::kPaged;
  paged.logits = LogitsMode::kLast;
  expect_ops(paged,
             {"block_table_to_device", "kv_write_paged_k", "kv_write_paged_v", "paged_attention",
              "gather_last", "logits_to_host", "argmax_host"},
             {"attention", "kv_gather_k", "permute_q", "argmax"});
  Variants gather;
  gather.kv_cache = KvCacheKind::kPagedGather;
  expect_ops(gather, {"kv_write_paged_k", "kv_gather_k", "kv_gather_v", "attention"},
             {"paged_attention"});
}

TEST_F(VariantsTest, DescribeNamesOnlyTheNonDefaults) {
  EXPECT_EQ(Variants{}.describe(), "");
  EXPECT_TRUE(Variants{}.is_default());
  Variants v;
  v.kv_cache = KvCacheKind::kPaged;
  v.kv_cache_block = 8;
  v.timer = TimerMode::kHostNoSync;
  EXPECT_EQ(v.describe(), "kv_cache=paged/8 timer=host-nosync");
  Variants streamed;
  streamed.decode_attention = DecodeAttention::kStreamed;
  EXPECT_EQ(streamed.describe(), "decode_attention=streamed");
  EXPECT_FALSE(streamed.is_default());
  EXPECT_EQ(decode_attention_name(DecodeAttention::kTiled), "tiled");
  for (const DecodeAttention k : {DecodeAttention::kTiled, DecodeAttention::kStreamed})
    EXPECT_TRUE(parse_decode_attention(decode_attention_name(k)) == k);
  EXPECT_FALSE(parse_decode_attention("Streamed").has_value());
  Variants half_cache;
  half_cache.kv_dtype = KvDtype::kFp16;
  EXPECT_EQ(half_cache.describe(), "kv_cache_dtype=fp16");
  for (const KvDtype k : {KvDtype::kFp32, KvDtype::kFp16})
    EXPECT_TRUE(parse_kv_dtype(kv_dtype_name(k)) == k);
  EXPECT_FALSE(parse_kv_dtype("bf16").has_value());
  EXPECT_EQ(kv_dtype_bytes(KvDtype::kFp16), 2);
  Variants block_only;
  block_only.kv_cache_block = 8;  // meaningless without a paged cache
  EXPECT_TRUE(block_only.is_default());
}

TEST_F(VariantsTest, MemoryEstimateCountsTheVariantsBuffers) {
  const auto base = estimate_memory(c_, DType::kFp32, 4, 100, 101);
  Variants all;
  all.logits = LogitsMode::kAll;
  // All 400 rows of logits on the device and their host copy, instead of 4 rows.
  EXPECT_EQ(estimate_memory(c_, DType::kFp32, 4, 100, 101, all).activation_bytes -
                base.activation_bytes,
            (2 * 400 - 4) * std::int64_t(c_.vocab_size) * 4);
  Variants paged;
  paged.kv_cache = KvCacheKind::kPaged;
  paged.kv_cache_block = 16;  // 101 positions round up to 7 blocks of 16 = 112
  EXPECT_EQ(estimate_memory(c_, DType::kFp32, 4, 100, 101, paged).kv_cache_bytes,
            base.kv_cache_bytes / 101 * 112);
}

}  // namespace
}  // namespace llmbench
