// Measured hardware peaks of the CPU backend: the denominators of MBU and MFU.
// Bandwidth: a multi-threaded read (cpu::read_sum) over a buffer far larger than the last-level
// cache.
// FLOPs: OpenBLAS sgemm at a large square size (reported), and each dtype's GEMM as the engine
// runs it (cpu::matmul for fp32, matmul_half for bf16/fp16, matmul_quant_vnni on packed weights
// for int8/int4) at three shapes whose kernels differ; the best of those is the dtype's MFU peak.
// Each reports the best and the median of its repetitions; the peak used by metrics is the best
// (the hardware limit this code reached).
#pragma once
#include <cstdint>
#include <functional>

namespace llmbench {

struct RooflineResult {
  double read_gbps_best = 0, read_gbps_median = 0;
  std::int64_t read_bytes = 0;          // buffer size read per repetition
  double sgemm_tflops_best = 0, sgemm_tflops_median = 0;
  int sgemm_n = 0;                       // square size (both GEMMs)
  double fp32_gemm_tflops_best = 0, fp32_gemm_tflops_median = 0;
  double fp16_gemm_tflops_best = 0, fp16_gemm_tflops_median = 0;
  double bf16_gemm_tflops_best = 0, bf16_gemm_tflops_median = 0;
  double int8_gemm_tflops_best = 0, int8_gemm_tflops_median = 0;
  double int4_gemm_tflops_best = 0, int4_gemm_tflops_median = 0;
  int repetitions = 0;
};

// Called before each of the measurement's kRooflineParts parts with its index (0-based) and
// name ("read bandwidth", "sgemm", "fp32 GEMM", ...): how a caller shows progress.
using RooflineProgress = std::function<void(int part, const char* name)>;
inline constexpr int kRooflineParts = 7;

// buffer_bytes: the read buffer (default 1 GiB); gemm_n: sgemm size (default 2048).
RooflineResult measure_cpu_roofline(std::int64_t buffer_bytes = std::int64_t(1) << 30,
                                    int gemm_n = 2048, int repetitions = 15,
                                    const RooflineProgress& progress = nullptr);

}  // namespace llmbench
