// Google Benchmark timings of the CUDA kernels (kernels/cuda) and the cuBLAS GEMMs at llama2-7b
// shapes (hidden 4096, ffn 11008, 32 heads of 128, vocab 32000), one decode row and a 16 x 512
// prefill; the fused kernels are in bench_cuda_fused.cpp, linked into the same binary. Each
// iteration (cuda_bench_timer.h) flushes the L2 cache (a memset of twice its size, outside the
// timed span), then times the op alone with a pair of CUDA events on the benchmark's stream
// (UseManualTime + SetIterationTime). Counters bytes_per_second (unique bytes read + written)
// and flops_per_second are computed against that device time, here, rather than with kIsRate
// (which Google Benchmark 1.7 divides by CPU time). Without a device every benchmark reports
// SkipWithError. Not a test: correctness lives in tests/cuda; not run by ctest.
#include <benchmark/benchmark.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/cuda/argmax.cuh"
#include "kernels/cuda/attention.cuh"
#include "kernels/cuda/attention_gemm.cuh"
#include "kernels/cuda/convert.cuh"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/embedding.cuh"
#include "kernels/cuda/gemm.cuh"
#include "kernels/cuda/gemv_half.cuh"
#include "kernels/cuda/kv_cache.cuh"
#include "kernels/cuda/rmsnorm.cuh"
#include "kernels/cuda/rope.cuh"
#include "kernels/cuda/swiglu.cuh"
#include "tests/bench/cuda_bench_timer.h"
#include "tests/cuda/device_buffer.h"

namespace llmbench::cuda {
namespace {

using namespace bench;  // the shapes, DeviceTimer and the inputs (cuda_bench_timer.h)

// ---- GEMMs: out[m, n] = x[m, k] . w[n, k]^T -----------------------------------------------

enum class GemmType { kF32, kBf16, kF16 };

void BM_gemm(benchmark::State& state, GemmType type) {
  if (!have_device(state)) return;
  const int m = state.range(0), n = state.range(1), k = state.range(2);
  DeviceTimer timer;
  CublasHandle cublas;
  cublas.set_stream(timer.stream());
  const std::size_t x_size = static_cast<std::size_t>(m) * k;
  const std::size_t w_size = static_cast<std::size_t>(n) * k;
  DeviceBuffer<float> x = filled(x_size), w = filled(w_size);
  DeviceBuffer<float> out(static_cast<std::size_t>(m) * n);
  DeviceBuffer<__nv_bfloat16> x_bf16(type == GemmType::kBf16 ? x_size : 0),
      w_bf16(type == GemmType::kBf16 ? w_size : 0);
  DeviceBuffer<__half> x_f16(type == GemmType::kF16 ? x_size : 0),
      w_f16(type == GemmType::kF16 ? w_size : 0);
  if (type == GemmType::kBf16) {
    convert_f32_to_bf16(x_bf16.get(), x.get(), x_size, timer.stream());
    convert_f32_to_bf16(w_bf16.get(), w.get(), w_size, timer.stream());
  } else if (type == GemmType::kF16) {
    convert_f32_to_f16(x_f16.get(), x.get(), x_size, timer.stream());
    convert_f32_to_f16(w_f16.get(), w.get(), w_size, timer.stream());
  }
  const double element_bytes = type == GemmType::kF32 ? 4.0 : 2.0;
  const double bytes = element_bytes * (static_cast<double>(x_size) + w_size) + 4.0 * m * n;
  timer.run(state, bytes, 2.0 * m * n * k, [&] {
    switch (type) {
      case GemmType::kF32: gemm_f32(cublas.get(), out.get(), x.get(), w.get(), m, n, k, k); break;
      case GemmType::kBf16:
        gemm_bf16(cublas.get(), out.get(), x_bf16.get(), w_bf16.get(), m, n, k, k);
        break;
      case GemmType::kF16:
        gemm_f16(cublas.get(), out.get(), x_f16.get(), w_f16.get(), m, n, k, k);
        break;
    }
  });
}

void gemm_shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"m", "n", "k"});
  for (const int m : {1, 16, kPrefillRows}) {
    b->Args({m, kHidden, kHidden});  // attention projections
    b->Args({m, 2 * kFfn, kHidden});  // fused gate/up
    b->Args({m, kHidden, kFfn});      // down
  }
  b->Args({1, kVocab, kHidden});  // LM head, decode
}

BENCHMARK_CAPTURE(BM_gemm, f32, GemmType::kF32)->Apply(gemm_shapes)->UseManualTime()
    ->MinTime(kMinTimeS)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_gemm, bf16, GemmType::kBf16)->Apply(gemm_shapes)->UseManualTime()
    ->MinTime(kMinTimeS)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_gemm, f16, GemmType::kF16)->Apply(gemm_shapes)->UseManualTime()
    ->MinTime(kMinTimeS)->Unit(benchmark::kMicrosecond);

// The decode GEMM the CUDA backend runs for 16-bit weights at m <= kGemvRowsMax: gemv_f16
// against the same operands as BM_gemm/f16 (compare the two at m 1 and 4).
void BM_gemv_f16(benchmark::State& state) {
  if (!have_device(state)) return;
  const int m = state.range(0), n = state.range(1), k = state.range(2);
  DeviceTimer timer;
  const std::size_t x_size = static_cast<std::size_t>(m) * k;
  const std::size_t w_size = static_cast<std::size_t>(n) * k;
  DeviceBuffer<float> x = filled(x_size), w = filled(w_size);
  DeviceBuffer<float> out(static_cast<std::size_t>(m) * n);
  DeviceBuffer<__half> x_f16(x_size), w_f16(w_size);
  convert_f32_to_f16(x_f16.get(), x.get(), x_size, timer.stream());
  convert_f32_to_f16(w_f16.get(), w.get(), w_size, timer.stream());
  const double bytes = 2.0 * (static_cast<double>(x_size) + w_size) + 4.0 * m * n;
  timer.run(state, bytes, 2.0 * m * n * k, [&] {
    gemv_f16(out.get(), x_f16.get(), w_f16.get(), m, n, k, k, timer.stream());
  });
}
BENCHMARK(BM_gemv_f16)
    ->ArgNames({"m", "n", "k"})
    ->ArgsProduct({{1, 4}, {kHidden}, {kHidden}})
    ->ArgsProduct({{1, 4}, {2 * kFfn}, {kHidden}})
    ->ArgsProduct({{1, 4}, {kHidden}, {kFfn}})
    ->Args({1, kVocab, kHidden})
    ->UseManualTime()
    ->MinTime(kMinTimeS)
    ->Unit(benchmark::kMicrosecond);

// ---- attention ---------------------------------------------------------------------------

void BM_attention(benchmark::State& state) {
  if (!have_device(state)) return;
  const int batch = state.range(0), n_new = state.range(1), past_len = state.range(2);
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
  DeviceTimer timer;
  DeviceBuffer<float> q = filled(rows * q_dim), k = filled(cache), v = filled(cache);
  DeviceBuffer<float> out(rows * q_dim);
  // Query t sees past_len + t + 1 keys: 2 * head_dim FLOPs for q.k and as many for p * v each.
  double keys_seen = 0;
  for (int t = 0; t < n_new; ++t) keys_seen += past_len + t + 1;
  const double flops = 4.0 * kHeadDim * kHeads * batch * keys_seen;
  const double bytes = 4.0 * (2.0 * rows * q_dim + 2.0 * cache);  // q, out, k, v once each
  // path 0: the plain tiled kernel, one block per query. path 1: what the CUDA backend runs by
  // default, the tiled kernel split over keys (two blocks per SM) for few queries, its splits
  // merged by their last block, cuBLAS GEMMs from 32 queries. path 2: path 1 with the streamed
  // kernel (--decode-attention streamed). path 3: path 1 with the splits merged by the combine
  // kernel, as the backend did before the twentieth session (one launch more).
  const bool backend_path = state.range(3) != 0;
  const bool merge_in_kernel = state.range(3) != 3;
  const AttentionKernel kernel =
      state.range(3) == 2 ? AttentionKernel::kStreamed : AttentionKernel::kTiled;
  int device = 0, sms = 0;
  LLMBENCH_CUDA_CHECK(cudaGetDevice(&device));
  LLMBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const bool gemm = backend_path && n_new >= 32;
  const std::size_t split_floats = backend_path && !gemm ? attention_split_floats(s, 2 * sms) : 0;
  const std::size_t gemm_bytes = gemm ? attention_gemm_scratch_bytes(s, std::size_t{256} << 20) : 0;
  DeviceBuffer<float> split_scratch(split_floats);
  DeviceBuffer<unsigned char> gemm_scratch(gemm_bytes);
  CublasHandle cublas;
  cublas.set_stream(timer.stream());
  // One arrival counter per query, zero (the kernels set them back to zero after each call).
  const std::size_t queries = static_cast<std::size_t>(batch) * kHeads * n_new;
  DeviceBuffer<unsigned> arrivals(std::vector<unsigned>(queries, 0u));
  AttentionSplit split{split_scratch.get(), split_floats, 2 * sms};
  if (merge_in_kernel) split.arrivals = arrivals.get(), split.arrival_slots = queries;
  timer.run(state, bytes, flops, [&] {
    if (gemm) {
      attention_gemm(cublas.get(), out.get(), q.get(), k.get(), v.get(), s, row_major_strides(s),
                     gemm_scratch.get(), gemm_bytes, timer.stream());
    } else {
      attention(out.get(), q.get(), k.get(), v.get(), s, timer.stream(), split, kernel);
    }
  });
}
BENCHMARK(BM_attention)
    ->ArgNames({"batch", "n_new", "past", "path"})
    ->ArgsProduct({{1}, {1}, {128, 256, 512, 1024, 2048, 4096}, {0, 1, 2, 3}})
    ->ArgsProduct({{16}, {1}, {128, 512, 4096}, {0, 1, 2}})
    ->ArgsProduct({{1, 16}, {512}, {0}, {0, 1}})
    ->UseManualTime()
    ->MinTime(kMinTimeS)
    ->Unit(benchmark::kMicrosecond);

// ---- per-row and elementwise kernels: one decode row, 16 rows, a 16 x 512 prefill --------

void row_counts(benchmark::internal::Benchmark* b) {
  b->ArgNames({"rows"})->Arg(1)->Arg(16)->Arg(kPrefillRows);
}

void BM_rmsnorm(benchmark::State& state) {
  if (!have_device(state)) return;
  const int rows = state.range(0);
  const std::size_t n = static_cast<std::size_t>(rows) * kHidden;
  DeviceTimer timer;
  DeviceBuffer<float> x = filled(n), weight = filled(kHidden), out(n);
  timer.run(state, 4.0 * (2.0 * n + kHidden), 4.0 * n, [&] {
    rmsnorm(out.get(), x.get(), weight.get(), rows, kHidden, 1e-5f, timer.stream());
  });
}
BENCHMARK(BM_rmsnorm)->Apply(row_counts)->UseManualTime()->MinTime(kMinTimeS)
    ->Unit(benchmark::kMicrosecond);

void BM_rope(benchmark::State& state) {
  if (!have_device(state)) return;
  const int rows = state.range(0);
  const std::size_t n = static_cast<std::size_t>(rows) * kHidden;
  DeviceTimer timer;
  DeviceBuffer<float> x = filled(n);
  DeviceBuffer<int32_t> positions = ids(rows, 4096);
  timer.run(state, 4.0 * 2.0 * n, 3.0 * n, [&] {
    rope(x.get(), rows, kHidden, kHeads, kHeadDim, positions.get(), 10000.0f, timer.stream());
  });
}
BENCHMARK(BM_rope)->Apply(row_counts)->UseManualTime()->MinTime(kMinTimeS)
    ->Unit(benchmark::kMicrosecond);

void BM_swiglu(benchmark::State& state) {
  if (!have_device(state)) return;
  const int rows = state.range(0);
  const std::size_t n = static_cast<std::size_t>(rows) * kFfn;
  DeviceTimer timer;
  DeviceBuffer<float> gate_up = filled(2 * n), out(n);
  timer.run(state, 4.0 * 3.0 * n, 5.0 * n, [&] {
    swiglu(out.get(), gate_up.get(), rows, kFfn, timer.stream());
  });
}
BENCHMARK(BM_swiglu)->Apply(row_counts)->UseManualTime()->MinTime(kMinTimeS)
    ->Unit(benchmark::kMicrosecond);

void BM_add_inplace(benchmark::State& state) {
  if (!have_device(state)) return;
  const std::size_t n = static_cast<std::size_t>(state.range(0)) * kHidden;
  DeviceTimer timer;
  DeviceBuffer<float> x = filled(n), y = filled(n);
  timer.run(state, 4.0 * 3.0 * n, 1.0 * n,
            [&] { add_inplace(x.get(), y.get(), n, timer.stream()); });
}
BENCHMARK(BM_add_inplace)->Apply(row_counts)->UseManualTime()->MinTime(kMinTimeS)
    ->Unit(benchmark::kMicrosecond);

void BM_embedding(benchmark::State& state) {
  if (!have_device(state)) return;
  const int rows = state.range(0);
  DeviceTimer timer;
  DeviceBuffer<float> table = filled(static_cast<std::size_t>(kVocab) * kHidden);
  DeviceBuffer<float> out(static_cast<std::size_t>(rows) * kHidden);
  DeviceBuffer<int32_t> tokens = ids(rows, kVocab);
  timer.run(state, 4.0 * 2.0 * rows * kHidden, 0.0, [&] {
    embedding(out.get(), table.get(), tokens.get(), rows, kHidden, timer.stream());
  });
}
BENCHMARK(BM_embedding)->Apply(row_counts)->UseManualTime()->MinTime(kMinTimeS)
    ->Unit(benchmark::kMicrosecond);

void BM_kv_cache_write(benchmark::State& state) {
  if (!have_device(state)) return;
  const int batch = state.range(0), n_new = state.range(1), past_len = 512;
  const int kv_dim = kKvHeads * kHeadDim, cache_seq = past_len + n_new;
  DeviceTimer timer;
  DeviceBuffer<float> cache(static_cast<std::size_t>(batch) * cache_seq * kv_dim);
  DeviceBuffer<float> src = filled(static_cast<std::size_t>(batch) * n_new * kv_dim);
  timer.run(state, 4.0 * 2.0 * batch * n_new * kv_dim, 0.0, [&] {
    kv_cache_write(cache.get(), src.get(), kv_dim, batch, n_new, past_len, cache_seq, kv_dim,
                   timer.stream());
  });
}
BENCHMARK(BM_kv_cache_write)
    ->ArgNames({"batch", "n_new"})
    ->Args({1, 1})
    ->Args({16, 1})
    ->Args({16, 512})
    ->UseManualTime()
    ->MinTime(kMinTimeS)
    ->Unit(benchmark::kMicrosecond);

void BM_argmax(benchmark::State& state) {
  if (!have_device(state)) return;
  const int rows = state.range(0);
  const std::size_t n = static_cast<std::size_t>(rows) * kVocab;
  DeviceTimer timer;
  DeviceBuffer<float> logits = filled(n);
  DeviceBuffer<int32_t> out(rows);
  timer.run(state, 4.0 * n, 0.0, [&] {
    argmax_rows(out.get(), logits.get(), rows, kVocab, timer.stream());
  });
}
BENCHMARK(BM_argmax)->ArgNames({"rows"})->Arg(1)->Arg(16)->UseManualTime()->MinTime(kMinTimeS)
    ->Unit(benchmark::kMicrosecond);

void BM_convert_f32_to_bf16(benchmark::State& state) {
  if (!have_device(state)) return;
  const std::size_t n = static_cast<std::size_t>(kHidden) * kHidden;  // one square weight
  DeviceTimer timer;
  DeviceBuffer<float> x = filled(n);
  DeviceBuffer<__nv_bfloat16> out(n);
  timer.run(state, 6.0 * n, 0.0, [&] {
    convert_f32_to_bf16(out.get(), x.get(), n, timer.stream());
  });
}
BENCHMARK(BM_convert_f32_to_bf16)->UseManualTime()->MinTime(kMinTimeS)
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace llmbench::cuda

BENCHMARK_MAIN();
