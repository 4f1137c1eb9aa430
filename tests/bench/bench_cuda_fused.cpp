// Google Benchmark timings of the fused CUDA kernels against the unfused sequence each replaces,
// at llama2-7b shapes, measured as bench_cuda_kernels.cpp measures (cuda_bench_timer.h): the
// decode GEMV rounding its fp32 input against conversion + GEMV, and the --fuse small kernels.
// Linked into bench_cuda_kernels. Not a test: the bits are compared in tests/cuda.
#include <benchmark/benchmark.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/cuda/add_rmsnorm.cuh"
#include "kernels/cuda/convert.cuh"
#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/gemv_half.cuh"
#include "kernels/cuda/kv_cache.cuh"
#include "kernels/cuda/rmsnorm.cuh"
#include "kernels/cuda/rope.cuh"
#include "kernels/cuda/rope_kv_write.cuh"
#include "kernels/cuda/swiglu.cuh"
#include "kernels/cuda/swiglu_down.cuh"
#include "tests/bench/cuda_bench_timer.h"

namespace llmbench::cuda {
namespace {

using namespace bench;  // the shapes, DeviceTimer and the inputs

// The decode GEMM as matmul_half runs it from fp32 activations. rounding 0: convert x
// (convert_f32_to_f16), then gemv_f16: two launches, as the backend does at 3 and 4 rows (and did
// at every row count before gemv_*_rounding_x). rounding 1: gemv_f16_rounding_x, one launch, as
// it does at 1 and 2 rows; the same bits. Same unique bytes counted for both, so their
// bytes_per_second compare; llama2-7b's o, qkv, gate + up and down projections.
void BM_gemv_f16_from_f32(benchmark::State& state) {
  if (!have_device(state)) return;
  const int m = state.range(0), n = state.range(1), k = state.range(2);
  const bool rounding = state.range(3) == 1;
  DeviceTimer timer;
  const std::size_t x_size = static_cast<std::size_t>(m) * k;
  const std::size_t w_size = static_cast<std::size_t>(n) * k;
  DeviceBuffer<float> x = filled(x_size), w = filled(w_size);
  DeviceBuffer<float> out(static_cast<std::size_t>(m) * n);
  DeviceBuffer<__half> x_f16(x_size), w_f16(w_size);
  convert_f32_to_f16(w_f16.get(), w.get(), w_size, timer.stream());
  const double bytes = 4.0 * x_size + 2.0 * w_size + 4.0 * m * n;
  timer.run(state, bytes, 2.0 * m * n * k, [&] {
    if (rounding) {
      gemv_f16_rounding_x(out.get(), x.get(), w_f16.get(), m, n, k, k, timer.stream());
    } else {
      convert_f32_to_f16(x_f16.get(), x.get(), x_size, timer.stream());
      gemv_f16(out.get(), x_f16.get(), w_f16.get(), m, n, k, k, timer.stream());
    }
  });
}
BENCHMARK(BM_gemv_f16_from_f32)
    ->ArgNames({"m", "n", "k", "rounding"})
    ->ArgsProduct({{1, 2, 4}, {kHidden}, {kHidden}, {0, 1}})
    ->ArgsProduct({{1, 2, 4}, {3 * kHidden}, {kHidden}, {0, 1}})
    ->ArgsProduct({{1, 2, 4}, {2 * kFfn}, {kHidden}, {0, 1}})
    ->ArgsProduct({{1, 2, 4}, {kHidden}, {kFfn}, {0, 1}})
    ->UseManualTime()
    ->MinTime(kMinTimeS)
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
