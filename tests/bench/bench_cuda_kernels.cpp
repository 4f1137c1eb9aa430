// Google Benchmark timings of the CUDA kernels (kernels/cuda) and the cuBLAS GEMMs at llama2-7b
// shapes (hidden 4096, ffn 11008, 32 heads of 128, vocab 32000), one decode row and a 16 x 512
// prefill. Each iteration flushes the L2 cache (a memset of twice its size, outside the timed
// span), then times the op alone with a pair of CUDA events on the benchmark's stream
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
#include <functional>
#include <utility>
#include <vector>

#include "kernels/cuda/add_rmsnorm.cuh"
#include "kernels/cuda/argmax.cuh"
#include "kernels/cuda/attention.cuh"
#include "kernels/cuda/attention_gemm.cuh"
#include "kernels/cuda/convert.cuh"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_event.h"
#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/embedding.cuh"
#include "kernels/cuda/gemm.cuh"
#include "kernels/cuda/gemv_half.cuh"
#include "kernels/cuda/kv_cache.cuh"
#include "kernels/cuda/rmsnorm.cuh"
#include "kernels/cuda/rope.cuh"
#include "kernels/cuda/rope_kv_write.cuh"
#include "kernels/cuda/swiglu.cuh"
#include "kernels/cuda/swiglu_down.cuh"
#include "tests/cuda/device_buffer.h"

namespace llmbench::cuda {
namespace {

using test::DeviceBuffer;

// llama2-7b.
constexpr int kHidden = 4096;
constexpr int kFfn = 11008;
constexpr int kHeads = 32;
constexpr int kKvHeads = 32;
constexpr int kHeadDim = 128;
constexpr int kVocab = 32000;
constexpr int kPrefillRows = 16 * 512;  // batch 16 x prompt 512
constexpr double kMinTimeS = 0.2;

// ---- measurement -------------------------------------------------------------------------

// One stream, an event pair and an L2-flush buffer, created per benchmark run.
class DeviceTimer {
 public:
  DeviceTimer() {
    LLMBENCH_CUDA_CHECK(cudaStreamCreate(&stream_));
    int device = 0, l2_bytes = 0;
    LLMBENCH_CUDA_CHECK(cudaGetDevice(&device));
    LLMBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
    flush_ = DeviceBuffer<unsigned char>(2 * static_cast<std::size_t>(l2_bytes));
  }
  ~DeviceTimer() {
    LLMBENCH_CUDA_CHECK_NOTHROW(cudaStreamDestroy(stream_));
  }
  DeviceTimer(const DeviceTimer&) = delete;
  DeviceTimer& operator=(const DeviceTimer&) = delete;

  cudaStream_t stream() const { return stream_; }

  // Runs the timing loop: per iteration, flush L2, then time enqueue() between two events.
  // Sets bytes_per_second and flops_per_second from the summed device time.
  void run(benchmark::State& state, double bytes, double flops,
           const std::function<void()>& enqueue) {
    enqueue();  // warm-up: first-launch costs (module load, cuBLAS heuristics) stay out
    LLMBENCH_CUDA_CHECK(cudaStreamSynchronize(stream_));
    double total_s = 0.0;
    for (auto _ : state) {
      LLMBENCH_CUDA_CHECK(cudaMemsetAsync(flush_.get(), 0, flush_.size(), stream_));
      events_.start(stream_);
      enqueue();
      events_.stop(stream_);
      const float ms = events_.elapsed_ms();
      state.SetIterationTime(ms * 1e-3);
      total_s += ms * 1e-3;
    }
    const double iters = static_cast<double>(state.iterations());
    if (total_s > 0.0) {
      state.counters["bytes_per_second"] = benchmark::Counter(bytes * iters / total_s);
      state.counters["flops_per_second"] = benchmark::Counter(flops * iters / total_s);
    }
  }

 private:
  cudaStream_t stream_ = nullptr;
  cuda::CudaEventPair events_;
  DeviceBuffer<unsigned char> flush_{0};
};

// False (and the benchmark marked skipped with an error) when there is no device.
bool have_device(benchmark::State& state) {
  if (test::cuda_device_present()) return true;
  state.SkipWithError("no CUDA device");
  return false;
}

// A device array of n deterministic values in [-0.5, 0.5).
DeviceBuffer<float> filled(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>((i * 2654435761u) % 1000) / 1000 - 0.5f;
  return DeviceBuffer<float>(v);
}

DeviceBuffer<int32_t> ids(std::size_t n, int32_t modulo) {
  std::vector<int32_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<int32_t>((i * 7919u) % modulo);
  return DeviceBuffer<int32_t>(v);
}

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
  // default, the tiled kernel split over keys (two blocks per SM) for few queries, cuBLAS GEMMs
  // from 32 queries. path 2: path 1 with the streamed kernel (--decode-attention streamed).
  const bool backend_path = state.range(3) != 0;
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
  const AttentionSplit split{split_scratch.get(), split_floats, 2 * sms};
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
    ->ArgsProduct({{1}, {1}, {128, 256, 512, 1024, 2048, 4096}, {0, 1, 2}})
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

// ---- fused small ops (--fuse small) against the unfused sequence they replace ----------------
// fused 0: the unfused kernels back to back on the stream; fused 1: the one fused kernel. Both
// times are device time between two events, so they include the gaps between the unfused
// kernels on the device but not the host's launch cost of each (which the fusion also saves).

void BM_add_rmsnorm(benchmark::State& state) {
  if (!have_device(state)) return;
  const int rows = state.range(0);
  const bool fused = state.range(1) != 0;
  const std::size_t n = static_cast<std::size_t>(rows) * kHidden;
  DeviceTimer timer;
  DeviceBuffer<float> x = filled(n), proj = filled(n), weight = filled(kHidden), h(n);
  // Unfused: the add reads x and proj and writes x; the norm reads x and writes h.
  const double bytes = 4.0 * ((fused ? 4.0 : 5.0) * n + kHidden);
  timer.run(state, bytes, 5.0 * n, [&] {
    if (fused) {
      add_rmsnorm(x.get(), proj.get(), h.get(), weight.get(), rows, kHidden, 1e-5f,
                  timer.stream());
    } else {
      add_inplace(x.get(), proj.get(), n, timer.stream());
      rmsnorm(h.get(), x.get(), weight.get(), rows, kHidden, 1e-5f, timer.stream());
    }
  });
}
BENCHMARK(BM_add_rmsnorm)
    ->ArgNames({"rows", "fused"})
    ->ArgsProduct({{1, 16, kPrefillRows}, {0, 1}})
    ->UseManualTime()
    ->MinTime(kMinTimeS)
    ->Unit(benchmark::kMicrosecond);

void BM_rope_kv_write(benchmark::State& state) {
  if (!have_device(state)) return;
  const int batch = state.range(0);
  const bool fused = state.range(1) != 0;
  RopeKvShape s;
  s.batch = batch, s.n_new = 1, s.past_len = 512, s.cache_seq = 4096;
  s.n_heads = kHeads, s.n_kv_heads = kKvHeads, s.head_dim = kHeadDim;
  DeviceTimer timer;
  const std::size_t cache_n = static_cast<std::size_t>(batch) * s.cache_seq * s.kv_dim();
  DeviceBuffer<float> qkv = filled(static_cast<std::size_t>(s.rows()) * s.qkv_dim());
  DeviceBuffer<float> k_cache(cache_n), v_cache(cache_n);
  DeviceBuffer<int32_t> positions(std::vector<int32_t>(static_cast<std::size_t>(batch), 512));
  const double q = static_cast<double>(s.rows()) * s.q_dim();
  const double kv = static_cast<double>(s.rows()) * s.kv_dim();
  const double bytes = 4.0 * (2.0 * q + (fused ? 5.0 : 6.0) * kv);
  timer.run(state, bytes, 3.0 * (q + kv), [&] {
    if (fused) {
      rope_kv_write(qkv.get(), k_cache.get(), v_cache.get(), positions.get(), s, timer.stream());
      return;
    }
    rope(qkv.get(), s.rows(), s.qkv_dim(), s.n_heads, s.head_dim, positions.get(), s.theta,
         timer.stream());
    rope(qkv.get() + s.q_dim(), s.rows(), s.qkv_dim(), s.n_kv_heads, s.head_dim, positions.get(),
         s.theta, timer.stream());
    kv_cache_write(k_cache.get(), qkv.get() + s.q_dim(), s.qkv_dim(), batch, 1, s.past_len,
                   s.cache_seq, s.kv_dim(), timer.stream());
    kv_cache_write(v_cache.get(), qkv.get() + s.q_dim() + s.kv_dim(), s.qkv_dim(), batch, 1,
                   s.past_len, s.cache_seq, s.kv_dim(), timer.stream());
  });
}
BENCHMARK(BM_rope_kv_write)
    ->ArgNames({"batch", "fused"})
    ->ArgsProduct({{1, 16}, {0, 1}})
    ->UseManualTime()
    ->MinTime(kMinTimeS)
    ->Unit(benchmark::kMicrosecond);

// llama2-7b's down projection at m decode rows, fp16 weights: swiglu, the fp16 conversion of its
// output and gemv_f16 (what matmul_half runs), or swiglu_down_f16.
void BM_swiglu_down_f16(benchmark::State& state) {
  if (!have_device(state)) return;
  const int m = state.range(0);
  const bool fused = state.range(1) != 0;
  DeviceTimer timer;
  const std::size_t act_n = static_cast<std::size_t>(m) * kFfn;
  const std::size_t w_n = static_cast<std::size_t>(kHidden) * kFfn;
  DeviceBuffer<float> gate_up = filled(2 * act_n), act(act_n), out(static_cast<std::size_t>(m) * kHidden);
  DeviceBuffer<float> w = filled(w_n);
  DeviceBuffer<__half> w_f16(w_n), act_f16(act_n);
  convert_f32_to_f16(w_f16.get(), w.get(), w_n, timer.stream());
  // Weights, gate_up in, out; unfused also act written and read (fp32) and its fp16 copy.
  const double bytes = 2.0 * w_n + 4.0 * (2.0 * act_n + m * kHidden) +
                       (fused ? 0.0 : 4.0 * 2.0 * act_n + 2.0 * 2.0 * act_n);
  timer.run(state, bytes, 2.0 * m * kHidden * kFfn + 5.0 * act_n, [&] {
    if (fused) {
      swiglu_down_f16(out.get(), gate_up.get(), w_f16.get(), m, kHidden, kFfn, timer.stream());
      return;
    }
    swiglu(act.get(), gate_up.get(), m, kFfn, timer.stream());
    convert_f32_to_f16(act_f16.get(), act.get(), act_n, timer.stream());
    gemv_f16(out.get(), act_f16.get(), w_f16.get(), m, kHidden, kFfn, kFfn, timer.stream());
  });
}
BENCHMARK(BM_swiglu_down_f16)
    ->ArgNames({"m", "fused"})
    ->ArgsProduct({{1, 4}, {0, 1}})
    ->UseManualTime()
    ->MinTime(kMinTimeS)
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace llmbench::cuda

BENCHMARK_MAIN();
