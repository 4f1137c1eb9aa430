// Metric arithmetic from synthetic timings, with exact expected values, and the analytic
// FLOP and byte counts against hand-computed numbers.
#include <gtest/gtest.h>

#include "engine/model/config.h"
#include "engine/bench/metrics.h"
#include "engine/bench/read_probe.h"
#include "kernels/common/error.h"

namespace llmbench {

namespace {

ModelConfig toy() {
  ModelConfig c;
  c.name = "toy";
  c.dim = 8;
  c.n_layers = 2;
  c.n_heads = 2;
  c.n_kv_heads = 1;
  c.ffn_dim = 16;
  c.vocab_size = 10;
  c.max_seq_len = 64;
  return c;
}

}  // namespace

TEST(Cost, ParameterCountsByHand) {
  const ModelConfig c = toy();  // head_dim 4, q_dim 8, kv_dim 4
  // q 8x8 + k 4x8 + v 4x8 + o 8x8 + gate/up/down 3 x 8x16 = 64+32+32+64+384
  EXPECT_EQ(c.layer_matmul_params(), 576);
  EXPECT_EQ(c.layer_params(), 576 + 16);
  // embedding 80 + 2 layers + final norm 8 + untied head 80
  EXPECT_EQ(c.total_params(), 80 + 2 * 592 + 8 + 80);
}

TEST(Cost, PrefillFlopsByHand) {
  const ModelConfig c = toy();
  // B=3, P=5: matmul 2*2*576*15 = 34560; head 2*10*8*3 = 480;
  // attention 2 * layers(2) * B(3) * heads(2) * head_dim(4) * P(5) * (P+1)(6) = 2880
  EXPECT_EQ(prefill_flops(c, 3, 5), 34560 + 480 + 2880);
}

TEST(Cost, DecodeBytesByHand) {
  const ModelConfig c = toy();
  // weights: 2*592 + 8 + embedding-as-head 80 + gathered rows 3*8 = 1296 params * 4 bytes
  // KV: 2 * layers 2 * B 3 * kv_dim 4 * (past 5 + 1) * 4 bytes = 1152
  EXPECT_EQ(decode_step_bytes(c, 3, 5, DType::kFp32), 1296 * 4 + 1152);
  ModelConfig tied = c;
  tied.tied_embeddings = true;  // the head is the embedding; gathered rows are not extra
  EXPECT_EQ(tied.decode_weight_bytes(3, DType::kFp32), (2 * 592 + 8 + 80) * 4);
  const CaseCost cost = case_cost(c, 3, 5, 4, DType::kFp32);
  ASSERT_EQ(cost.decode_bytes.size(), 3u);
  EXPECT_EQ(cost.decode_bytes[0], decode_step_bytes(c, 3, 5, DType::kFp32));
  EXPECT_EQ(cost.decode_bytes[2], decode_step_bytes(c, 3, 7, DType::kFp32));
}

TEST(Cost, HalfWeightBytesByHand) {
  const ModelConfig c = toy();
  // Norm weights stay fp32: 2 layers x 2 x 8 + final 8 = 40 params; the rest are matrices.
  EXPECT_EQ(c.vector_params(), 40);
  const std::int64_t matrices = 80 + 2 * 576 + 80;
  EXPECT_EQ(c.weight_bytes(DType::kFp32), c.total_params() * 4);
  EXPECT_EQ(c.weight_bytes(DType::kBf16), matrices * 2 + 40 * 4);
  EXPECT_EQ(c.weight_bytes(DType::kFp16), c.weight_bytes(DType::kBf16));
  // Decode: matrices 2*576 + head 80 + gathered rows 3*8 at 2 bytes, 40 norm params at 4,
  // and the KV cache at 4 bytes whatever the weights' dtype (1152 as above).
  EXPECT_EQ(decode_step_bytes(c, 3, 5, DType::kBf16), (2 * 576 + 80 + 24) * 2 + 40 * 4 + 1152);
  ModelConfig qwen = c;
  qwen.qkv_bias = true;  // + 2 layers x qkv_dim 16 of fp32 biases
  EXPECT_EQ(qwen.vector_params(), 40 + 32);
  EXPECT_EQ(qwen.weight_bytes(DType::kFp16), matrices * 2 + 72 * 4);
}

TEST(Cost, QuantisedWeightBytesCountBlocksAndScales) {
  const ModelConfig c = toy();
  // The quantised matrices: 2 layers x 576 + the LM head 80 = 1232 weights = 38.5 blocks of 32:
  // int8 34 bytes a block (32 values + an fp16 scale), int4 18 (16 bytes of nibbles + the
  // scale), the half block counted at its share (1232 * 34 / 32 = 1309, * 18 / 32 = 693). The
  // embedding table (80) and the 40 norm params stay fp32.
  EXPECT_EQ(c.weight_bytes(DType::kInt8), 1309 + (80 + 40) * 4);
  EXPECT_EQ(c.weight_bytes(DType::kInt4), 693 + (80 + 40) * 4);
  // Decode streams the same 1232 quantised weights, 3 gathered fp32 embedding rows of 8, the
  // fp32 norms and the KV cache (1152).
  EXPECT_EQ(decode_step_bytes(c, 3, 5, DType::kInt8), 1309 + (24 + 40) * 4 + 1152);
  EXPECT_EQ(decode_step_bytes(c, 3, 5, DType::kInt4), 693 + (24 + 40) * 4 + 1152);
  // Tied: the head is a quantised copy of the embedding, which stays fp32 beside it.
  ModelConfig tied = c;
  tied.tied_embeddings = true;
  EXPECT_EQ(tied.weight_bytes(DType::kInt8), c.weight_bytes(DType::kInt8));
  EXPECT_EQ(tied.decode_weight_bytes(3, DType::kInt8), c.decode_weight_bytes(3, DType::kInt8));
}

TEST(Metrics, ExactValuesFromSyntheticTimings) {
  CaseCost cost;
  cost.prefill_flops = 4'000'000'000;          // 4 GFLOP
  cost.decode_bytes = {1'000'000, 3'000'000};  // two decode steps
  std::vector<RepSample> samples = {
      {10'000'000, {2'000'000, 4'000'000}},  // ttft 10 ms; e2e 16 ms
      {20'000'000, {2'000'000, 2'000'000}},  // ttft 20 ms; e2e 24 ms
      {30'000'000, {4'000'000, 6'000'000}},  // ttft 30 ms; e2e 40 ms
  };
  Peaks peaks{10.0, 0.5, "test"};
  const CaseMetrics m = compute_metrics(/*batch=*/4, /*prompt_len=*/100, /*new=*/3, cost, samples, peaks);
  EXPECT_EQ(m.repetitions, 3);
  EXPECT_DOUBLE_EQ(m.ttft_ms.percentile(50), 20.0);
  EXPECT_DOUBLE_EQ(m.ttft_ms.mean, 20.0);
  EXPECT_DOUBLE_EQ(m.ttft_ms.percentile(90), 28.0);
  EXPECT_DOUBLE_EQ(m.e2e_ms.percentile(50), 24.0);
  // TPOT samples {2,4,2,2,4,6} ms: mean 10/3, p50 3, p90 5, p99 5.9
  EXPECT_DOUBLE_EQ(m.tpot_ms->mean, 20.0 / 6.0);
  EXPECT_DOUBLE_EQ(m.tpot_ms->percentile(50), 3.0);
  EXPECT_DOUBLE_EQ(m.tpot_ms->percentile(90), 5.0);
  EXPECT_NEAR(m.tpot_ms->percentile(99), 5.9, 1e-12);
  EXPECT_DOUBLE_EQ(m.prefill_tok_s, 4 * 100 / 0.020);        // 20000
  EXPECT_DOUBLE_EQ(m.throughput_tok_s, 4 * 3 / 0.024);       // 500
  EXPECT_DOUBLE_EQ(*m.decode_tok_s, 4 / (20.0 / 6.0 / 1e3));  // 1200
  EXPECT_DOUBLE_EQ(m.prefill_tflops, 4e9 / 0.020 / 1e12);    // 0.2
  EXPECT_DOUBLE_EQ(m.mfu, 0.2 / 0.5);
  // Bytes: 3 reps x (1 + 3) MB = 12 MB over 20 ms of decode = 0.6 GB/s; MBU = 0.06
  EXPECT_DOUBLE_EQ(*m.decode_gbps, 12e6 / 0.020 / 1e9);
  EXPECT_DOUBLE_EQ(*m.mbu, 0.6 / 10.0);
}

TEST(Metrics, SingleTokenHasNoTpotOrMbu) {
  CaseCost cost;
  cost.prefill_flops = 1000;
  const CaseMetrics m = compute_metrics(16, 128, 1, cost, {{5'000'000, {}}}, Peaks{20, 1, "t"});
  EXPECT_FALSE(m.tpot_ms.has_value());
  EXPECT_FALSE(m.mbu.has_value());
  EXPECT_FALSE(m.decode_tok_s.has_value());
  EXPECT_DOUBLE_EQ(m.e2e_ms.percentile(50), 5.0);
  EXPECT_DOUBLE_EQ(m.throughput_tok_s, 16 / 0.005);
}

// The read roof beside a case: MBU divides by the larger probe; the check flags a probe more
// than 10% from the roofline, and a probe that moved more than 10% across the case.
TEST(CaseRoof, MbuDividesByTheLargerProbeAndTheCheckFlagsBeyondTenPercent) {
  CaseMetrics m;
  m.decode_gbps = 20.0;
  m.mbu = 20.0 / 50.0;  // against the cached roofline
  Peaks peaks{50.0, 0.5, "cache"};
  CaseRoof r = apply_case_roof(m, peaks, 38.0, 40.0);
  EXPECT_DOUBLE_EQ(r.mbu_peak_gbps, 40.0);
  EXPECT_DOUBLE_EQ(*m.mbu, 0.5);
  EXPECT_DOUBLE_EQ(r.reference_gbps, 50.0);
  EXPECT_DOUBLE_EQ(r.mfu_peak_tflops, 0.5);
  EXPECT_EQ(*roof_check(r, m), "probe -20% vs roofline");  // 40 / 50; 40 / 38 moved 5%: fine
  r = apply_case_roof(m, peaks, 46.0, 52.0);              // +4% vs roofline; moved +13%
  EXPECT_EQ(*roof_check(r, m), "probe moved +13%");
  r = apply_case_roof(m, peaks, 60.0, 45.0);  // 60 / 50 = +20%; 45 / 60 = -25%
  EXPECT_EQ(*roof_check(r, m), "probe +20% vs roofline; probe moved -25%");
  EXPECT_DOUBLE_EQ(*m.mbu, 20.0 / 60.0);
  r = apply_case_roof(m, peaks, 50.0, 55.0);  // exactly 10% is not more than 10%
  EXPECT_EQ(*roof_check(r, m), "ok");
  // --peak-bw-gbps: the given figure stays the denominator; the probe is still checked.
  peaks.bandwidth_given = true;
  r = apply_case_roof(m, peaks, 30.0, 30.0);
  EXPECT_DOUBLE_EQ(r.mbu_peak_gbps, 50.0);
  EXPECT_DOUBLE_EQ(*m.mbu, 0.4);
  EXPECT_EQ(*roof_check(r, m), "probe -40% vs roofline");
  // No probe (a case without decode steps): the reference, and no check.
  peaks.bandwidth_given = false;
  CaseMetrics prefill_only;
  r = apply_case_roof(prefill_only, peaks, std::nullopt, std::nullopt);
  EXPECT_DOUBLE_EQ(r.mbu_peak_gbps, 50.0);
  EXPECT_FALSE(prefill_only.mbu.has_value());
  EXPECT_FALSE(roof_check(r, prefill_only).has_value());
}

// The compute roof beside a case: MFU divides by the larger of the GEMM probes and the cached
// peak; a probe more than 10% above the cache marks the cache stale; a utilisation above 1 is
// named, whatever its cause.
TEST(CaseRoof, MfuDividesByTheLargerOfProbeAndCacheAndAboveOneIsNamed) {
  CaseMetrics m;
  m.prefill_tflops = 0.15;
  Peaks peaks{50.0, 0.08, "cache"};  // a cached peak measured on a busy machine
  CaseRoof r = apply_case_roof(m, peaks, std::nullopt, std::nullopt, 0.16, 0.18);
  EXPECT_DOUBLE_EQ(r.reference_tflops, 0.08);
  EXPECT_DOUBLE_EQ(r.mfu_peak_tflops, 0.18);
  EXPECT_DOUBLE_EQ(m.mfu, 0.15 / 0.18);
  EXPECT_TRUE(compute_peak_stale(r));
  EXPECT_EQ(*roof_check(r, m), "GEMM probe +125% vs cached peak");  // 0.18 / 0.08
  EXPECT_NE(roof_check_advice(*roof_check(r, m)).find("raised"), std::string::npos);
  // A probe below the cache (a busy minute, a small shape): the cache stays the denominator.
  r = apply_case_roof(m, peaks, std::nullopt, std::nullopt, 0.05, 0.06);
  EXPECT_DOUBLE_EQ(r.mfu_peak_tflops, 0.08);
  EXPECT_FALSE(compute_peak_stale(r));
  EXPECT_DOUBLE_EQ(m.mfu, 0.15 / 0.08);
  EXPECT_EQ(*roof_check(r, m), "MFU 1.88 > 1");
  EXPECT_NE(roof_check_advice(*roof_check(r, m)).find("llmbench roofline"), std::string::npos);
  // Exactly 10% above is not stale.
  r = apply_case_roof(m, peaks, std::nullopt, std::nullopt, 0.088, std::nullopt);
  EXPECT_FALSE(compute_peak_stale(r));
  // --peak-tflops: the given figure stays the denominator.
  peaks.tflops_given = true;
  r = apply_case_roof(m, peaks, std::nullopt, std::nullopt, 0.3, 0.3);
  EXPECT_DOUBLE_EQ(r.mfu_peak_tflops, 0.08);
  // MBU above 1 is named too, beside the read check.
  CaseMetrics d;
  d.decode_gbps = 60.0;
  Peaks bw{50.0, 1.0, "cache"};
  bw.bandwidth_given = true;
  r = apply_case_roof(d, bw, 52.0, 53.0);
  EXPECT_EQ(*roof_check(r, d), "MBU 1.20 > 1");
  EXPECT_EQ(roof_check_advice("ok"), "");
}

TEST(Peaks, ForDtypePicksTheDtypesGemmPeak) {
  Peaks p{40.0, 0.2, "cache"};
  p.gemm_tflops = {{DType::kFp32, 0.2}, {DType::kBf16, 0.45}, {DType::kInt8, 0.9}};
  EXPECT_DOUBLE_EQ(p.for_dtype(DType::kBf16).tflops, 0.45);
  EXPECT_DOUBLE_EQ(p.for_dtype(DType::kInt8).tflops, 0.9);
  EXPECT_DOUBLE_EQ(p.for_dtype(DType::kInt4).tflops, 0.2);  // not measured: unchanged
  EXPECT_DOUBLE_EQ(p.for_dtype(DType::kBf16).bandwidth_gbps, 40.0);
}

TEST(ReadProbe, CpuProbeReadsItsBufferAndReportsBestAboveMedian) {
  const auto probe = make_read_probe("cpu", std::int64_t(8) << 20);
  EXPECT_EQ(probe->buffer_bytes(), std::int64_t(8) << 20);
  for (int i = 0; i < 2; ++i) {  // the second call reuses the buffer
    const ReadProbeResult r = probe->measure();
    EXPECT_GT(r.gbps_median, 0.0);
    EXPECT_GE(r.gbps_best, r.gbps_median);
    EXPECT_GT(r.seconds, 0.0);
  }
  EXPECT_THROW(make_read_probe("tpu"), BadInput);
}

}  // namespace llmbench
