// The compute roof probed beside each case: a short GEMM of the case's dtype, run the way the
// engine runs its projections (cpu::matmul / matmul_half / matmul_quant_vnni on the CPU, the
// cuBLAS GEMM on CUDA), right before and right after every case, so MFU divides by a FLOP/s
// figure of that minute and not only by the roofline cache, which may have been measured while
// a build loaded the machine (a peak half the real one makes every later MFU twice too high).
// MFU divides by the larger of the probe and the cached peak (apply_case_roof, metrics.h).
// docs/metrics.md, "The roofs beside each case", gives the method.
// Deliberately not: a full roofline (one shape, a few repetitions) or a cache.
#pragma once
#include <memory>
#include <string>

#include "engine/model/config.h"
#include "kernels/common/dtype.h"

namespace llmbench {

// m x n x k of the probe's product: out[m, n] = x[m, k] . w[n, k]^T.
struct ProbeShape {
  int m = 0, n = 0, k = 0;
};

// A shape like the model's prefill projections, bounded so the probe measures the hardware and
// stays short: m = prompt tokens of the case clamped to [64, 256], n = the SwiGLU width and
// k = the hidden size, each clamped to [512, 2048] (a 2048 x 2048 x 256 product is 2.1 GFLOP:
// about 13 ms at 0.16 TFLOP/s).
ProbeShape compute_probe_shape(const ModelConfig& c, std::int64_t prompt_tokens);

struct ComputeProbeResult {
  double tflops_best = 0;    // best timed call: 2 m n k / seconds / 1e12
  double tflops_median = 0;  // median timed call
  double seconds = 0;        // the whole probe, weight conversion and warm-up included
};

inline constexpr int kComputeProbeCalls = 4;  // timed calls after one warm-up call

class ComputeProbe {
 public:
  virtual ~ComputeProbe() = default;
  // One warm-up call, then kComputeProbeCalls timed calls of the product. Buffers are made on
  // first use of a (dtype, shape) and kept for the next case.
  virtual ComputeProbeResult measure(DType dtype, const ProbeShape& shape) = 0;
};

// The probe of backend "cpu" (on the calling thread's OpenMP team) or "cuda" (device 0; only
// when built with CUDA).
std::unique_ptr<ComputeProbe> make_compute_probe(const std::string& backend);

#if defined(LLMBENCH_HAVE_CUDA)
// engine/bench/cuda_compute_probe.cpp.
std::unique_ptr<ComputeProbe> make_cuda_compute_probe();
#endif

}  // namespace llmbench
