// CPU roofline measurement (see roofline.h).
#include "engine/bench/roofline.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "engine/model/cpu_backend.h"
#include "engine/bench/stats.h"
#include "kernels/cpu/matmul.h"
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

RooflineResult measure_cpu_roofline(std::int64_t buffer_bytes, int gemm_n, int repetitions,
                                    const RooflineProgress& progress) {
  auto part = [&](int i, const char* name) {
    if (progress) progress(i, name);
  };
  RooflineResult r;
  r.read_bytes = buffer_bytes / 64 * 64;
  r.sgemm_n = gemm_n;
  r.repetitions = repetitions;

  // ---- read bandwidth ----
  part(0, "read bandwidth");
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
  part(1, "sgemm");
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

  // ---- each dtype's GEMM as the engine runs it, at the shapes whose kernels differ: 2048^3
  // (long prefills: sgemm for fp32), 128 x 2048 x 2048 and 128 x 5632 x 2048 (one 128-token
  // prompt through a square and a gate/up-sized projection: the AVX-512 streaming kernels up to
  // kStreamRowsMax rows) and 128 x 512 x 512 (weights resident in L2: the kernels' arithmetic
  // roof). The best of all is the dtype's peak: the fastest rate the engine's own product
  // reached, so no case's MFU passes 1 because a kernel beat sgemm (m x n x k; k = gemm_n
  // except for the L2 shape) ----
  const int ns = std::min(512, gemm_n), nw = gemm_n / 8 * 22;  // 5632 at 2048
  struct Shape {
    int m, n, k, calls;  // calls per timed sample, so a sample lasts a few milliseconds
  };
  const int mp = std::min(128, gemm_n);
  const Shape shapes[] = {
      {gemm_n, gemm_n, gemm_n, 1}, {mp, gemm_n, gemm_n, 4}, {mp, nw, gemm_n, 2}, {mp, ns, ns, 32}};
  std::vector<float> b_small(std::size_t(ns) * ns, 0.25f), b_wide(std::size_t(nw) * gemm_n, 0.25f);
  std::vector<float> out(std::max(nn, std::size_t(mp) * nw));
  auto measure = [&](DType dtype, double& best, double& med) {
    best = med = 0;
    for (const Shape& sh : shapes) {
      const float* w32 = sh.k != gemm_n ? b_small.data() : sh.n == nw ? b_wide.data() : b.data();
      const std::int64_t wn = std::int64_t(sh.n) * sh.k;
      std::vector<std::uint16_t> w16;
      std::vector<std::uint8_t> wq;
      if (dtype == DType::kBf16 || dtype == DType::kFp16) {
        w16.resize(std::size_t(wn));
        cpu::narrow_to_half(w16.data(), w32, wn, dtype);
      } else if (dtype_is_quantized(dtype)) {
        wq.resize(std::size_t(dtype_bytes_for(dtype, wn)));
        cpu::quantize_packed(wq.data(), w32, dtype, sh.n, sh.k);
      }
      auto call = [&] {
        if (dtype == DType::kFp32)
          cpu::matmul(out.data(), a.data(), w32, sh.m, sh.n, sh.k, sh.k);
        else if (!w16.empty())
          cpu::matmul_half(out.data(), a.data(), w16.data(), dtype, sh.m, sh.n, sh.k, sh.k);
        else
          cpu::matmul_quant_vnni(out.data(), a.data(), wq.data(), dtype, sh.m, sh.n, sh.k,
                                 sh.k);
      };
      call();  // warm-up
      std::vector<double> rates;
      const double shape_flops = 2.0 * sh.m * double(sh.n) * sh.k * sh.calls;
      for (int i = 0; i < repetitions; ++i) {
        const auto t0 = Clock::now();
        for (int j = 0; j < sh.calls; ++j) call();
        rates.push_back(shape_flops / seconds_since(t0) / 1e12);
      }
      best = std::max(best, *std::max_element(rates.begin(), rates.end()));
      med = std::max(med, median(rates));
    }
  };
  part(2, "fp32 GEMM");
  measure(DType::kFp32, r.fp32_gemm_tflops_best, r.fp32_gemm_tflops_median);
  part(3, "fp16 GEMM");
  measure(DType::kFp16, r.fp16_gemm_tflops_best, r.fp16_gemm_tflops_median);
  part(4, "bf16 GEMM");
  measure(DType::kBf16, r.bf16_gemm_tflops_best, r.bf16_gemm_tflops_median);
  part(5, "int8 GEMM");
  measure(DType::kInt8, r.int8_gemm_tflops_best, r.int8_gemm_tflops_median);
  part(6, "int4 GEMM");
  measure(DType::kInt4, r.int4_gemm_tflops_best, r.int4_gemm_tflops_median);
  return r;
}

}  // namespace llmbench
