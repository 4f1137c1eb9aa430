// --kv-cache-dtype fp16 (engine/model/variants.h) on the CPU backend, tiny preset: the forward over a
// cache of halves stays within rounding of the fp32 forward (teacher-forced on the fp32 tokens,
// KL per position, top-1 agreement), --fuse small gives the same logits bit for bit as the
// unfused fp16 path, the caches other than prealloc over fused rows refuse it, and every count
// that feeds a metric (traced op bytes, decode-step bytes for MBU, KV memory) counts 2 bytes a
// cached element.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "engine/bench/metrics.h"
#include "engine/bench/prompts.h"
#include "engine/model/cpu_backend.h"
#include "engine/model/kv_cache.h"
#include "engine/model/memory.h"
#include "engine/model/model.h"
#include "engine/model/op_work.h"
#include "kernels/common/error.h"
#include "tests/engine/logit_closeness.h"

namespace llmbench {
namespace {

// Prefill (kPromptLen rows: the GEMM attention) and kSteps decode steps fed `feed` (the fp32
// run's greedy tokens; empty: this run's own), every stage's logits and greedy tokens.
test::Pass forced_pass(const Model& m, const Variants& v, const std::vector<std::int32_t>& prompt,
                       const std::vector<std::vector<std::int32_t>>& feed) {
  Session s(m, test::kBatch, test::kPromptLen, test::kPromptLen + test::kSteps, v);
  test::Pass r;
  std::vector<std::int32_t> next = s.prefill(prompt, test::kPromptLen);
  for (int i = 0;; ++i) {
    r.tokens.push_back(next);
    r.logits.push_back(s.last_logits());
    if (i == test::kSteps) break;
    next = s.decode_step(feed.empty() ? next : feed[std::size_t(i)]);
  }
  return r;
}

class KvDtypeTest : public testing::Test {
 protected:
  KvDtypeTest() : c_(*find_preset("tiny")) {}
  CpuBackend be_;
  ModelConfig c_;
};

TEST_F(KvDtypeTest, Fp16CacheStaysWithinRoundingOfTheFp32Forward) {
  for (const unsigned seed : {1u, 2u, 3u}) {
    const Model m(c_, load_weights(c_, RandomWeights(seed), be_), be_);
    const auto prompt = synthetic_prompts(seed, test::kBatch, test::kPromptLen, c_.vocab_size, true);
    const test::Pass ref = forced_pass(m, Variants{}, prompt, {});
    Variants half;
    half.kv_dtype = KvDtype::kFp16;
    const test::Pass got = forced_pass(m, half, prompt, ref.tokens);
    const test::Closeness cl = test::compare(ref, got, c_.vocab_size);
    EXPECT_LT(cl.max_kl, 1e-5) << "seed " << seed;
    EXPECT_GT(cl.max_kl, 0.0) << "seed " << seed << ": identical to fp32, nothing was rounded";
    EXPECT_GE(cl.agree, cl.positions * 9 / 10) << "seed " << seed;
    // The prefill reads the cache it has just written, so even its logits see the rounding.
    EXPECT_NE(got.logits[0], ref.logits[0]) << "seed " << seed;
    half.fuse = FuseMode::kSmall;
    const test::Pass fused = forced_pass(m, half, prompt, ref.tokens);
    EXPECT_EQ(fused.logits, got.logits) << "seed " << seed;
  }
}

TEST_F(KvDtypeTest, OnlyThePreallocCacheOverFusedRowsTakesHalves) {
  const Model m(c_, load_weights(c_, RandomWeights(4), be_), be_);
  Variants v;
  v.kv_dtype = KvDtype::kFp16;
  EXPECT_NO_THROW(check_kv_dtype(v));
  EXPECT_NO_THROW(Session(m, 1, 4, 8, v));
  for (const KvCacheKind kind :
       {KvCacheKind::kConcat, KvCacheKind::kPaged, KvCacheKind::kPagedGather}) {
    Variants bad = v;
    bad.kv_cache = kind;
    EXPECT_THROW(check_kv_dtype(bad), BadInput) << kv_cache_kind_name(kind);
    EXPECT_THROW(Session(m, 1, 4, 8, bad), BadInput) << kv_cache_kind_name(kind);
  }
  Variants permute = v;
  permute.qkv = QkvLayout::kPermute;
  EXPECT_THROW(check_kv_dtype(permute), BadInput);
  Variants ragged = v;  // a ragged case's pool takes halves (engine/model/ragged_forward.h)
  ragged.output_len_stddev = 4;
  EXPECT_NO_THROW(check_kv_dtype(ragged));
}

TEST_F(KvDtypeTest, EveryCountThatFeedsAMetricTakesTwoBytesACachedElement) {
  const Model m(c_, load_weights(c_, RandomWeights(5), be_), be_);
  for (const FuseMode fuse : {FuseMode::kNone, FuseMode::kSmall}) {
    Variants v;
    v.kv_dtype = KvDtype::kFp16;
    v.fuse = fuse;
    const int B = 2, P = 6;
    Tracer tracer(TraceLevel::kOps, be_.make_op_timer(v.timer), std::chrono::steady_clock::now());
    Session s(m, B, P, P + 1, v);
    s.set_tracer(&tracer);
    s.decode_step(s.prefill(synthetic_prompts(1, B, P, c_.vocab_size, true), P));
    const std::int64_t kv_elems = std::int64_t(B) * c_.kv_dim();  // a decode step's new k (or v)
    int attention = 0, writes = 0;
    for (const OpRecord& r : tracer.records()) {
      const std::string name = r.name;
      if (name == "attention" && r.layer == 0) {
        const bool decode = attention++ == 1;  // the prefill's, then the step's
        const Work w = decode ? attention_work(c_, B, 1, P, 2) : attention_work(c_, B, P, 0, 2);
        EXPECT_EQ(r.bytes, w.bytes) << (decode ? "decode" : "prefill");
        EXPECT_LT(r.bytes, (decode ? attention_work(c_, B, 1, P) : attention_work(c_, B, P, 0)).bytes);
      }
      if ((name == "kv_write_k" || name == "kv_write_v") && r.layer == 0 && ++writes > 2) {
        EXPECT_EQ(r.bytes, (4 + 2) * kv_elems);  // the decode step's: fp32 read, halves written
      }
      if (name == "rope_kv_write" && r.layer == 0) ++writes;
    }
    EXPECT_EQ(attention, 2);
    EXPECT_EQ(writes, fuse == FuseMode::kSmall ? 2 : 4) << fuse_mode_name(fuse);
  }
  Variants half;
  half.kv_dtype = KvDtype::kFp16;
  EXPECT_EQ(2 * KvCache::max_bytes(c_, 3, 40, half), KvCache::max_bytes(c_, 3, 40, Variants{}));
  // The memory check: half the cache, plus the prefill's widened keys and values (3 x 30 rows).
  const MemoryEstimate m32 = estimate_memory(c_, DType::kFp32, 3, 30, 40);
  const MemoryEstimate m16 = estimate_memory(c_, DType::kFp32, 3, 30, 40, half);
  EXPECT_EQ(2 * m16.kv_cache_bytes, m32.kv_cache_bytes);
  EXPECT_EQ(m16.activation_bytes - m32.activation_bytes, 2 * 3 * 30 * c_.kv_dim() * 4);
  // MBU's bytes: the same weights, half the cache.
  const std::int64_t w = c_.decode_weight_bytes(3, DType::kFp32);
  EXPECT_EQ(2 * (decode_step_bytes(c_, 3, 9, DType::kFp32, 2) - w),
            decode_step_bytes(c_, 3, 9, DType::kFp32) - w);
  EXPECT_EQ(case_cost(c_, 3, 9, 4, DType::kFp32, 2).decode_bytes.back(),
            decode_step_bytes(c_, 3, 11, DType::kFp32, 2));
}

}  // namespace
}  // namespace llmbench
