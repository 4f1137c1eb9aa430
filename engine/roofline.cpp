// CPU roofline measurement (see roofline.h).
#include "engine/roofline.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "engine/cpu_backend.h"
#include "engine/stats.h"
#include "kernels/cpu/matmul_half.h"
#include "kernels/cpu/quant.h"
#include "kernels/cpu/read_sum.h"

namespace llmbench {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
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
  volatile float sink = cpu::read_sum(data, n);  // warm-up
  std::vector<double> gbps;
  for (int i = 0; i < repetitions; ++i) {
    const auto t0 = Clock::now();
    sink = cpu::read_sum(data, n);
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

  // ---- bf16 GEMM FLOP/s: the engine's own bf16 matmul (vdpbf16ps where the CPU has it, else
  // widened tiles through sgemm), fp32 activations in and out as in a bf16 run ----
  std::vector<std::uint16_t> wb(nn);
  cpu::narrow_to_half(wb.data(), b.data(), std::int64_t(nn), DType::kBf16);
  auto gemm_bf16 = [&] {
    cpu::matmul_half(c.data(), a.data(), wb.data(), DType::kBf16, gemm_n, gemm_n, gemm_n, gemm_n);
  };
  gemm_bf16();
  tflops.clear();
  for (int i = 0; i < repetitions; ++i) {
    const auto t0 = Clock::now();
    gemm_bf16();
    tflops.push_back(flops / seconds_since(t0) / 1e12);
  }
  r.bf16_gemm_tflops_best = *std::max_element(tflops.begin(), tflops.end());
  r.bf16_gemm_tflops_median = median(tflops);

  // ---- int8 / int4 GEMM FLOP/s: the engine's quantised product (cpu::matmul_quant_vnni on
  // weights packed as at load time: vpdpbusd where the CPU has AVX512_VNNI, else plain loops),
  // fp32 activations in and out, their int8 quantisation included, as in an int8/int4 run ----
  auto gemm_quant = [&](DType dtype, double& best, double& med) {
    std::vector<std::uint8_t> wq(std::size_t(dtype_bytes_for(dtype, std::int64_t(nn))));
    cpu::quantize_packed(wq.data(), b.data(), dtype, gemm_n, gemm_n);
    auto gemm_q = [&] {
      cpu::matmul_quant_vnni(c.data(), a.data(), wq.data(), dtype, gemm_n, gemm_n, gemm_n,
                             gemm_n);
    };
    gemm_q();
    tflops.clear();
    for (int i = 0; i < repetitions; ++i) {
      const auto t0 = Clock::now();
      gemm_q();
      tflops.push_back(flops / seconds_since(t0) / 1e12);
    }
    best = *std::max_element(tflops.begin(), tflops.end());
    med = median(tflops);
  };
  gemm_quant(DType::kInt8, r.int8_gemm_tflops_best, r.int8_gemm_tflops_median);
  gemm_quant(DType::kInt4, r.int4_gemm_tflops_best, r.int4_gemm_tflops_median);
  return r;
}

}  // namespace llmbench
