// Measured hardware peaks of the CPU backend: the denominators of MBU and MFU.
// Bandwidth: a multi-threaded read (cpu::read_sum) over a buffer far larger than the last-level
// cache.
// FLOPs: OpenBLAS sgemm at a large square size, and the engine's bf16 matmul (cpu::matmul_half,
// vdpbf16ps where the CPU has AVX512_BF16) at the same size: the MFU peak of bf16 runs; and the
// engine's int8 and int4 products (cpu::matmul_quant_vnni, vpdpbusd on packed weights) at the
// same size: the MFU peaks of int8 and int4 runs. Each reports the best and the median of its
// repetitions; the peak used by metrics is the best (the hardware limit this code reached).
#pragma once
#include <cstdint>

namespace llmbench {

struct RooflineResult {
  double read_gbps_best = 0, read_gbps_median = 0;
  std::int64_t read_bytes = 0;          // buffer size read per repetition
  double sgemm_tflops_best = 0, sgemm_tflops_median = 0;
  int sgemm_n = 0;                       // square size (both GEMMs)
  double bf16_gemm_tflops_best = 0, bf16_gemm_tflops_median = 0;
  double int8_gemm_tflops_best = 0, int8_gemm_tflops_median = 0;
  double int4_gemm_tflops_best = 0, int4_gemm_tflops_median = 0;
  int repetitions = 0;
};

// buffer_bytes: the read buffer (default 1 GiB); gemm_n: sgemm size (default 2048).
RooflineResult measure_cpu_roofline(std::int64_t buffer_bytes = std::int64_t(1) << 30,
                                    int gemm_n = 2048, int repetitions = 15);

}  // namespace llmbench
