// The measurement shared by the CUDA kernel benchmarks (bench_cuda_kernels.cpp, the kernels one
// by one; bench_cuda_fused.cpp, fused kernels against what they replace): llama2-7b's shapes, a
// timer that flushes the L2 cache before each iteration and times it with a CUDA event pair on
// its own stream, and deterministic device inputs. Bench code only.
#pragma once

#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_event.h"
#include "tests/cuda/device_buffer.h"

namespace llmbench::cuda::bench {

using test::DeviceBuffer;

// llama2-7b.
inline constexpr int kHidden = 4096;
inline constexpr int kFfn = 11008;
inline constexpr int kHeads = 32;
inline constexpr int kKvHeads = 32;
inline constexpr int kHeadDim = 128;
inline constexpr int kVocab = 32000;
inline constexpr int kPrefillRows = 16 * 512;  // batch 16 x prompt 512
inline constexpr double kMinTimeS = 0.2;

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
inline bool have_device(benchmark::State& state) {
  if (test::cuda_device_present()) return true;
  state.SkipWithError("no CUDA device");
  return false;
}

// A device array of n deterministic values in [-0.5, 0.5).
inline DeviceBuffer<float> filled(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>((i * 2654435761u) % 1000) / 1000 - 0.5f;
  return DeviceBuffer<float>(v);
}

inline DeviceBuffer<int32_t> ids(std::size_t n, int32_t modulo) {
  std::vector<int32_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<int32_t>((i * 7919u) % modulo);
  return DeviceBuffer<int32_t>(v);
}

}  // namespace llmbench::cuda::bench
