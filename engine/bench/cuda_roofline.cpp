// CUDA roofline measurement (see cuda_roofline.h): copy bandwidth, then cuBLAS GEMM per dtype,
// each timed with one pair of CUDA events per repetition on a stream of its own.
#include "engine/bench/cuda_roofline.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine/model/buffer.h"
#include "kernels/common/error.h"
#include "engine/bench/stats.h"
#include "kernels/cuda/convert.cuh"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_event.h"
#include "kernels/cuda/read_sum.cuh"
#include "kernels/cuda/gemm.cuh"

namespace llmbench {

namespace {

constexpr int kWarmups = 3;  // first calls load cuBLAS kernels and let the clocks ramp up

// A non-blocking CUDA stream, owned.
class Stream {
 public:
  Stream() { LLMBENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~Stream() {
    if (stream_) LLMBENCH_CUDA_CHECK_NOTHROW(cudaStreamDestroy(stream_));
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

Buffer device_alloc(std::size_t bytes) {
  void* p = nullptr;
  LLMBENCH_CUDA_CHECK(cudaMalloc(&p, bytes));
  return Buffer(p, bytes, [](void* q) { LLMBENCH_CUDA_CHECK_NOTHROW(cudaFree(q)); });
}

// Runs enqueue() kWarmups times, then `reps` more, each bracketed by start/stop events on
// `stream` and waited for before the next starts (so repetitions never overlap). Returns each
// timed repetition's `work` / seconds.
template <class Enqueue>
std::vector<double> rates_on_stream(cudaStream_t stream, int reps, double work,
                                    Enqueue&& enqueue) {
  for (int i = 0; i < kWarmups; ++i) enqueue();
  LLMBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  cuda::CudaEventPair events;
  std::vector<double> rates;
  for (int i = 0; i < reps; ++i) {
    events.start(stream);
    enqueue();
    events.stop(stream);
    const float ms = events.elapsed_ms();
    LLMBENCH_CHECK(ms > 0, "a CUDA event interval of zero");
    rates.push_back(work / (double(ms) * 1e-3));
  }
  return rates;
}

// Uniform values in [-1, 1) from a fixed-seed LCG: realistic, non-constant GEMM inputs (tensor
// cores draw less power, and may clock higher, on zeros or constants than on real data).
std::vector<float> lcg_uniform(std::size_t n, std::uint32_t seed) {
  std::vector<float> v(n);
  std::uint32_t s = seed;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = float(s >> 8) * (2.0f / float(1u << 24)) - 1.0f;
  }
  return v;
}

}  // namespace

CudaRooflineResult measure_cuda_roofline(int device, std::int64_t copy_buffer_bytes, int gemm_n,
                                         int repetitions) {
  if (copy_buffer_bytes < (1 << 20) || gemm_n < 256 || repetitions < 1)
    throw BadInput("cuda roofline: expected a copy buffer >= 1 MiB, a GEMM size >= 256 and at "
                   "least one repetition");
  const int n_devices = cuda_device_count();
  if (device < 0 || device >= n_devices)
    throw BadInput("--backend cuda: no CUDA device " + std::to_string(device) + " (" +
                   std::to_string(n_devices) + " found)");
  LLMBENCH_CUDA_CHECK(cudaSetDevice(device));

  CudaRooflineResult r;
  r.device = query_cuda_device(device);
  r.device_index = device;
  r.repetitions = repetitions;

  // Fit both measurements into half of the memory that is free now (the rest stays for cuBLAS's
  // workspace and whatever else runs): halve the sizes until they fit.
  std::size_t free_bytes = 0, total_bytes = 0;
  LLMBENCH_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::int64_t budget = std::int64_t(free_bytes / 2);
  std::int64_t copy_bytes = copy_buffer_bytes;
  while (copy_bytes > (64 << 20) && 2 * copy_bytes > budget) copy_bytes /= 2;
  r.copy_buffer_bytes = copy_bytes / 256 * 256;
  int n = gemm_n;
  // fp32 x, w, out (12 n^2 bytes) + the 16-bit x, w (4 n^2 bytes).
  while (n > 1024 && 16 * std::int64_t(n) * n > budget) n /= 2;
  r.gemm_n = n;

  Stream stream;

  // ---- device-to-device copy bandwidth ----
  {
    const auto bytes = std::size_t(r.copy_buffer_bytes);
    Buffer src = device_alloc(bytes), dst = device_alloc(bytes);
    LLMBENCH_CUDA_CHECK(cudaMemsetAsync(src.data(), 0x5a, bytes, stream.get()));
    LLMBENCH_CUDA_CHECK(cudaMemsetAsync(dst.data(), 0, bytes, stream.get()));
    // A copy reads every byte once and writes it once: 2 x bytes of DRAM traffic.
    const std::vector<double> bps =
        rates_on_stream(stream.get(), repetitions, 2.0 * double(bytes), [&] {
          LLMBENCH_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), bytes,
                                              cudaMemcpyDeviceToDevice, stream.get()));
        });
    r.copy_gbps_best = *std::max_element(bps.begin(), bps.end()) / 1e9;
    r.copy_gbps_median = median(bps) / 1e9;
    // ---- the device read test over the same buffer (kernels/cuda/read_sum.cuh): the MBU
    // denominator, and the test each case's read probe repeats (engine/bench/read_probe.h) ----
    Buffer partial = device_alloc(sizeof(float) * cuda::kReadSumMaxBlocks);
    const std::vector<double> rps = rates_on_stream(stream.get(), repetitions, double(bytes), [&] {
      cuda::read_sum_partial(static_cast<float*>(partial.data()),
                             static_cast<const float*>(src.data()), std::int64_t(bytes / 4),
                             stream.get());
    });
    r.read_gbps_best = *std::max_element(rps.begin(), rps.end()) / 1e9;
    r.read_gbps_median = median(rps) / 1e9;
  }

  // ---- cuBLAS GEMM per dtype: out[n, n] = x[n, n] . w[n, n]^T, as the engine calls it ----
  const std::size_t nn = std::size_t(n) * std::size_t(n);
  Buffer x32 = device_alloc(nn * sizeof(float)), w32 = device_alloc(nn * sizeof(float));
  Buffer out = device_alloc(nn * sizeof(float));
  Buffer x16 = device_alloc(nn * 2), w16 = device_alloc(nn * 2);  // bf16, then fp16
  {
    // On the measurement's own stream: it is non-blocking, so it would not wait for a plain
    // cudaMemcpy on the legacy stream (which may return before its DMA has finished).
    const std::vector<float> hx = lcg_uniform(nn, 1), hw = lcg_uniform(nn, 2);
    LLMBENCH_CUDA_CHECK(cudaMemcpyAsync(x32.data(), hx.data(), nn * sizeof(float),
                                        cudaMemcpyHostToDevice, stream.get()));
    LLMBENCH_CUDA_CHECK(cudaMemcpyAsync(w32.data(), hw.data(), nn * sizeof(float),
                                        cudaMemcpyHostToDevice, stream.get()));
    LLMBENCH_CUDA_CHECK(cudaStreamSynchronize(stream.get()));  // before hx, hw are freed
  }
  cuda::CublasHandle cublas;  // CUBLAS_DEFAULT_MATH: the fp32 GEMM is true fp32, no TF32
  cublas.set_stream(stream.get());
  const double flops = 2.0 * double(n) * double(n) * double(n);
  auto summarise = [](const std::vector<double>& flop_s) {
    return CudaGemmPeak{*std::max_element(flop_s.begin(), flop_s.end()) / 1e12,
                        median(flop_s) / 1e12};
  };

  r.gemm_fp32 = summarise(rates_on_stream(stream.get(), repetitions, flops, [&] {
    cuda::gemm_f32(cublas.get(), out.f32(), x32.f32(), w32.f32(), n, n, n, n);
  }));

  cuda::convert_f32_to_bf16(x16.as<__nv_bfloat16>(), x32.f32(), nn, stream.get());
  cuda::convert_f32_to_bf16(w16.as<__nv_bfloat16>(), w32.f32(), nn, stream.get());
  r.gemm_bf16 = summarise(rates_on_stream(stream.get(), repetitions, flops, [&] {
    cuda::gemm_bf16(cublas.get(), out.f32(), x16.as<__nv_bfloat16>(), w16.as<__nv_bfloat16>(),
                    n, n, n, n);
  }));

  cuda::convert_f32_to_f16(x16.as<__half>(), x32.f32(), nn, stream.get());
  cuda::convert_f32_to_f16(w16.as<__half>(), w32.f32(), nn, stream.get());
  r.gemm_fp16 = summarise(rates_on_stream(stream.get(), repetitions, flops, [&] {
    cuda::gemm_f16(cublas.get(), out.f32(), x16.as<__half>(), w16.as<__half>(), n, n, n, n);
  }));

  LLMBENCH_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  return r;
}

}  // namespace llmbench
