// CPU roofline measurement (see roofline.h).
#include "engine/roofline.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "engine/cpu_backend.h"
#include "engine/stats.h"

namespace llmbench {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Sums the buffer with 16 independent accumulators per thread so the loop is limited by
// memory, not by the latency of one dependent add chain. Compiled for AVX-512 and AVX2 too
// (the loader picks the widest the CPU has): with baseline SSE2 loads the read measured
// slower than what the engine's own sgemv streams, which would put MBU above 1.
__attribute__((target_clones("arch=skylake-avx512", "arch=haswell", "default")))
float read_sum(const float* data, std::int64_t n) {
  float total = 0;
#pragma omp parallel reduction(+ : total)
  {
    float acc[16] = {};
#pragma omp for schedule(static)
    for (std::int64_t i = 0; i < n / 16; ++i) {
#pragma omp simd
      for (int j = 0; j < 16; ++j) acc[j] += data[i * 16 + j];
    }
    for (float a : acc) total += a;
  }
  return total;
}

}  // namespace

RooflineResult measure_cpu_roofline(std::int64_t buffer_bytes, int gemm_n, int repetitions) {
  RooflineResult r;
  r.read_bytes = buffer_bytes / 64 * 64;
  r.sgemm_n = gemm_n;
  r.repetitions = repetitions;

  // ---- read bandwidth ----
  CpuBackend alloc_only(omp_get_max_threads());  // keeps the caller's thread count
  const std::int64_t n = r.read_bytes / 4;
  Buffer buf = alloc_only.alloc(std::size_t(r.read_bytes));
  float* data = buf.f32();
#pragma omp parallel for schedule(static)  // first touch by the threads that will read it
  for (std::int64_t i = 0; i < n; ++i) data[i] = float(i & 7);
  volatile float sink = read_sum(data, n);  // warm-up
  std::vector<double> gbps;
  for (int i = 0; i < repetitions; ++i) {
    const auto t0 = Clock::now();
    sink = read_sum(data, n);
    gbps.push_back(double(r.read_bytes) / seconds_since(t0) / 1e9);
  }
  (void)sink;
  buf.reset();
  r.read_gbps_best = *std::max_element(gbps.begin(), gbps.end());
  r.read_gbps_median = median(gbps);

  // ---- sgemm FLOP/s ----
  const std::size_t nn = std::size_t(gemm_n) * gemm_n;
  std::vector<float> a(nn, 0.5f), b(nn, 0.25f), c(nn, 0.0f);
  auto gemm = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, gemm_n, gemm_n, gemm_n, 1.0f, a.data(),
                gemm_n, b.data(), gemm_n, 0.0f, c.data(), gemm_n);
  };
  gemm();  // warm-up: OpenBLAS starts its threads and faults its buffers in
  std::vector<double> tflops;
  const double flops = 2.0 * double(gemm_n) * gemm_n * gemm_n;
  for (int i = 0; i < repetitions; ++i) {
    const auto t0 = Clock::now();
    gemm();
    tflops.push_back(flops / seconds_since(t0) / 1e12);
  }
  r.sgemm_tflops_best = *std::max_element(tflops.begin(), tflops.end());
  r.sgemm_tflops_median = median(tflops);
  return r;
}

}  // namespace llmbench
