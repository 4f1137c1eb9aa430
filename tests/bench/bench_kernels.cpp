// Google Benchmark microbenchmarks for the CPU kernels: every kernel, and every matmul path
// (sgemm at prefill shapes; the engine's matmul, sgemm, sgemv and the few-rows kernel at decode
// shapes; the reference at a small shape). Each reports bytes_per_second (unique bytes read + written) and
// flops_per_second (0 for pure copies) against wall time, since the kernels are multithreaded.
// Not a test: correctness lives in tests/kernels.
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "kernels/cpu/argmax.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/attention_decode.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/embedding.h"
#include "kernels/cpu/gemm_avx2.h"
#include "kernels/cpu/kv_cache.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/matmul_avx2.h"
#include "kernels/cpu/matmul_avx512.h"
#include "kernels/cpu/matmul_half.h"
#include "kernels/cpu/quant.h"
#include "kernels/cpu/read_sum.h"
#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/rmsnorm.h"
#include "kernels/cpu/rope.h"
#include "kernels/cpu/swiglu.h"

namespace llmbench::cpu {
namespace {

// Model dimensions of the benchmarks (TinyLlama-1.1B: hidden 2048, ffn 5632, 32 heads of 64,
// 4 kv heads, vocab 32000).
constexpr int kHidden = 2048;
constexpr int kFfn = 5632;
constexpr int kHeads = 32;
constexpr int kKvHeads = 4;
constexpr int kHeadDim = 64;
constexpr int kVocab = 32000;
constexpr double kMinTimeS = 0.1;  // short default runtime per benchmark
// The `small` preset's decode matrices (hidden 768, ffn 2048): short weight rows (1.5 KB in
// bf16), where a kernel's per-tile start-up shows.
constexpr int kSmallHidden = 768;
constexpr int kSmallFfn = 2048;

// Deterministic values in [-0.5, 0.5): cheap to generate for tens of millions of floats.
std::vector<float> filled(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>((i * 2654435761u) % 1000) / 1000 - 0.5f;
  return v;
}

// Rates per wall-clock second. Google Benchmark 1.7 divides kIsRate counters by the main
// thread's CPU time, which is wrong for multithreaded kernels, so the loop is timed here.
class RateTimer {
 public:
  RateTimer() : start_(std::chrono::steady_clock::now()) {}
  void set_rates(benchmark::State& state, double bytes, double flops) const {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const double iters = static_cast<double>(state.iterations());
    state.counters["bytes_per_second"] = benchmark::Counter(bytes * iters / s);
    state.counters["flops_per_second"] = benchmark::Counter(flops * iters / s);
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

// ---- matmul: out[m, n] = x[m, k] w[n, k]^T ---------------------------------------------------

// Each matmul path on the same shapes: "matmul" (what the engine runs), "sgemm" and "sgemv"
// (OpenBLAS called directly), "few_rows" (the portable decode kernel), "stream" (the AVX-512
// weight-streaming kernel), "avx2" (the AVX2 decode kernel, matmul_avx2.h), "avx2_gemm" (the
// AVX2 outer-product GEMM, gemm_avx2.h, at any row count). Shapes with n = 32000 (the
// TinyLlama LM head, 262 MB) do not fit in the last-level cache and show memory bandwidth;
// n = 2048 / 5632 with k = 2048 (16 / 46 MB) partly fit.
enum class MatmulPath { kMatmul, kSgemm, kSgemv, kFewRows, kStream, kAvx2, kAvx2Gemm };

void BM_matmul_path(benchmark::State& state, MatmulPath path) {
  const int m = state.range(0), n = state.range(1), k = state.range(2);
  if (path == MatmulPath::kSgemv && m != 1) {
    state.SkipWithError("sgemv takes one row");
    return;
  }
  if (path == MatmulPath::kStream && !cpu_isa().avx512) {
    state.SkipWithError("no AVX-512 (or LLMBENCH_CPU_ISA=portable)");
    return;
  }
  if ((path == MatmulPath::kAvx2 || path == MatmulPath::kAvx2Gemm) && !cpu_isa().avx2) {
    state.SkipWithError("no AVX2 + FMA + F16C (or LLMBENCH_CPU_ISA=portable)");
    return;
  }
  const std::vector<float> x = filled(static_cast<std::size_t>(m) * k);
  const std::vector<float> w = filled(static_cast<std::size_t>(n) * k);
  std::vector<float> out(static_cast<std::size_t>(m) * n);
  const RateTimer timer;
  for (auto _ : state) {
    switch (path) {
      case MatmulPath::kMatmul: matmul(out.data(), x.data(), w.data(), m, n, k, k); break;
      case MatmulPath::kSgemm:
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, x.data(), k,
                    w.data(), k, 0.0f, out.data(), n);
        break;
      case MatmulPath::kSgemv:
        cblas_sgemv(CblasRowMajor, CblasNoTrans, n, k, 1.0f, w.data(), k, x.data(), 1, 0.0f,
                    out.data(), 1);
        break;
      case MatmulPath::kFewRows: matmul_few_rows(out.data(), x.data(), w.data(), m, n, k, k); break;
      case MatmulPath::kStream:
        avx512::matmul_f32(out.data(), x.data(), k, w.data(), m, n, k);
        break;
      case MatmulPath::kAvx2:
        avx2::matmul_f32_rows(out.data(), x.data(), k, w.data(), m, n, k);
        break;
      case MatmulPath::kAvx2Gemm:
        avx2::gemm_f32(out.data(), x.data(), k, w.data(), m, n, k);
        break;
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  timer.set_rates(state, 4.0 * (double(m) * k + double(n) * k + double(m) * n), 2.0 * m * n * k);
}

void prefill_shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"m", "n", "k"})
      ->Args({128, kHidden, kHidden})   // one 128-token prompt (TTFT 1 x 128)
      ->Args({128, kFfn, kHidden})
      ->Args({2048, kHidden, kHidden})  // 2048 tokens through a square projection
      ->Args({2048, kFfn, kHidden});    // gate/up-sized projection
}
void decode_shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"m", "n", "k"})->ArgsProduct(
      {{1, 2, 4, 8, 16, 32}, {kHidden, kFfn, kVocab}, {kHidden}});
}
// Where the fp32 weight-streaming kernel hands over to sgemm (kStreamRowsMax in matmul.h).
void crossover_shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"m", "n", "k"})->ArgsProduct({{32, 64, 128, 256}, {kFfn}, {kHidden}});
}
void sgemv_shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"m", "n", "k"})->ArgsProduct({{1}, {kHidden, kFfn, kVocab}, {kHidden}});
}

BENCHMARK_CAPTURE(BM_matmul_path, matmul_prefill, MatmulPath::kMatmul)->Apply(prefill_shapes)
    ->UseRealTime()->MinTime(kMinTimeS)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_matmul_path, sgemm_prefill, MatmulPath::kSgemm)->Apply(prefill_shapes)
    ->UseRealTime()->MinTime(kMinTimeS)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_matmul_path, matmul_decode, MatmulPath::kMatmul)->Apply(decode_shapes)
    ->UseRealTime()->MinTime(kMinTimeS)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_matmul_path, sgemm_decode, MatmulPath::kSgemm)->Apply(decode_shapes)
    ->UseRealTime()->MinTime(kMinTimeS)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_matmul_path, few_rows_decode, MatmulPath::kFewRows)->Apply(decode_shapes)
    ->UseRealTime()->MinTime(kMinTimeS)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_matmul_path, stream_decode, MatmulPath::kStream)->Apply(decode_shapes)
    ->UseRealTime()->MinTime(kMinTimeS)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_matmul_path, stream_prefill, MatmulPath::kStream)->Apply(prefill_shapes)
    ->UseRealTime()->MinTime(kMinTimeS)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_matmul_path, stream_crossover, MatmulPath::kStream)->Apply(crossover_shapes)
    ->UseRealTime()->MinTime(kMinTimeS)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_matmul_path, sgemm_crossover, MatmulPath::kSgemm)->Apply(crossover_shapes)
    ->UseRealTime()->MinTime(kMinTimeS)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_matmul_path, sgemv_decode, MatmulPath::kSgemv)->Apply(sgemv_shapes)
    ->UseRealTime()->MinTime(kMinTimeS)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_matmul_path, avx2_decode, MatmulPath::kAvx2)->Apply(decode_shapes)
    ->UseRealTime()->MinTime(kMinTimeS)->Unit(benchmark::kMillisecond);
// tinyllama's down_proj (k = 5632: an fp32 x row of 22.5 KiB, which with the weight stream
// overflows a 32 KiB L1) at batch 1 and 2: the AVX2 kernel's 1 x 3 tiles (m = 1) and its one
// weight row at a time (m = 2), beside sgemv at m = 1.
void down_shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"m", "n", "k"})->Args({1, kHidden, kFfn})->Args({2, kHidden, kFfn});
}
BENCHMARK_CAPTURE(BM_matmul_path, avx2_decode_down, MatmulPath::kAvx2)->Apply(down_shapes)
    ->UseRealTime()->MinTime(kMinTimeS)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_matmul_path, sgemv_decode_down, MatmulPath::kSgemv)
    ->Args({1, kHidden, kFfn})->ArgNames({"m", "n", "k"})
    ->UseRealTime()->MinTime(kMinTimeS)->Unit(benchmark::kMillisecond);

// matmul_half (bf16/fp16 weights, --dtype) on the decode and prefill shapes: bytes count the
// weights at 2 bytes, so GB/s compares with the fp32 paths' weight streaming directly.
// fp16_stream_prefill: the AVX-512 fp16 decode kernel (vcvtph2ps + FMA) at prefill shapes, to
// place the fp16 crossover (kFp16StreamRowsMax) against widen-then-sgemm (fp16_prefill).
void BM_fp16_stream(benchmark::State& state) {
  if (!cpu_isa().avx512) {
    state.SkipWithError("no AVX-512 (or LLMBENCH_CPU_ISA=portable)");
    return;
  }
  const int m = state.range(0), n = state.range(1), k = state.range(2);
  const std::vector<float> x = filled(static_cast<std::size_t>(m) * k);
  const std::vector<float> wf = filled(static_cast<std::size_t>(n) * k);
  std::vector<std::uint16_t> w(wf.size());
  narrow_to_half(w.data(), wf.data(), std::int64_t(w.size()), DType::kFp16);
  std::vector<float> out(static_cast<std::size_t>(m) * n), xr(x.size());
  const RateTimer timer;
  for (auto _ : state) {
    avx512::round_to_fp16_rows(xr.data(), x.data(), k, m, k);
    avx512::matmul_fp16(out.data(), xr.data(), k, w.data(), m, n, k);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  timer.set_rates(state, 4.0 * (double(m) * k + double(m) * n) + 2.0 * double(n) * k,
                  2.0 * m * n * k);
}
BENCHMARK(BM_fp16_stream)->Apply(prefill_shapes)->UseRealTime()->MinTime(kMinTimeS)
    ->Unit(benchmark::kMillisecond);

// Which routine BM_matmul_half times: matmul_half (what the engine runs), the portable path's
// prefill (matmul_half_tiled_sgemm), or the AVX2 16-bit GEMM called directly at any row count.
enum class HalfPath { kEngine, kTiledSgemm, kAvx2Gemm };

void BM_matmul_half(benchmark::State& state, DType dtype, HalfPath path = HalfPath::kEngine) {
  if (path == HalfPath::kAvx2Gemm && !cpu_isa().avx2) {
    state.SkipWithError("no AVX2 + FMA + F16C");
    return;
  }
  const int m = state.range(0), n = state.range(1), k = state.range(2);
  const std::vector<float> x = filled(static_cast<std::size_t>(m) * k);
  const std::vector<float> wf = filled(static_cast<std::size_t>(n) * k);
  std::vector<std::uint16_t> w(wf.size());
  narrow_to_half(w.data(), wf.data(), std::int64_t(w.size()), dtype);
  std::vector<float> out(static_cast<std::size_t>(m) * n);
  const RateTimer timer;
  for (auto _ : state) {
    if (path == HalfPath::kTiledSgemm)
      matmul_half_tiled_sgemm(out.data(), x.data(), w.data(), dtype, m, n, k, k);
    else if (path == HalfPath::kAvx2Gemm)
      avx2::gemm_half(out.data(), x.data(), k, w.data(), dtype, m, n, k);
    else
      matmul_half(out.data(), x.data(), w.data(), dtype, m, n, k, k);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  timer.set_rates(state, 4.0 * (double(m) * k + double(m) * n) + 2.0 * double(n) * k,
                  2.0 * m * n * k);
}
BENCHMARK_CAPTURE(BM_matmul_half, bf16_decode, DType::kBf16)->Apply(decode_shapes)
    ->UseRealTime()->MinTime(kMinTimeS)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_matmul_half, fp16_decode, DType::kFp16)->Apply(decode_shapes)
    ->UseRealTime()->MinTime(kMinTimeS)->Unit(benchmark::kMillisecond);
// The small preset at batch 1: qkv (768 + 2 x 256 kv), gate/up, down and the head.
void small_decode_shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"m", "n", "k"})
      ->Args({1, kSmallHidden + 512, kSmallHidden})
      ->Args({1, 2 * kSmallFfn, kSmallHidden})
      ->Args({1, kSmallHidden, kSmallFfn})
      ->Args({1, kVocab, kSmallHidden});
}
BENCHMARK_CAPTURE(BM_matmul_half, bf16_decode_small, DType::kBf16)->Apply(small_decode_shapes)
    ->UseRealTime()->MinTime(kMinTimeS)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_matmul_path, sgemv_decode_small, MatmulPath::kSgemv)->Apply(small_decode_shapes)
    ->UseRealTime()->MinTime(kMinTimeS)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_matmul_path, avx2_decode_small, MatmulPath::kAvx2)->Apply(small_decode_shapes)
    ->UseRealTime()->MinTime(kMinTimeS)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_matmul_half, fp16_decode_small, DType::kFp16)->Apply(small_decode_shapes)
    ->UseRealTime()->MinTime(kMinTimeS)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_matmul_half, bf16_prefill, DType::kBf16)->Apply(prefill_shapes)
    ->UseRealTime()->MinTime(kMinTimeS)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_matmul_half, fp16_prefill, DType::kFp16)->Apply(prefill_shapes)
    ->UseRealTime()->MinTime(kMinTimeS)->Unit(benchmark::kMillisecond);

// 16-bit weights at batch-16 decode, one prompt's prefill and more rows (m = 16, 128, 512;
// 2048 for 16 prompts) on the TinyLlama projections (qkv, o, gate/up fused, down; n x k):
// "engine" is matmul_half (on an AVX2 CPU without the AVX-512 path, gemm_avx2.h at every row
// count past 8), "tiled_sgemm" the portable path (256 weight rows widened to fp32, then
// OpenBLAS sgemm), "avx2_gemm" gemm_avx2.h at every row count (where the crossover lies), in
// the same process. The gemm_f32 cases are the same for fp32 weights: "engine" matmul,
// "sgemm" OpenBLAS alone, "avx2_gemm" avx2::gemm_f32.
void half_gemm_shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"m", "n", "k"});
  for (int m : {16, 128, 512}) {
    b->Args({m, kHidden + 2 * kKvHeads * (kHidden / kHeads), kHidden});
    b->Args({m, kHidden, kHidden});
    b->Args({m, 2 * kFfn, kHidden});
    b->Args({m, kHidden, kFfn});
  }
  b->Args({2048, kHidden, kHidden});
  b->Args({2048, 2 * kFfn, kHidden});
}
BENCHMARK_CAPTURE(BM_matmul_half, gemm_bf16_engine, DType::kBf16, HalfPath::kEngine)
    ->Apply(half_gemm_shapes)->UseRealTime()->MinTime(kMinTimeS)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_matmul_half, gemm_bf16_tiled_sgemm, DType::kBf16, HalfPath::kTiledSgemm)
    ->Apply(half_gemm_shapes)->UseRealTime()->MinTime(kMinTimeS)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_matmul_half, gemm_bf16_avx2_gemm, DType::kBf16, HalfPath::kAvx2Gemm)
    ->Apply(half_gemm_shapes)->UseRealTime()->MinTime(kMinTimeS)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_matmul_half, gemm_fp16_engine, DType::kFp16, HalfPath::kEngine)
    ->Apply(half_gemm_shapes)->UseRealTime()->MinTime(kMinTimeS)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_matmul_half, gemm_fp16_tiled_sgemm, DType::kFp16, HalfPath::kTiledSgemm)
    ->Apply(half_gemm_shapes)->UseRealTime()->MinTime(kMinTimeS)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_matmul_half, gemm_fp16_avx2_gemm, DType::kFp16, HalfPath::kAvx2Gemm)
    ->Apply(half_gemm_shapes)->UseRealTime()->MinTime(kMinTimeS)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_matmul_path, gemm_f32_engine, MatmulPath::kMatmul)
    ->Apply(half_gemm_shapes)->UseRealTime()->MinTime(kMinTimeS)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_matmul_path, gemm_f32_sgemm, MatmulPath::kSgemm)
    ->Apply(half_gemm_shapes)->UseRealTime()->MinTime(kMinTimeS)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_matmul_path, gemm_f32_avx2_gemm, MatmulPath::kAvx2Gemm)
    ->Apply(half_gemm_shapes)->UseRealTime()->MinTime(kMinTimeS)->Unit(benchmark::kMillisecond);

// ---- quantised weights (--dtype int8|int4) at decode row counts ----------------------------
// The TinyLlama projections: q/o-sized 2048 x 2048, the fused gate/up 11264 (2 x 5632) x 2048,
// down 2048 x 5632 (n x k). "widen" is matmul_quant (row-major int8/int4 blocks widened to
// fp32, x fp32), "vnni" matmul_quant_vnni (what the engine runs: the packed column panels, x
// quantised to int8 blocks per call, vpdpbusd), bf16 the matmul_half kernel on the same shapes. Bytes count the weights as stored
// (34/32 or 18/32 bytes a weight, 2 for bf16), x and out at 4. Run with
// --benchmark_enable_random_interleaving=true so the paths share the machine's noise.
void quant_decode_shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"m", "n", "k"});
  for (int m : {1, 2, 4, 8, 16, 32, 128}) {  // 128: one prompt's prefill
    b->Args({m, kHidden, kHidden});
    b->Args({m, 2 * kFfn, kHidden});
    b->Args({m, kHidden, kFfn});
  }
}

enum class QuantPath { kWiden, kVnni };

void BM_matmul_quant(benchmark::State& state, DType dtype, QuantPath path) {
  const int m = state.range(0), n = state.range(1), k = state.range(2);
  const std::vector<float> x = filled(static_cast<std::size_t>(m) * k);
  std::vector<std::uint8_t> w(static_cast<std::size_t>(n * quant_row_bytes(dtype, k)));
  {
    const std::vector<float> wf = filled(static_cast<std::size_t>(n) * k);
    if (path == QuantPath::kWiden)
      quantize_rows(w.data(), wf.data(), dtype, n, k);
    else
      quantize_packed(w.data(), wf.data(), dtype, n, k);
  }
  std::vector<float> out(static_cast<std::size_t>(m) * n);
  const RateTimer timer;
  for (auto _ : state) {
    if (path == QuantPath::kWiden)
      matmul_quant(out.data(), x.data(), w.data(), dtype, m, n, k, k);
    else
      matmul_quant_vnni(out.data(), x.data(), w.data(), dtype, m, n, k, k);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  timer.set_rates(state, double(w.size()) + 4.0 * (double(m) * k + double(m) * n),
                  2.0 * m * n * k);
}
BENCHMARK_CAPTURE(BM_matmul_quant, int8_widen, DType::kInt8, QuantPath::kWiden)
    ->Apply(quant_decode_shapes)->UseRealTime()->MinTime(kMinTimeS)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_matmul_quant, int8_vnni, DType::kInt8, QuantPath::kVnni)
    ->Apply(quant_decode_shapes)->UseRealTime()->MinTime(kMinTimeS)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_matmul_quant, int4_widen, DType::kInt4, QuantPath::kWiden)
    ->Apply(quant_decode_shapes)->UseRealTime()->MinTime(kMinTimeS)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_matmul_quant, int4_vnni, DType::kInt4, QuantPath::kVnni)
    ->Apply(quant_decode_shapes)->UseRealTime()->MinTime(kMinTimeS)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_matmul_half, bf16_quant_shapes, DType::kBf16)->Apply(quant_decode_shapes)
    ->UseRealTime()->MinTime(kMinTimeS)->Unit(benchmark::kMillisecond);

// The roofline's read test (avx512::read_sum_f32) over 1 GiB: 1, 2, 4 or 8 sequential streams
// per thread, software prefetch 0 (only the hardware prefetchers) or 1024 bytes ahead. The
// variant llmbench roofline uses is the fastest of these.
void BM_read_sum(benchmark::State& state) {
  if (!cpu_isa().avx512) {
    state.SkipWithError("no AVX-512 (or LLMBENCH_CPU_ISA=portable)");
    return;
  }
  const std::size_t n = std::size_t(1) << 28;
  std::vector<float> data(n);
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < n; ++i) data[i] = float(i & 7);
  const RateTimer timer;
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        avx512::read_sum_f32(data.data(), std::int64_t(n), state.range(0), state.range(1)));
  }
  timer.set_rates(state, 4.0 * double(n), double(n));
}
BENCHMARK(BM_read_sum)->ArgNames({"streams", "prefetch_bytes"})
    ->ArgsProduct({{1, 2, 4, 8}, {0, 1024}})
    ->UseRealTime()->MinTime(0.5)->Unit(benchmark::kMillisecond);

// What the roofline runs on this CPU (read_sum: the AVX-512 variant above, or the portable one),
// over 1 GiB: the read test to take in the same minute as the decode streams below.
void BM_read_sum_engine(benchmark::State& state) {
  const std::size_t n = std::size_t(1) << 28;
  std::vector<float> data(n);
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < n; ++i) data[i] = float(i & 7);
  const RateTimer timer;
  for (auto _ : state) benchmark::DoNotOptimize(read_sum(data.data(), std::int64_t(n)));
  timer.set_rates(state, 4.0 * double(n), double(n));
}
BENCHMARK(BM_read_sum_engine)->UseRealTime()->MinTime(0.5)->Unit(benchmark::kMillisecond);

// A batch-1 decode step's weight stream: the matrices of `layers` TinyLlama layers (qkv
// 2560 x 2048, o 2048 x 2048, gate/up 11264 x 2048, down 2048 x 5632) and the 32000 x 2048 head,
// one allocation each, every one multiplied once per iteration in model order with m = 1. Far
// beyond the L3 (4 layers: 0.97 GB in fp32, 0.48 GB in bf16/fp16), so the rate is a memory rate
// as in the model, where the per-shape benchmarks above loop over one matrix that may partly
// stay in cache, and a kernel's start of each row or tile shows as it does in a decode step.
// "engine": matmul / matmul_half (what the CPU backend runs); "sgemv": OpenBLAS, fp32 only.
// Compare with BM_read_sum_engine in the same minute: the machine's bandwidth drifts.
enum class StreamPath { kEngine, kSgemv };

void BM_decode_stream(benchmark::State& state, DType dtype, StreamPath path) {
  struct Shape {
    int n, k;
  };
  std::vector<Shape> shapes;
  for (int l = 0; l < state.range(0); ++l)
    for (Shape s : {Shape{kHidden + 2 * kKvHeads * kHeadDim, kHidden}, Shape{kHidden, kHidden},
                    Shape{2 * kFfn, kHidden}, Shape{kHidden, kFfn}})
      shapes.push_back(s);
  shapes.push_back({kVocab, kHidden});
  std::vector<std::vector<float>> w32;
  std::vector<std::vector<std::uint16_t>> w16;
  double bytes = 0, flops = 0;
  for (const Shape& s : shapes) {
    const std::size_t count = std::size_t(s.n) * s.k;
    std::vector<float> wf = filled(count);
    if (dtype == DType::kFp32) {
      w32.push_back(std::move(wf));
    } else {
      w16.emplace_back(count);
      narrow_to_half(w16.back().data(), wf.data(), std::int64_t(count), dtype);
    }
    bytes += double(count) * (dtype == DType::kFp32 ? 4 : 2) + 4.0 * (s.n + s.k);
    flops += 2.0 * double(count);
  }
  const std::vector<float> x = filled(kFfn);
  std::vector<float> out(kVocab);
  const RateTimer timer;
  for (auto _ : state) {
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      const int n = shapes[i].n, k = shapes[i].k;
      if (dtype != DType::kFp32)
        matmul_half(out.data(), x.data(), w16[i].data(), dtype, 1, n, k, k);
      else if (path == StreamPath::kSgemv)
        cblas_sgemv(CblasRowMajor, CblasNoTrans, n, k, 1.0f, w32[i].data(), k, x.data(), 1, 0.0f,
                    out.data(), 1);
      else
        matmul(out.data(), x.data(), w32[i].data(), 1, n, k, k);
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  timer.set_rates(state, bytes, flops);
}
BENCHMARK_CAPTURE(BM_decode_stream, fp32_engine, DType::kFp32, StreamPath::kEngine)
    ->ArgName("layers")->Arg(4)->UseRealTime()->MinTime(0.5)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_decode_stream, fp32_sgemv, DType::kFp32, StreamPath::kSgemv)
    ->ArgName("layers")->Arg(4)->UseRealTime()->MinTime(0.5)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_decode_stream, bf16_engine, DType::kBf16, StreamPath::kEngine)
    ->ArgName("layers")->Arg(4)->UseRealTime()->MinTime(0.5)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_decode_stream, fp16_engine, DType::kFp16, StreamPath::kEngine)
    ->ArgName("layers")->Arg(4)->UseRealTime()->MinTime(0.5)->Unit(benchmark::kMillisecond);

void BM_matmul_reference(benchmark::State& state) {
  const int m = state.range(0), n = state.range(1), k = state.range(2);
  const std::vector<float> x = filled(static_cast<std::size_t>(m) * k);
  const std::vector<float> w = filled(static_cast<std::size_t>(n) * k);
  std::vector<float> out(static_cast<std::size_t>(m) * n);
  const RateTimer timer;
  for (auto _ : state) {
    matmul_reference(out.data(), x.data(), w.data(), m, n, k, k);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  timer.set_rates(state, 4.0 * (double(m) * k + double(n) * k + double(m) * n), 2.0 * m * n * k);
}
BENCHMARK(BM_matmul_reference)
    ->ArgNames({"m", "n", "k"})
    ->Args({64, 256, 256})
    ->UseRealTime()
    ->MinTime(kMinTimeS)
    ->Unit(benchmark::kMillisecond);

// ---- attention ------------------------------------------------------------------------------

// decode = true: attention_decode (what the CPU backend runs for a few new tokens; the
// vectorised kernel on AVX-512 CPUs); false: the reference loop.
void run_attention(benchmark::State& state, int batch, int n_new, int past_len,
                   bool decode = false) {
  const int q_dim = kHeads * kHeadDim, kv_dim = kKvHeads * kHeadDim;
  const AttentionShape s{.batch = batch,
                         .n_new = n_new,
                         .past_len = past_len,
                         .n_heads = kHeads,
                         .n_kv_heads = kKvHeads,
                         .head_dim = kHeadDim,
                         .q_stride = q_dim,
                         .out_stride = q_dim,
                         .cache_seq = past_len + n_new};
  const std::size_t rows = static_cast<std::size_t>(batch) * n_new;
  const std::size_t cache = static_cast<std::size_t>(batch) * s.cache_seq * kv_dim;
  const std::vector<float> q = filled(rows * q_dim), k = filled(cache), v = filled(cache);
  std::vector<float> out(rows * q_dim);
  const RateTimer timer;
  for (auto _ : state) {
    if (decode)
      attention_decode(out.data(), q.data(), k.data(), v.data(), s, row_major_strides(s));
    else
      attention(out.data(), q.data(), k.data(), v.data(), s);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  // Query t sees past_len + t + 1 keys; each key costs 2 * head_dim FLOPs for q.k and as many
  // for p * v, per query head.
  double keys_seen = 0;
  for (int t = 0; t < n_new; ++t) keys_seen += past_len + t + 1;
  const double flops = 4.0 * kHeadDim * kHeads * batch * keys_seen;
  const double bytes = 4.0 * (2.0 * rows * q_dim + 2.0 * cache);  // q, out, k, v once each
  timer.set_rates(state, bytes, flops);
}

void BM_attention_prefill(benchmark::State& state) {
  run_attention(state, state.range(0), state.range(1), 0);
}
BENCHMARK(BM_attention_prefill)
    ->ArgNames({"batch", "n_new"})
    ->ArgsProduct({{1, 2, 4}, {128}})
    ->UseRealTime()
    ->MinTime(kMinTimeS)
    ->Unit(benchmark::kMillisecond);

// One decode step over a cache of `past` positions (143: the small shape of the issue, 144 keys
// seen); bytes_per_second counts the K and V cache once (what bounds decode attention).
void BM_attention_decode(benchmark::State& state) {
  run_attention(state, state.range(0), 1, state.range(1), true);
}
BENCHMARK(BM_attention_decode)
    ->ArgNames({"batch", "past"})
    ->ArgsProduct({{1, 4, 16}, {143, 512, 2047}})
    ->Args({1, 16})  // short context: a 33-token batch-1 decode's middle step
    ->UseRealTime()
    ->MinTime(kMinTimeS)
    ->Unit(benchmark::kMicrosecond);
void BM_attention_decode_reference(benchmark::State& state) {
  run_attention(state, state.range(0), 1, state.range(1), false);
}
BENCHMARK(BM_attention_decode_reference)
    ->ArgNames({"batch", "past"})
    ->ArgsProduct({{1, 16}, {143, 2047}})
    ->UseRealTime()
    ->MinTime(kMinTimeS)
    ->Unit(benchmark::kMicrosecond);

// ---- per-row kernels: one decode row and a 512-token prefill --------------------------------

void BM_rmsnorm(benchmark::State& state) {
  const int n_rows = state.range(0);
  const std::vector<float> x = filled(static_cast<std::size_t>(n_rows) * kHidden);
  const std::vector<float> weight = filled(kHidden);
  std::vector<float> out(x.size());
  const RateTimer timer;
  for (auto _ : state) {
    rmsnorm(out.data(), x.data(), weight.data(), n_rows, kHidden, 1e-5f);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  // Per element: square + add for the mean, then two multiplies.
  timer.set_rates(state, 4.0 * (2.0 * x.size() + kHidden), 4.0 * x.size());
}
BENCHMARK(BM_rmsnorm)->ArgName("rows")->Arg(1)->Arg(512)->UseRealTime()->MinTime(kMinTimeS);

void BM_rope(benchmark::State& state) {
  const int n_rows = state.range(0), row = kHeads * kHeadDim;
  std::vector<float> x = filled(static_cast<std::size_t>(n_rows) * row);
  std::vector<int32_t> positions(n_rows);
  for (int r = 0; r < n_rows; ++r) positions[r] = r;
  const RateTimer timer;
  for (auto _ : state) {
    rope(x.data(), n_rows, row, kHeads, kHeadDim, positions.data(), 10000.0f);
    benchmark::DoNotOptimize(x.data());
    benchmark::ClobberMemory();
  }
  // Per pair: 4 multiplies and 2 adds (cos/sin evaluation not counted).
  timer.set_rates(state, 4.0 * 2.0 * x.size(), 3.0 * x.size());
}
BENCHMARK(BM_rope)->ArgName("rows")->Arg(1)->Arg(512)->UseRealTime()->MinTime(kMinTimeS);

void BM_swiglu(benchmark::State& state) {
  const int n_rows = state.range(0);
  const std::vector<float> gate_up = filled(static_cast<std::size_t>(n_rows) * 2 * kFfn);
  std::vector<float> out(static_cast<std::size_t>(n_rows) * kFfn);
  const RateTimer timer;
  for (auto _ : state) {
    swiglu(out.data(), gate_up.data(), n_rows, kFfn);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  // Per element: negate, add, divide, multiply (exp not counted).
  timer.set_rates(state, 4.0 * 3.0 * out.size(), 4.0 * out.size());
}
BENCHMARK(BM_swiglu)->ArgName("rows")->Arg(1)->Arg(512)->UseRealTime()->MinTime(kMinTimeS);

void BM_add_inplace(benchmark::State& state) {
  const std::size_t n = static_cast<std::size_t>(state.range(0)) * kHidden;
  std::vector<float> x = filled(n);
  const std::vector<float> y = filled(n);
  const RateTimer timer;
  for (auto _ : state) {
    add_inplace(x.data(), y.data(), n);
    benchmark::DoNotOptimize(x.data());
    benchmark::ClobberMemory();
  }
  timer.set_rates(state, 4.0 * 3.0 * n, double(n));
}
BENCHMARK(BM_add_inplace)->ArgName("rows")->Arg(1)->Arg(512)->UseRealTime()->MinTime(kMinTimeS);

void BM_add_bias_rows(benchmark::State& state) {
  const int n_rows = state.range(0), n = kHidden + 2 * kKvHeads * kHeadDim;  // a qkv row
  std::vector<float> x = filled(static_cast<std::size_t>(n_rows) * n);
  const std::vector<float> bias = filled(n);
  const RateTimer timer;
  for (auto _ : state) {
    add_bias_rows(x.data(), n_rows, n, bias.data(), n);
    benchmark::DoNotOptimize(x.data());
    benchmark::ClobberMemory();
  }
  timer.set_rates(state, 4.0 * (2.0 * x.size() + n), double(x.size()));
}
BENCHMARK(BM_add_bias_rows)->ArgName("rows")->Arg(1)->Arg(512)->UseRealTime()->MinTime(kMinTimeS);

// ---- copies (flops_per_second is 0) -----------------------------------------------------------

void BM_embedding(benchmark::State& state) {
  const int n_tokens = state.range(0);
  const std::vector<float> table = filled(static_cast<std::size_t>(kVocab) * kHidden);
  std::vector<int32_t> tokens(n_tokens);
  for (int i = 0; i < n_tokens; ++i) tokens[i] = (i * 7919) % kVocab;
  std::vector<float> out(static_cast<std::size_t>(n_tokens) * kHidden);
  const RateTimer timer;
  for (auto _ : state) {
    embedding(out.data(), table.data(), tokens.data(), n_tokens, kHidden);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  timer.set_rates(state, 4.0 * 2.0 * out.size(), 0.0);
}
BENCHMARK(BM_embedding)->ArgName("tokens")->Arg(1)->Arg(512)->UseRealTime()->MinTime(kMinTimeS);

void BM_gather_rows(benchmark::State& state) {
  // Picks the last prompt position of each of 16 sequences (the logits rows to keep).
  const int n_rows = 16, seq = state.range(0);
  const std::vector<float> x = filled(static_cast<std::size_t>(n_rows) * seq * kHidden);
  std::vector<int32_t> rows(n_rows);
  for (int r = 0; r < n_rows; ++r) rows[r] = r * seq + seq - 1;
  std::vector<float> out(static_cast<std::size_t>(n_rows) * kHidden);
  const RateTimer timer;
  for (auto _ : state) {
    gather_rows(out.data(), x.data(), rows.data(), n_rows, kHidden);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  timer.set_rates(state, 4.0 * 2.0 * out.size(), 0.0);
}
BENCHMARK(BM_gather_rows)->ArgName("seq")->Arg(128)->UseRealTime()->MinTime(kMinTimeS);

void BM_kv_cache_write(benchmark::State& state) {
  const int batch = state.range(0), n_new = state.range(1), cache_seq = 1024;
  const int kv_dim = kKvHeads * kHeadDim;
  const std::vector<float> src = filled(static_cast<std::size_t>(batch) * n_new * kv_dim);
  std::vector<float> cache(static_cast<std::size_t>(batch) * cache_seq * kv_dim);
  const RateTimer timer;
  for (auto _ : state) {
    kv_cache_write(cache.data(), src.data(), kv_dim, batch, n_new, 0, cache_seq, kv_dim);
    benchmark::DoNotOptimize(cache.data());
    benchmark::ClobberMemory();
  }
  timer.set_rates(state, 4.0 * 2.0 * src.size(), 0.0);
}
BENCHMARK(BM_kv_cache_write)
    ->ArgNames({"batch", "n_new"})
    ->Args({16, 1})
    ->Args({4, 512})
    ->UseRealTime()
    ->MinTime(kMinTimeS);

// Greedy sampling over a vocabulary-sized row: the engine's argmax (the AVX-512 kernel where the
// CPU has it) and the reference loop it replaced.
template <void (*Argmax)(int32_t*, const float*, int, int)>
void BM_argmax(benchmark::State& state) {
  const int n_rows = state.range(0);
  const std::vector<float> logits = filled(static_cast<std::size_t>(n_rows) * kVocab);
  std::vector<int32_t> out(n_rows);
  const RateTimer timer;
  for (auto _ : state) {
    Argmax(out.data(), logits.data(), n_rows, kVocab);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  timer.set_rates(state, 4.0 * logits.size(), double(logits.size()));  // one compare per logit
}
void argmax_rows_counts(benchmark::internal::Benchmark* b) {
  b->ArgName("rows")->Arg(1)->Arg(4)->Arg(16)->UseRealTime()->MinTime(kMinTimeS);
}
BENCHMARK(BM_argmax<argmax_rows>)->Name("BM_argmax_rows")->Apply(argmax_rows_counts);
BENCHMARK(BM_argmax<argmax_rows_reference>)
    ->Name("BM_argmax_rows_reference")
    ->Apply(argmax_rows_counts);

}  // namespace
}  // namespace llmbench::cpu

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
