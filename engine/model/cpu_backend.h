// CpuBackend: the Backend on host memory, with the OpenMP kernels of kernels/cpu and OpenBLAS
// GEMMs. Synchronous: every op has finished when its call returns.
#pragma once
#include <vector>

#include "engine/model/backend.h"

namespace llmbench {

class CpuBackend final : public Backend {
 public:
  // Sets OpenMP's and OpenBLAS's thread counts to `threads` (<= 0: OpenMP's default).
  explicit CpuBackend(int threads = 0);

  std::string name() const override { return "cpu"; }
  std::string device_description() const override;
  bool host_visible() const override { return true; }
  int threads() const { return threads_; }

  Buffer alloc(std::size_t bytes) override;
  Buffer alloc_async(std::size_t bytes) override { return alloc(bytes); }
  void to_device(void* dst, const void* src, std::size_t bytes) override;
  void to_host(void* dst, const void* src, std::size_t bytes) override;
  void synchronize() override {}
  // device and host-nosync: ops are synchronous, so the host clock is exact and host-nosync
  // reads the same. cupti, events: BadInput (no device to record).
  std::unique_ptr<OpTimer> make_op_timer(TimerMode mode) override;

#include "engine/model/backend_op_overrides.inc"

  // Quantised weights: only the CPU backend has these kernels (backend.h says what others do).
  void matmul_quant(float* out, const float* x, const void* w, DType dtype, int m, int n, int k,
                    int lda) override;
  void embedding_quant(float* out, const void* table, DType dtype, const std::int32_t* tokens,
                       int n_tokens, int vocab, int dim) override;
  void quantize_weights(void* dst, const float* src, DType dtype, std::int64_t n_rows,
                        int k) override;

 private:
  int threads_;
  std::vector<float> kv_f16_scratch_;  // attention_f16's prefill: the widened visible positions
};

// The host's CPU model name (from /proc/cpuinfo), or "unknown".
std::string cpu_model_name();

}  // namespace llmbench
