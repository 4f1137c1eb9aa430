// The full forward pass on the CUDA backend against the CPU backend, its oracle: the same config
// and seeded random weights on both, prefill then greedy decode steps, fp32 logits within a
// stated tolerance and identical greedy tokens at every stage. Also on CUDA: bit-identical runs,
// bit-identical rows for identical prompts, CUDA-event tracing that nests and counts like the
// CPU's, and --sync-check changing nothing. The engine variants (--qkv, --kv-cache, --logits)
// on CUDA against the CPU's fast path, and the host-nosync timer. Every test skips
// (GTEST_SKIP) without a device.
// Not here: single ops (test_cuda_kernels.cpp) or timings (benchmarks and `llmbench` do those).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "engine/model/cpu_backend.h"
#include "engine/model/cuda_backend.h"
#include "engine/model/model.h"
#include "engine/bench/prompts.h"
#include "engine/serving/scheduler.h"
#include "engine/model/trace.h"
#include "kernels/cpu/matmul_half.h"
#include "tests/cuda/device_buffer.h"
#include "tests/cuda/forward_check.h"
#include "tests/engine/generation.h"
#include "tests/kernels/check.h"

namespace llmbench {
namespace {

using test::kLogitRelTol;
using test::max_abs;
using test::wide;

// CUDA event times: cudaEventElapsedTime returns float milliseconds with a documented resolution
// of about 0.5 us, and a record's start and duration are converted separately. Intervals read
// from one monotone clock nest exactly, so any excess is conversion error; 2 us per op is 4x
// the resolution and still far below a unit error (x1000) or an op counted twice.
constexpr std::int64_t kEventSlackNs = 2000;

constexpr int kDecodeSteps = 5;

ModelConfig tiny() { return *find_preset("tiny"); }

using test::Generation;

std::string stage_name(std::size_t stage) {
  return stage == 0 ? "prefill" : "decode step " + std::to_string(stage);
}

// Loads `seed`'s random weights on `be`, prefills `prompts` ([batch, prompt_len]) and runs
// `steps` greedy decode steps, each fed the tokens of the stage before. With a tracer, every
// op of every stage is recorded into it. The Session runs with `variants`.
Generation generate(Backend& be, const ModelConfig& c, std::uint64_t seed,
                    const std::vector<std::int32_t>& prompts, int batch, int prompt_len,
                    int steps, Tracer* tracer = nullptr, const Variants& variants = {},
                    DType dtype = DType::kFp32) {
  const Model model(c, load_weights(c, RandomWeights(seed), be, dtype), be);
  Session s(model, batch, prompt_len, prompt_len + steps, variants);
  s.set_tracer(tracer);
  return test::generate(s, prompts, prompt_len, steps);
}


// Largest logit minus the second largest in row `row`.
double top2_margin(const std::vector<float>& logits, int vocab, int row) {
  std::vector<float> r(logits.begin() + std::ptrdiff_t(row) * vocab,
                       logits.begin() + std::ptrdiff_t(row + 1) * vocab);
  std::partial_sort(r.begin(), r.begin() + 2, r.end(), std::greater<float>());
  return double(r[0]) - double(r[1]);
}

// `got` against `ref`, stage by stage: every logit within kLogitRelTol * max |ref logit| (NaN
// and Inf fail), and the same greedy tokens. A stage whose reference has a near-tie (top-2
// margin within twice the tolerance) is a bad choice of seed, not a backend fault: only a
// margin above 2 x tol makes equal tokens follow from close logits, so it is checked first.
void expect_same_generation(const Generation& got, const Generation& ref, int vocab,
                            const std::string& what) {
  ASSERT_EQ(got.logits.size(), ref.logits.size()) << what;
  for (std::size_t stage = 0; stage < ref.logits.size(); ++stage) {
    const std::vector<float>& a = got.logits[stage];
    const std::vector<float>& b = ref.logits[stage];
    ASSERT_EQ(a.size(), b.size()) << what << ", " << stage_name(stage);
    const double tol = kLogitRelTol * max_abs(b);
    double worst = 0;
    std::size_t at = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      const bool finite = std::isfinite(a[i]) && std::isfinite(b[i]);
      const double d = finite ? std::fabs(double(a[i]) - double(b[i])) : INFINITY;
      if (d > worst) {
        worst = d;
        at = i;
      }
    }
    EXPECT_LE(worst, tol) << what << ", " << stage_name(stage) << ": worst at row "
                          << at / vocab << " token " << at % vocab << ": " << a[at] << " vs "
                          << b[at];
    const int batch = int(b.size() / std::size_t(vocab));
    for (int row = 0; row < batch; ++row)
      ASSERT_GT(top2_margin(b, vocab, row), 2 * tol)
          << what << ", " << stage_name(stage) << ", row " << row
          << ": near-tie in the reference; pick another seed";
    ASSERT_EQ(got.tokens[stage], ref.tokens[stage]) << what << ", " << stage_name(stage);
  }
}

// Bit for bit: the same tokens and the same float bytes at every stage.
void expect_bit_identical(const Generation& a, const Generation& b, const std::string& what) {
  ASSERT_EQ(a.tokens, b.tokens) << what;
  ASSERT_EQ(a.logits.size(), b.logits.size()) << what;
  for (std::size_t stage = 0; stage < a.logits.size(); ++stage) {
    const std::vector<float>& x = a.logits[stage];
    const std::vector<float>& y = b.logits[stage];
    ASSERT_EQ(x.size(), y.size()) << what << ", " << stage_name(stage);
    for (std::size_t i = 0; i < x.size(); ++i)
      ASSERT_EQ(std::memcmp(&x[i], &y[i], sizeof(float)), 0)
          << what << ", " << stage_name(stage) << ", element " << i << ": " << x[i] << " vs "
          << y[i];
  }
}

class CudaForward : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!test::cuda_device_present()) GTEST_SKIP() << "no CUDA device";
  }
};

// Two distinct prompts (so a mix-up between sequences shows), prefill + 5 greedy decode steps.
void expect_cuda_matches_cpu(const ModelConfig& c, std::uint64_t seed, int prompt_len) {
  const int batch = 2;
  const auto prompts = synthetic_prompts(seed, batch, prompt_len, c.vocab_size, true);
  CpuBackend cpu;
  CudaBackend gpu;
  const Generation ref = generate(cpu, c, seed, prompts, batch, prompt_len, kDecodeSteps);
  const Generation got = generate(gpu, c, seed, prompts, batch, prompt_len, kDecodeSteps);
  expect_same_generation(got, ref, c.vocab_size, c.name + " seed " + std::to_string(seed));
}

}  // namespace

// Seeds are chosen so that no reference stage has a near-tie (see expect_same_generation): the
// smallest top-2 margin is 1.1e-2 (tiny) and 1.6e-2 (wide) of max |logit|, 50x+ the tolerance.
TEST_F(CudaForward, TinyMatchesCpu) { expect_cuda_matches_cpu(tiny(), 7, 7); }

TEST_F(CudaForward, WideGqaBiasTiedMatchesCpu) { expect_cuda_matches_cpu(wide(), 6, 19); }

TEST_F(CudaForward, SameSeedIsBitIdentical) {
  // cuBLAS promises bit-wise identical results run to run on one GPU model; the kernels use no
  // atomics, so the whole forward pass must be reproducible bit for bit.
  const ModelConfig c = wide();
  const auto prompts = synthetic_prompts(6, 2, 19, c.vocab_size, true);
  CudaBackend gpu;
  const Generation a = generate(gpu, c, 6, prompts, 2, 19, kDecodeSteps);
  const Generation b = generate(gpu, c, 6, prompts, 2, 19, kDecodeSteps);
  expect_bit_identical(a, b, "two runs");
}

TEST_F(CudaForward, BatchOfIdenticalPromptsEqualsBatchOne) {
  // The 16 rows are bit-identical to each other (every row goes through the same arithmetic).
  // Against batch 1 they agree within the CUDA-vs-CPU tolerance, not bit for bit: cuBLAS may
  // pick other kernels for 1 row than for 16, which sum in another order.
  const ModelConfig c = tiny();
  const int P = 13, B = 16;
  const std::size_t V = std::size_t(c.vocab_size);
  const auto one = synthetic_prompts(11, 1, P, c.vocab_size, false);
  const auto many = synthetic_prompts(11, B, P, c.vocab_size, false);
  CudaBackend gpu;
  const Generation r1 = generate(gpu, c, 11, one, 1, P, kDecodeSteps);
  const Generation rb = generate(gpu, c, 11, many, B, P, kDecodeSteps);
  Generation row0;  // rb's first row, as a batch-1 generation
  for (std::size_t stage = 0; stage < rb.logits.size(); ++stage) {
    const std::vector<float>& l = rb.logits[stage];
    for (int b = 1; b < B; ++b) {
      ASSERT_EQ(std::memcmp(l.data() + b * V, l.data(), V * sizeof(float)), 0)
          << stage_name(stage) << ": row " << b << " differs from row 0";
      ASSERT_EQ(rb.tokens[stage][b], rb.tokens[stage][0]) << stage_name(stage) << " row " << b;
    }
    row0.logits.emplace_back(l.begin(), l.begin() + std::ptrdiff_t(V));
    row0.tokens.push_back({rb.tokens[stage][0]});
  }
  expect_same_generation(row0, r1, c.vocab_size, "batch 16 row 0 vs batch 1");
}

// ---- bf16 / fp16 weights (--dtype): CUDA against the CPU's half path, its oracle ----
// Both round each GEMM's activations to the weight dtype (nearest even) and accumulate in fp32;
// they differ where an activation computed in another summation order lands on the other side
// of a rounding boundary: that element moves by one ulp of the dtype (2^-8 relative for bf16,
// 2^-11 for fp16), against fp32 sums that differ by ~1e-7. The tolerances below are that ulp
// times a few flipped elements per row carried through the layers: 1/64 of max |logit| for bf16,
// 1/512 for fp16 (8x finer, as the ulp is). Tokens must be equal where the reference's top-2
// margin exceeds twice the tolerance (there equal tokens follow from close logits).
double half_logit_rel_tol(DType t) { return t == DType::kBf16 ? 1.0 / 64 : 1.0 / 512; }

// KL(softmax(p) || softmax(q)) in nats.
double kl_divergence(const float* p, const float* q, int n) {
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

void expect_half_cuda_matches_cpu(const ModelConfig& c, std::uint64_t seed, int prompt_len,
                                  DType t) {
  const int batch = 2, V = c.vocab_size;
  const std::string what = c.name + " " + std::string(dtype_name(t)) + " seed " +
                           std::to_string(seed);
  const auto prompts = synthetic_prompts(seed, batch, prompt_len, V, true);
  CpuBackend cpu;
  CudaBackend gpu;
  const Generation ref = generate(cpu, c, seed, prompts, batch, prompt_len, kDecodeSteps,
                                  nullptr, {}, t);
  const Generation got = generate(gpu, c, seed, prompts, batch, prompt_len, kDecodeSteps,
                                  nullptr, {}, t);
  int compared = 0;
  for (std::size_t stage = 0; stage < ref.logits.size(); ++stage) {
    const std::vector<float>& a = got.logits[stage];
    const std::vector<float>& b = ref.logits[stage];
    ASSERT_EQ(a.size(), b.size()) << what;
    const double tol = half_logit_rel_tol(t) * max_abs(b);
    for (std::size_t i = 0; i < a.size(); ++i)
      ASSERT_TRUE(std::isfinite(a[i]) && std::fabs(double(a[i]) - double(b[i])) <= tol)
          << what << ", " << stage_name(stage) << ", row " << i / V << " token " << i % V
          << ": " << a[i] << " vs " << b[i] << " (tol " << tol << ")";
    for (int row = 0; row < batch; ++row) {
      if (top2_margin(b, V, row) <= 2 * tol) continue;  // a near-tie: either token is right
      ++compared;
      ASSERT_EQ(got.tokens[stage][row], ref.tokens[stage][row])
          << what << ", " << stage_name(stage) << ", row " << row;
    }
    // Once a token differs, later stages would see other inputs: stop comparing there.
    if (got.tokens[stage] != ref.tokens[stage]) break;
  }
  EXPECT_GT(compared, 0) << what << ": every stage was a near-tie; pick another seed";
}

TEST_F(CudaForward, MatmulHalfAndEmbeddingHalfMatchTheCpuReference) {
  // The two ops the half path adds, through CudaBackend: matmul_half against
  // matmul_half_reference (the same rounding of x on both sides, so only the summation order
  // differs: fp32 tensor-core accumulation vs double), embedding_half bit for bit.
  CudaBackend gpu;
  struct Shape { int m, n, k; };
  for (DType t : {DType::kBf16, DType::kFp16}) {
    for (Shape sh : {Shape{1, 733, 19}, Shape{3, 19, 733}, Shape{17, 300, 64}, Shape{1, 1, 1},
                     Shape{9, 7, 0}}) {
      const int lda = sh.k + 3;
      const auto x = test::random_floats(std::size_t(sh.m) * lda, 31u + sh.n);
      const auto wf = test::random_floats(std::size_t(sh.n) * sh.k, 37u + sh.m);
      std::vector<std::uint16_t> w(wf.size());
      cpu::narrow_to_half(w.data(), wf.data(), std::int64_t(w.size()), t);
      std::vector<float> ref(std::size_t(sh.m) * sh.n), got(ref.size());
      cpu::matmul_half_reference(ref.data(), x.data(), w.data(), t, sh.m, sh.n, sh.k, lda);
      Buffer dx = gpu.alloc(x.size() * 4), dw = gpu.alloc(w.size() * 2 + 2);
      Buffer dout = gpu.alloc(got.size() * 4);
      gpu.to_device(dx.data(), x.data(), x.size() * 4);
      gpu.to_device(dw.data(), w.data(), w.size() * 2);
      gpu.matmul_half(dout.f32(), dx.f32(), dw.as<std::uint16_t>(), t, sh.m, sh.n, sh.k, lda);
      gpu.to_host(got.data(), dout.data(), got.size() * 4);
      EXPECT_TRUE(test::all_close(got, ref, 1e-4, 1e-4))
          << dtype_name(t) << " m=" << sh.m << " n=" << sh.n << " k=" << sh.k;
    }
    const int vocab = 37, dim = 19;
    const auto tf = test::random_floats(std::size_t(vocab) * dim, 41);
    std::vector<std::uint16_t> table(tf.size());
    cpu::narrow_to_half(table.data(), tf.data(), std::int64_t(table.size()), t);
    const std::vector<std::int32_t> tokens = {36, 0, 5, 5, 17};
    std::vector<float> ref(tokens.size() * dim), got(ref.size());
    for (std::size_t i = 0; i < tokens.size(); ++i)
      cpu::widen_half(ref.data() + i * dim, table.data() + std::size_t(tokens[i]) * dim, dim, t);
    Buffer dt = gpu.alloc(table.size() * 2), dtok = gpu.alloc(tokens.size() * 4);
    Buffer dout = gpu.alloc(got.size() * 4);
    gpu.to_device(dt.data(), table.data(), table.size() * 2);
    gpu.to_device(dtok.data(), tokens.data(), tokens.size() * 4);
    gpu.embedding_half(dout.f32(), dt.as<std::uint16_t>(), t, dtok.as<std::int32_t>(),
                       int(tokens.size()), dim);
    gpu.to_host(got.data(), dout.data(), got.size() * 4);
    EXPECT_EQ(got, ref) << dtype_name(t);
  }
}

TEST_F(CudaForward, TinyBf16MatchesCpuBf16) {
  expect_half_cuda_matches_cpu(tiny(), 7, 7, DType::kBf16);
}
TEST_F(CudaForward, TinyFp16MatchesCpuFp16) {
  expect_half_cuda_matches_cpu(tiny(), 7, 7, DType::kFp16);
}
TEST_F(CudaForward, WideBf16MatchesCpuBf16) {
  expect_half_cuda_matches_cpu(wide(), 6, 19, DType::kBf16);
}
TEST_F(CudaForward, WideFp16MatchesCpuFp16) {
  expect_half_cuda_matches_cpu(wide(), 6, 19, DType::kFp16);
}

TEST_F(CudaForward, Bf16IsCloseToCpuFp32) {
  // The bound: CUDA bf16 against the CPU fp32 forward, per position of the prefill and
  // the first decode step (fed the same token), KL(fp32 || bf16) below 2e-3 nats, the bound
  // the CPU's own bf16 path is held to against fp32 (tests/engine/test_model_dtypes.cpp).
  const ModelConfig c = tiny();
  const int batch = 2, P = 7, V = c.vocab_size;
  const auto prompts = synthetic_prompts(7, batch, P, V, true);
  CpuBackend cpu;
  CudaBackend gpu;
  const Generation ref = generate(cpu, c, 7, prompts, batch, P, 1);
  const Generation got = generate(gpu, c, 7, prompts, batch, P, 1, nullptr, {}, DType::kBf16);
  const std::size_t stages = got.tokens[0] == ref.tokens[0] ? 2 : 1;
  for (std::size_t stage = 0; stage < stages; ++stage)
    for (int row = 0; row < batch; ++row)
      EXPECT_LT(kl_divergence(ref.logits[stage].data() + std::size_t(row) * V,
                              got.logits[stage].data() + std::size_t(row) * V, V),
                2e-3)
          << stage_name(stage) << ", row " << row;
}

TEST_F(CudaForward, HalfWeightsAreBitIdenticalRunToRun) {
  const ModelConfig c = wide();
  const auto prompts = synthetic_prompts(6, 2, 19, c.vocab_size, true);
  CudaBackend gpu;
  for (DType t : {DType::kBf16, DType::kFp16}) {
    const Generation a = generate(gpu, c, 6, prompts, 2, 19, kDecodeSteps, nullptr, {}, t);
    const Generation b = generate(gpu, c, 6, prompts, 2, 19, kDecodeSteps, nullptr, {}, t);
    expect_bit_identical(a, b, std::string("two ") + std::string(dtype_name(t)) + " runs");
  }
}

TEST_F(CudaForward, TracingNestsAndCountsLikeTheCpu) {
  // The same traced generation on both backends: the CPU's records (host clock) fix the
  // expected names, nesting, layers, steps and analytic work; the CUDA records (the default
  // timer: CUPTI in a build with it, else events) must match them one for one and have
  // consistent times.
  const ModelConfig c = wide();  // has q/k/v biases, so every per-layer op appears
  const int steps = 3, P = 32;
  const auto prompts = synthetic_prompts(6, 2, P, c.vocab_size, true);
  const auto origin = std::chrono::steady_clock::now();
  CpuBackend cpu;
  CudaBackend gpu;
  Tracer cpu_trace(TraceLevel::kOps, cpu.make_op_timer(TimerMode::kDevice), origin);
  Tracer gpu_trace(TraceLevel::kOps, gpu.make_op_timer(TimerMode::kDevice), origin);
  generate(cpu, c, 6, prompts, 2, P, steps, &cpu_trace);
  generate(gpu, c, 6, prompts, 2, P, steps, &gpu_trace);
  gpu_trace.finish();  // the default CUDA timer (CUPTI) resolves at the end
  const std::vector<OpRecord>& want = cpu_trace.records();
  const std::vector<OpRecord>& got = gpu_trace.records();

  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    const OpRecord& g = got[i];
    const OpRecord& w = want[i];
    ASSERT_STREQ(g.name, w.name) << "record " << i;
    EXPECT_EQ(g.category, w.category) << g.name << " record " << i;
    EXPECT_EQ(g.layer, w.layer) << g.name << " record " << i;
    EXPECT_EQ(g.phase, w.phase) << g.name << " record " << i;
    EXPECT_EQ(g.step, w.step) << g.name << " record " << i;
    EXPECT_EQ(g.depth, w.depth) << g.name << " record " << i;
    EXPECT_EQ(g.parent, w.parent) << g.name << " record " << i;
    EXPECT_EQ(g.flops, w.flops) << g.name << " record " << i;
    EXPECT_EQ(g.bytes, w.bytes) << g.name << " record " << i;
  }

  std::map<std::string, int> count;
  for (const OpRecord& r : got) ++count[r.name];
  const int passes = 1 + steps;
  EXPECT_EQ(count["prefill"], 1);
  EXPECT_EQ(count["decode_step"], steps);
  for (const char* op : {"layer", "attn_norm", "qkv_proj", "qkv_bias", "rope_q", "rope_k",
                         "kv_write_k", "kv_write_v", "attention", "o_proj", "attn_residual",
                         "ffn_norm", "gate_up_proj", "swiglu", "down_proj", "ffn_residual"})
    EXPECT_EQ(count[op], c.n_layers * passes) << op;
  for (const char* op : {"embedding", "gather_last", "final_norm", "lm_head", "argmax",
                         "tokens_to_host"})
    EXPECT_EQ(count[op], passes) << op;

  // Every record within its parent (up to the event slack) and of non-negative duration.
  for (const OpRecord& r : got) {
    EXPECT_GE(r.dur_ns, 0) << r.name;
    if (r.parent < 0) continue;
    const OpRecord& p = got[std::size_t(r.parent)];
    EXPECT_GE(r.start_ns + kEventSlackNs, p.start_ns) << r.name << " starts before " << p.name;
    EXPECT_LE(r.start_ns + r.dur_ns, p.start_ns + p.dur_ns + kEventSlackNs)
        << r.name << " ends after " << p.name;
  }

  // The leaf ops of a step run one after another on one stream, so their durations add up to
  // no more than the step's (up to the slack per op). They may cover much less of it than on
  // the CPU: the GPU idles between ops while the host issues the next one.
  std::map<std::size_t, std::int64_t> leaf_sum;
  std::map<std::size_t, std::int64_t> leaf_count;
  for (const OpRecord& r : got) {
    if (r.category == OpCategory::kRange) continue;
    std::size_t top = std::size_t(r.parent);
    while (got[top].parent >= 0) top = std::size_t(got[top].parent);
    leaf_sum[top] += r.dur_ns;
    ++leaf_count[top];
  }
  int n_steps = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (got[i].depth != 0) continue;
    ++n_steps;
    EXPECT_GT(leaf_count[i], 0) << got[i].name << " step " << got[i].step;
    EXPECT_LE(leaf_sum[i], got[i].dur_ns + leaf_count[i] * kEventSlackNs)
        << got[i].name << " step " << got[i].step;
  }
  EXPECT_EQ(n_steps, passes);
}

TEST_F(CudaForward, SyncCheckGivesIdenticalLogits) {
  // --sync-check only adds a stream synchronisation after each op; the arithmetic is the same.
  const ModelConfig c = wide();
  const auto prompts = synthetic_prompts(6, 2, 19, c.vocab_size, true);
  CudaBackend plain;
  CudaBackend checked(0, /*sync_check=*/true);
  const Generation a = generate(plain, c, 6, prompts, 2, 19, kDecodeSteps);
  const Generation b = generate(checked, c, 6, prompts, 2, 19, kDecodeSteps);
  expect_bit_identical(a, b, "sync-check vs default");
}

TEST_F(CudaForward, EveryVariantCombinationMatchesTheCpuFastPath) {
  // Every --qkv x --kv-cache x --logits combination on CUDA against the CPU's defaults: the
  // same tolerance and tokens as the default path. Paged blocks of 5 tokens: the prompt (19)
  // and every later length but 20 leave the last block partly filled.
  const ModelConfig c = wide();
  const int batch = 2, P = 19;
  const auto prompts = synthetic_prompts(6, batch, P, c.vocab_size, true);
  CpuBackend cpu;
  CudaBackend gpu;
  const Generation ref = generate(cpu, c, 6, prompts, batch, P, kDecodeSteps);
  for (const Variants& v : test::every_variant_combination(5)) {
    const Generation got = generate(gpu, c, 6, prompts, batch, P, kDecodeSteps, nullptr, v);
    expect_same_generation(got, ref, c.vocab_size, "cuda [" + v.describe() + "]");
  }
}

TEST_F(CudaForward, HostNoSyncTimerIsTheHostClockAndChangesNoToken) {
  // --timer host-nosync: the host clock around each enqueue (HostOpTimer), no CUDA events; the
  // same records as the event timer, the same tokens, and every op inside its step (the step
  // ends with a synchronising copy, so the ranges themselves stay right).
  CudaBackend gpu;
  EXPECT_NE(dynamic_cast<HostOpTimer*>(gpu.make_op_timer(TimerMode::kHostNoSync).get()), nullptr);
  EXPECT_EQ(dynamic_cast<HostOpTimer*>(gpu.make_op_timer(TimerMode::kDevice).get()), nullptr);
  const ModelConfig c = wide();
  const auto prompts = synthetic_prompts(6, 2, 19, c.vocab_size, true);
  const auto origin = std::chrono::steady_clock::now();
  Tracer events(TraceLevel::kOps, gpu.make_op_timer(TimerMode::kEvents), origin);
  Tracer host(TraceLevel::kOps, gpu.make_op_timer(TimerMode::kHostNoSync), origin);
  Variants naive;
  naive.qkv = QkvLayout::kPermute;
  naive.kv_cache = KvCacheKind::kConcat;
  naive.logits = LogitsMode::kAll;
  naive.timer = TimerMode::kHostNoSync;
  const Generation a = generate(gpu, c, 6, prompts, 2, 19, kDecodeSteps, &events, naive);
  const Generation b = generate(gpu, c, 6, prompts, 2, 19, kDecodeSteps, &host, naive);
  expect_bit_identical(a, b, "host-nosync vs event timer");
  ASSERT_EQ(host.records().size(), events.records().size());
  for (std::size_t i = 0; i < host.records().size(); ++i) {
    const OpRecord& r = host.records()[i];
    ASSERT_STREQ(r.name, events.records()[i].name);
    EXPECT_GE(r.dur_ns, 0) << r.name;
    if (r.parent < 0) continue;
    const OpRecord& p = host.records()[std::size_t(r.parent)];
    EXPECT_GE(r.start_ns, p.start_ns) << r.name;
    EXPECT_LE(r.start_ns + r.dur_ns, p.start_ns + p.dur_ns) << r.name;
  }
}

TEST_F(CudaForward, CuptiTimerAttributesEveryOpAndChangesNoToken) {
  // --timer cupti: each op's time is the sum of the kernels CUPTI saw it launch, each range
  // spans its ops. The same records and tokens as the event timer; every GEMM, attention and
  // norm ran device work; every op lies inside its parent; a step's ops add up to no more than
  // the step; a second CUPTI-timed repetition works after the first; and the kernels kept for
  // each op (its child slices when stored) add up to the op, lie inside the op's parent range,
  // carry names, and every GEMM has one.
#if !defined(LLMBENCH_HAVE_CUPTI)
  GTEST_SKIP() << "this build has no CUPTI";
#else
  CudaBackend gpu;
  const ModelConfig c = wide();
  const auto prompts = synthetic_prompts(6, 2, 19, c.vocab_size, true);
  const auto origin = std::chrono::steady_clock::now();
  Tracer events(TraceLevel::kOps, gpu.make_op_timer(TimerMode::kEvents), origin);
  const Generation a = generate(gpu, c, 6, prompts, 2, 19, kDecodeSteps, &events);
  for (int round = 0; round < 2; ++round) {
    std::vector<OpRecord> recs;
    DeviceTrace work;
    Generation b;
    {
      // Round 0 by name, round 1 as the default (which is CUPTI in a build with it).
      Tracer cupti(TraceLevel::kOps,
                   gpu.make_op_timer(round == 0 ? TimerMode::kCupti : TimerMode::kDevice), origin);
      b = generate(gpu, c, 6, prompts, 2, 19, kDecodeSteps, &cupti);
      cupti.finish();
      recs = cupti.records();
      work = cupti.device_trace();
    }
    expect_bit_identical(a, b, "cupti vs event timer");
    ASSERT_EQ(recs.size(), events.records().size());
    std::map<int, std::int64_t> ops_in_step, step_dur;
    for (std::size_t i = 0; i < recs.size(); ++i) {
      const OpRecord& r = recs[i];
      ASSERT_STREQ(r.name, events.records()[i].name);
      if (r.category == OpCategory::kGemm || r.category == OpCategory::kAttention ||
          r.category == OpCategory::kNorm)
        EXPECT_GT(r.dur_ns, 0) << r.name << " (round " << round << ")";
      if (r.parent < 0) {
        step_dur[int(i)] = r.dur_ns;
        continue;
      }
      const OpRecord& p = recs[std::size_t(r.parent)];
      EXPECT_GE(r.start_ns, p.start_ns) << r.name;
      EXPECT_LE(r.start_ns + r.dur_ns, p.start_ns + p.dur_ns) << r.name;
      int root = r.parent;
      while (recs[std::size_t(root)].parent >= 0) root = recs[std::size_t(root)].parent;
      if (r.category != OpCategory::kRange) ops_in_step[root] += r.dur_ns;
    }
    for (const auto& [step, sum] : ops_in_step) EXPECT_LE(sum, step_dur[step]);

    ASSERT_FALSE(work.records.empty()) << "round " << round;
    std::map<int, std::int64_t> kernel_sum;
    for (const DeviceWorkRecord& w : work.records) {
      ASSERT_GE(w.op, 0);
      ASSERT_LT(std::size_t(w.op), recs.size());
      ASSERT_LT(std::size_t(w.name), work.names.size());
      EXPECT_FALSE(work.names[std::size_t(w.name)].empty());
      const OpRecord& op = recs[std::size_t(w.op)];
      kernel_sum[w.op] += w.dur_ns;
      EXPECT_GE(w.start_ns, op.start_ns) << op.name;
      if (op.parent >= 0) {
        const OpRecord& p = recs[std::size_t(op.parent)];
        EXPECT_LE(w.start_ns + w.dur_ns, p.start_ns + p.dur_ns) << op.name;
      }
    }
    for (std::size_t i = 0; i < recs.size(); ++i) {
      if (recs[i].category == OpCategory::kRange) continue;
      const auto sum = kernel_sum.find(int(i));
      if (recs[i].category == OpCategory::kGemm) {
        EXPECT_NE(sum, kernel_sum.end()) << recs[i].name << " has no kernel";
      }
      if (sum != kernel_sum.end()) {
        EXPECT_EQ(sum->second, recs[i].dur_ns) << recs[i].name << ": its kernels' sum";
      }
    }
  }
#endif
}

TEST_F(CudaForward, SchedulerTokensEqualTheStaticPathOnCuda) {
  // Continuous batching on the GPU (ragged paged KV write and attention): three requests of
  // different lengths, one arriving later, prompts chunked by a 16-token budget; each request's
  // greedy tokens equal the static Session's on the same backend.
  const ModelConfig c = wide();
  CudaBackend gpu;
  Model model(c, load_weights(c, RandomWeights(6), gpu), gpu);
  SchedulerOptions o;
  o.max_num_batched_tokens = 16;
  Scheduler sched(model, o);
  const int lens[3] = {5, 37, 19}, outs[3] = {9, 4, 12};
  std::vector<std::vector<std::int32_t>> prompts, got(3);
  for (int i = 0; i < 3; ++i)
    prompts.push_back(synthetic_prompts(20 + i, 1, lens[i], c.vocab_size, false));
  sched.add(0, {prompts[0], outs[0], true});
  sched.add(1, {prompts[1], outs[1], true});
  for (int step = 0; step < 200 && (step < 3 || !sched.idle()); ++step) {
    if (step == 3) sched.add(2, {prompts[2], outs[2], true});
    for (const RequestUpdate& u : sched.step()) got[u.id].push_back(*u.token);
  }
  for (int i = 0; i < 3; ++i) {
    Session s(model, 1, lens[i], lens[i] + outs[i]);
    const Generation g = test::generate(s, prompts[i], lens[i], outs[i] - 1);
    std::vector<std::int32_t> want;
    for (const auto& t : g.tokens) want.push_back(t[0]);
    EXPECT_EQ(got[i], want) << "request " << i;
  }
  EXPECT_EQ(sched.blocks_used(), 0);
}

// --cuda-graphs on: each decode step shape captured once and replayed, the length read from
// device memory. Against eager decode on the same GPU: the same greedy tokens at every step and
// logits within the CUDA-vs-CPU tolerance (the split grid is sized for the case's longest
// context instead of each step's, so only the summation order of the attention's splits
// differs), for batch 1, 3 and 16, fp32 and fp16 weights, unfused and --fuse small (whose
// fused kernels read the positions too); a second request on the same Session replays every
// step and repeats the first bit for bit.
TEST_F(CudaForward, GraphReplayedDecodeGivesTheEagerTokens) {
  constexpr int kSteps = 8, P = 9;
  for (const FuseMode fuse : {FuseMode::kNone, FuseMode::kSmall}) {
    Variants plain, graphs;
    plain.fuse = graphs.fuse = fuse;
    graphs.cuda_graphs = true;
    for (const ModelConfig& c : {tiny(), wide()}) {
      for (const DType dtype : {DType::kFp32, DType::kFp16}) {
        for (const int batch : {1, 3, 16}) {
          const std::string what = c.name + " " + std::string(dtype_name(dtype)) + " batch " +
                                   std::to_string(batch) + " fuse " +
                                   std::string(fuse_mode_name(fuse));
          const auto prompts = synthetic_prompts(31, batch, P, c.vocab_size, true);
          CudaBackend gpu;
          const Generation eager = generate(gpu, c, 31, prompts, batch, P, kSteps, nullptr, plain,
                                            dtype);
          const Model model(c, load_weights(c, RandomWeights(31), gpu, dtype), gpu);
          Session s(model, batch, P, P + kSteps, graphs);
          const Generation first = test::generate(s, prompts, P, kSteps);
          ASSERT_NE(s.graphs(), nullptr) << what;
          EXPECT_EQ(s.graph_note(), "") << what;
          EXPECT_EQ(s.graphs()->captures(), 1) << what;
          EXPECT_EQ(s.graphs()->replays(), kSteps - 2) << what;
          ASSERT_EQ(first.tokens, eager.tokens) << what;
          for (std::size_t stage = 0; stage < eager.logits.size(); ++stage) {
            const double tol = kLogitRelTol * max_abs(eager.logits[stage]);
            double worst = 0;
            for (std::size_t i = 0; i < eager.logits[stage].size(); ++i)
              worst = std::max(worst, std::isfinite(first.logits[stage][i])
                                          ? std::fabs(double(first.logits[stage][i]) -
                                                      double(eager.logits[stage][i]))
                                          : INFINITY);
            EXPECT_LE(worst, tol) << what << ", " << stage_name(stage);
          }
          const Generation second = test::generate(s, prompts, P, kSteps);
          EXPECT_EQ(s.graphs()->captures(), 1) << what;
          EXPECT_EQ(s.graphs()->replays(), 2 * kSteps - 2) << what;
          expect_bit_identical(second, first, what + ", second request");
        }
      }
    }
  }
}

TEST_F(CudaForward, GraphsAreNotUsedWithSyncCheckOrTracingAndSaySo) {
  const ModelConfig c = tiny();
  const auto prompts = synthetic_prompts(7, 2, 7, c.vocab_size, true);
  Variants graphs;
  graphs.cuda_graphs = true;
  CudaBackend checked(0, /*sync_check=*/true);
  const Model m1(c, load_weights(c, RandomWeights(7), checked), checked);
  Session s1(m1, 2, 7, 7 + kDecodeSteps, graphs);
  EXPECT_EQ(s1.graphs(), nullptr);
  EXPECT_NE(s1.graph_note().find("cannot capture"), std::string::npos) << s1.graph_note();

  // Steps traced by the event timer (which cannot see a graph's nodes) run eagerly: no
  // capture, and the tokens of an untraced eager run.
  CudaBackend gpu;
  const Generation eager = generate(gpu, c, 7, prompts, 2, 7, kDecodeSteps);
  const Model m2(c, load_weights(c, RandomWeights(7), gpu), gpu);
  Session s2(m2, 2, 7, 7 + kDecodeSteps, graphs);
  Tracer tracer(TraceLevel::kOps, gpu.make_op_timer(TimerMode::kEvents),
                std::chrono::steady_clock::now());
  s2.set_tracer(&tracer);
  const Generation traced = test::generate(s2, prompts, 7, kDecodeSteps);
  s2.set_tracer(nullptr);
  tracer.finish();
  ASSERT_NE(s2.graphs(), nullptr);
  EXPECT_EQ(s2.graphs()->captures() + s2.graphs()->replays() + s2.graphs()->warmups(), 0);
  EXPECT_EQ(traced.tokens, eager.tokens);
}

TEST_F(CudaForward, TracedGraphReplaysGiveEachKernelToItsOp) {
  // --cuda-graphs on with --timer cupti: after the traced warm-up step, each traced step is
  // launched from a graph captured with the op of each node, and CUPTI's records of the replay
  // are given to their ops by graph node. The eager traced run's records (names, nesting,
  // analytic work at each step's length), the same kernels per op, none unmatched, each op the
  // sum of its kernels inside its parent, and the eager tokens.
#if !defined(LLMBENCH_HAVE_CUPTI)
  GTEST_SKIP() << "this build has no CUPTI";
#else
  CudaBackend gpu;
  const ModelConfig c = wide();
  const auto prompts = synthetic_prompts(6, 2, 19, c.vocab_size, true);
  const auto origin = std::chrono::steady_clock::now();
  struct Traced {
    Generation g;
    std::vector<OpRecord> recs;
    DeviceTrace work;
  };
  Traced eager, replayed;
  {
    Tracer t(TraceLevel::kOps, gpu.make_op_timer(TimerMode::kCupti), origin);
    eager.g = generate(gpu, c, 6, prompts, 2, 19, kDecodeSteps, &t);
    t.finish();
    eager.recs = t.records();
    eager.work = t.device_trace();
  }
  Variants graphs;
  graphs.cuda_graphs = true;
  const Model m(c, load_weights(c, RandomWeights(6), gpu), gpu);
  Session s(m, 2, 19, 19 + kDecodeSteps, graphs);
  {
    Tracer t(TraceLevel::kOps, gpu.make_op_timer(TimerMode::kCupti), origin);
    ASSERT_TRUE(t.sees_graph_nodes()) << "CUPTI's callbacks are held by another client";
    s.set_tracer(&t);
    replayed.g = test::generate(s, prompts, 19, kDecodeSteps);
    s.set_tracer(nullptr);
    t.finish();
    replayed.recs = t.records();
    replayed.work = t.device_trace();
  }
  ASSERT_NE(s.graphs(), nullptr);
  EXPECT_EQ(s.graph_note(), "");
  EXPECT_EQ(s.graphs()->traced_launches(), kDecodeSteps - 1);  // captured at 2, replayed 3..
  EXPECT_EQ(replayed.g.tokens, eager.g.tokens);
  EXPECT_EQ(replayed.work.unmatched_graph_nodes, 0);
  ASSERT_EQ(replayed.recs.size(), eager.recs.size());
  for (std::size_t i = 0; i < eager.recs.size(); ++i) {
    const OpRecord &r = replayed.recs[i], &e = eager.recs[i];
    ASSERT_STREQ(r.name, e.name) << i;
    EXPECT_EQ(r.parent, e.parent) << i;
    EXPECT_EQ(r.step, e.step) << i;
    EXPECT_EQ(r.flops, e.flops) << r.name << " " << i;
    EXPECT_EQ(r.bytes, e.bytes) << r.name << " " << i;
  }
  std::map<int, int> kernels, eager_kernels;
  std::map<int, std::int64_t> kernel_sum;
  for (const DeviceWorkRecord& w : eager.work.records) ++eager_kernels[w.op];
  for (const DeviceWorkRecord& w : replayed.work.records) {
    ++kernels[w.op];
    kernel_sum[w.op] += w.dur_ns;
    const OpRecord& op = replayed.recs[std::size_t(w.op)];
    EXPECT_GE(w.start_ns, op.start_ns) << op.name;
    if (op.parent >= 0) {
      const OpRecord& p = replayed.recs[std::size_t(op.parent)];
      EXPECT_LE(w.start_ns + w.dur_ns, p.start_ns + p.dur_ns) << op.name;
    }
  }
  EXPECT_EQ(kernels, eager_kernels) << "every op's kernels, replayed or not";
  for (const auto& [op, sum] : kernel_sum)
    if (replayed.recs[std::size_t(op)].category != OpCategory::kRange)
      EXPECT_EQ(replayed.recs[std::size_t(op)].dur_ns, sum) << replayed.recs[std::size_t(op)].name;
#endif
}

TEST_F(CudaForward, FuseSmallEqualsTheUnfusedOpsBitForBitAndMatchesTheCpu) {
  // --fuse small on CUDA: each fused kernel does its unfused sequence's arithmetic, so every
  // variant combination gives the unfused logits bit for bit, and the CPU's within tolerance.
  // fp32 runs add_rmsnorm and rope_kv_write (swiglu_down is the default pair there); fp16 and
  // bf16 at batch 2 also run the fused swiglu_down GEMV in every decode step.
  const ModelConfig c = wide();
  const int batch = 2, P = 19;
  const auto prompts = synthetic_prompts(6, batch, P, c.vocab_size, true);
  CpuBackend cpu;
  CudaBackend gpu;
  const Generation ref = generate(cpu, c, 6, prompts, batch, P, kDecodeSteps);
  for (KvCacheKind kv : {KvCacheKind::kPrealloc, KvCacheKind::kConcat, KvCacheKind::kPaged})
    for (QkvLayout q : {QkvLayout::kFused, QkvLayout::kPermute}) {
      Variants v;
      v.qkv = q;
      v.kv_cache = kv;
      v.kv_cache_block = 5;
      const Generation unfused = generate(gpu, c, 6, prompts, batch, P, kDecodeSteps, nullptr, v);
      v.fuse = FuseMode::kSmall;
      const Generation fused = generate(gpu, c, 6, prompts, batch, P, kDecodeSteps, nullptr, v);
      expect_bit_identical(fused, unfused, "cuda [" + v.describe() + "]");
      expect_same_generation(fused, ref, c.vocab_size, "cuda [" + v.describe() + "]");
    }
  for (const DType t : {DType::kFp16, DType::kBf16}) {
    Variants v;
    const Generation unfused =
        generate(gpu, c, 6, prompts, batch, P, kDecodeSteps, nullptr, v, t);
    v.fuse = FuseMode::kSmall;
    const Generation fused = generate(gpu, c, 6, prompts, batch, P, kDecodeSteps, nullptr, v, t);
    expect_bit_identical(fused, unfused, std::string("cuda ") + std::string(dtype_name(t)) +
                                             " [fuse=small]");
  }
}

TEST_F(CudaForward, DecodeAttentionStreamedMatchesTheCpu) {
  // --decode-attention streamed: wide's head_dim (64) takes the streamed kernel in the prefill
  // (19 tokens, under cuBLAS's 32) and every decode step, on every --qkv x --kv-cache x --logits
  // combination and in decode steps replayed from a graph (attention_at); against the CPU's
  // defaults with the CUDA-vs-CPU tolerance and the same tokens, as tiled is above.
  const ModelConfig c = wide();
  const int batch = 2, P = 19;
  const auto prompts = synthetic_prompts(6, batch, P, c.vocab_size, true);
  CpuBackend cpu;
  CudaBackend gpu;
  const Generation ref = generate(cpu, c, 6, prompts, batch, P, kDecodeSteps);
  for (Variants v : test::every_variant_combination(5)) {
    v.decode_attention = DecodeAttention::kStreamed;
    const Generation got = generate(gpu, c, 6, prompts, batch, P, kDecodeSteps, nullptr, v);
    expect_same_generation(got, ref, c.vocab_size, "cuda [" + v.describe() + "]");
  }
  Variants graphs;
  graphs.decode_attention = DecodeAttention::kStreamed;
  graphs.cuda_graphs = true;
  const Model model(c, load_weights(c, RandomWeights(6), gpu), gpu);
  Session s(model, batch, P, P + kDecodeSteps, graphs);
  const Generation replayed = test::generate(s, prompts, P, kDecodeSteps);
  ASSERT_NE(s.graphs(), nullptr);
  EXPECT_EQ(s.graphs()->replays(), kDecodeSteps - 2);
  expect_same_generation(replayed, ref, c.vocab_size, "cuda [" + graphs.describe() + "]");
}

}  // namespace llmbench
