// Measured hardware peaks of one CUDA device: the denominators of MBU and MFU on the CUDA
// backend, the counterpart of engine/bench/roofline.h (the CPU's).
// Bandwidth: device-to-device cudaMemcpyAsync over buffers far larger than L2 (1 GiB each side
// by default). A copy reads and writes every byte, so it is counted as 2 x the buffer size: the
// same traffic definition as llmbench's analytic bytes (read + write). Then the device read test
// (kernels/cuda/read_sum.cuh) over the copy's source: decode reads its weights and KV cache, so
// the read figure is MBU's denominator, and each case's probe repeats that test. The datasheet bandwidth
// (2 x memory clock x bus width) is reported beside it, never used as the peak.
// FLOPs: cuBLAS GEMM (kernels/cuda/gemm.cuh, the engine's own call) at a large square size, per
// input dtype: fp32 (true fp32, no TF32), bf16 and fp16 (tensor cores, fp32 accumulation).
// Every figure is timed with CUDA events after a warm-up; best and median are kept, and the best
// is the peak (the highest rate this code reached on this device).
// Deliberately not: a hand-written bandwidth kernel, cuBLASLt algorithm search, or clock
// locking (run `nvidia-smi -lgc` yourself if you want fixed clocks).
// Only compiled when the CUDA toolkit is found (LLMBENCH_HAVE_CUDA).
#pragma once
#include <cstdint>

#include "engine/model/cuda_backend.h"
#include "kernels/common/dtype.h"

namespace llmbench {

// Best and median of one GEMM dtype's repetitions, in 1e12 FLOP/s (2 x n^3 FLOPs per GEMM).
struct CudaGemmPeak {
  double tflops_best = 0, tflops_median = 0;
};

struct CudaRooflineResult {
  CudaDeviceInfo device;                 // includes datasheet_bandwidth_gbps
  int device_index = 0;
  // Copy bandwidth: (2 x copy_buffer_bytes) / event time of one cudaMemcpyAsync, in 1e9 B/s.
  double copy_gbps_best = 0, copy_gbps_median = 0;
  std::int64_t copy_buffer_bytes = 0;    // size of each side (source and destination)
  // Read bandwidth: copy_buffer_bytes / event time of one device read test over the copy's
  // source (kernels/cuda/read_sum.cuh), in 1e9 B/s: MBU's reference denominator on CUDA, and
  // the test each case's read probe repeats (engine/bench/read_probe.h).
  double read_gbps_best = 0, read_gbps_median = 0;
  CudaGemmPeak gemm_fp32, gemm_bf16, gemm_fp16;
  int gemm_n = 0;                        // square size actually used (may be reduced for memory)
  int repetitions = 0;

  // The GEMM peak for inputs of `dtype`.
  const CudaGemmPeak& gemm(DType dtype) const {
    switch (dtype) {
      case DType::kBf16: return gemm_bf16;
      case DType::kFp16: return gemm_fp16;
      case DType::kFp32:
      case DType::kInt8:  // int8/int4 are CPU-only (refused before any CUDA peak is read)
      case DType::kInt4: break;
    }
    return gemm_fp32;
  }
};

// Measures device `device` (BadInput when it does not exist). copy_buffer_bytes: each side of
// the copy (default 1 GiB); gemm_n: the GEMM size (default 8192). Both are reduced when the
// device's free memory is short; the result says what was used. Throws llmbench::Error on any
// CUDA or cuBLAS failure.
CudaRooflineResult measure_cuda_roofline(int device = 0,
                                         std::int64_t copy_buffer_bytes = std::int64_t(1) << 30,
                                         int gemm_n = 8192, int repetitions = 20);

}  // namespace llmbench
