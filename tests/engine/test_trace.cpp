// Tracing of the forward pass: nesting (depth, parent) is consistent, every op lies inside its
// parent, op times inside a step add up to no more than the step and cover most of it, and the
// op counts are layers x steps. Also: tracing does not change the generated tokens.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>

#include "engine/model/cpu_backend.h"
#include "engine/model/model.h"
#include "engine/bench/prompts.h"
#include "engine/model/trace.h"

namespace llmbench {

namespace {

struct Traced {
  std::vector<OpRecord> records;
  std::vector<std::vector<std::int32_t>> tokens;
};

Traced run_traced(TraceLevel level, int decode_steps) {
  static CpuBackend be;
  ModelConfig c = *find_preset("tiny");
  c.dim = 256;  // big enough that ops take microseconds, not nanoseconds
  c.n_heads = 4;
  c.ffn_dim = 512;
  static Model m(c, load_weights(c, RandomWeights(2), be), be);
  Session s(m, 2, 32, 32 + decode_steps + 1);
  Tracer tracer(level, be.make_op_timer(TimerMode::kDevice), std::chrono::steady_clock::now());
  s.set_tracer(&tracer);
  Traced t;
  auto next = s.prefill(synthetic_prompts(2, 2, 32, c.vocab_size, true), 32);
  t.tokens.push_back(next);
  for (int i = 0; i < decode_steps; ++i) t.tokens.push_back(next = s.decode_step(next));
  t.records = tracer.records();
  return t;
}

}  // namespace

TEST(Trace, NestingIsConsistent) {
  const Traced t = run_traced(TraceLevel::kOps, 3);
  ASSERT_FALSE(t.records.empty());
  for (std::size_t i = 0; i < t.records.size(); ++i) {
    const OpRecord& r = t.records[i];
    if (r.parent < 0) {
      EXPECT_EQ(r.depth, 0) << r.name;
      EXPECT_EQ(r.category, OpCategory::kRange) << r.name;
      continue;
    }
    ASSERT_LT(std::size_t(r.parent), i) << "parents begin before their children";
    const OpRecord& p = t.records[std::size_t(r.parent)];
    EXPECT_EQ(r.depth, p.depth + 1) << r.name;
    EXPECT_GE(r.start_ns, p.start_ns) << r.name << " starts before its parent " << p.name;
    EXPECT_LE(r.start_ns + r.dur_ns, p.start_ns + p.dur_ns) << r.name << " ends after " << p.name;
    EXPECT_EQ(r.step, p.step);
    EXPECT_EQ(r.phase, p.phase);
    if (std::string(p.name) == "layer") {
      EXPECT_EQ(r.layer, p.layer) << r.name;
    }
    EXPECT_GE(r.dur_ns, 0);
  }
}

TEST(Trace, OpsAddUpToNoMoreThanTheirStepAndCoverMostOfIt) {
  const Traced t = run_traced(TraceLevel::kOps, 3);
  // Sum the leaf ops (not ranges) under each step range.
  std::map<std::size_t, std::int64_t> leaf_sum;
  for (const OpRecord& r : t.records) {
    if (r.category == OpCategory::kRange) continue;
    int top = r.parent;
    while (t.records[std::size_t(top)].parent >= 0) top = t.records[std::size_t(top)].parent;
    leaf_sum[std::size_t(top)] += r.dur_ns;
  }
  int steps = 0;
  for (std::size_t i = 0; i < t.records.size(); ++i) {
    const OpRecord& r = t.records[i];
    if (r.depth != 0) continue;
    ++steps;
    EXPECT_LE(leaf_sum[i], r.dur_ns) << r.name << " step " << r.step;
    EXPECT_GE(double(leaf_sum[i]), 0.7 * double(r.dur_ns))
        << r.name << " step " << r.step << ": ops cover too little of the step";
  }
  EXPECT_EQ(steps, 4);  // prefill + 3 decode steps
}

TEST(Trace, CountsAreLayersTimesSteps) {
  const Traced t = run_traced(TraceLevel::kOps, 3);
  std::map<std::string, int> count;
  for (const OpRecord& r : t.records) ++count[r.name];
  EXPECT_EQ(count["prefill"], 1);
  EXPECT_EQ(count["decode_step"], 3);
  for (const char* op : {"layer", "attn_norm", "qkv_proj", "rope_q", "rope_k", "kv_write_k",
                         "kv_write_v", "attention", "o_proj", "attn_residual", "ffn_norm",
                         "gate_up_proj", "swiglu", "down_proj", "ffn_residual"})
    EXPECT_EQ(count[op], 2 * 4) << op;  // tiny has 2 layers; 4 forward passes
  for (const char* op : {"embedding", "lm_head", "argmax", "tokens_to_host", "final_norm"})
    EXPECT_EQ(count[op], 4) << op;
  EXPECT_EQ(count["qkv_bias"], 0);  // tiny has no q/k/v bias
}

TEST(Trace, StepsLevelRecordsOnlyStepRanges) {
  const Traced t = run_traced(TraceLevel::kSteps, 2);
  ASSERT_EQ(t.records.size(), 3u);
  EXPECT_STREQ(t.records[0].name, "prefill");
  EXPECT_STREQ(t.records[1].name, "decode_step");
  EXPECT_EQ(t.records[2].step, 2);
}

TEST(Trace, TracingDoesNotChangeTokens) {
  EXPECT_EQ(run_traced(TraceLevel::kOps, 4).tokens, run_traced(TraceLevel::kSteps, 4).tokens);
}

TEST(Trace, GemmWorkIsAnalytic) {
  const Traced t = run_traced(TraceLevel::kOps, 1);
  for (const OpRecord& r : t.records)
    if (std::string(r.name) == "qkv_proj" && r.phase == Phase::kPrefill) {
      // R = 2 x 32 rows, qkv_dim = 256 + 2 x 128 (2 kv heads of 64), k = 256
      EXPECT_EQ(r.flops, 2LL * 64 * 512 * 256);
      EXPECT_EQ(r.bytes, 4LL * (64 * 256 + 512 * 256 + 64 * 512));
      return;
    }
  FAIL() << "no prefill qkv_proj record";
}

}  // namespace llmbench
