// The Backend interface: memory and the ops of a Llama forward pass. forward() in model.cpp is
// written once against it; CpuBackend (cpu_backend.h) implements it with kernels/cpu, and
// CudaBackend (cuda_backend.h) with kernels/cuda and cuBLAS. Pointers passed to ops live in
// the backend's memory (buffers it allocated). Ops may run asynchronously; `to_host` and
// `synchronize` are the only points where the host waits.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "engine/buffer.h"
#include "engine/trace.h"
#include "kernels/cpu/attention.h"

namespace llmbench {

using AttentionShape = cpu::AttentionShape;

class Backend {
 public:
  virtual ~Backend() = default;

  // "cpu" or "cuda".
  virtual std::string name() const = 0;
  // A one-line description of the device (CPU model and threads, GPU name).
  virtual std::string device_description() const = 0;
  // True when buffers are host memory that the host may read and write directly.
  virtual bool host_visible() const = 0;

  // ---- memory ----
  virtual Buffer alloc(std::size_t bytes) = 0;
  virtual void to_device(void* dst, const void* src, std::size_t bytes) = 0;
  // Copies to the host and waits until the bytes are there.
  virtual void to_host(void* dst, const void* src, std::size_t bytes) = 0;
  virtual void synchronize() = 0;
  // A timer for traced ops: host clock here, CUDA events on the CUDA backend.
  virtual std::unique_ptr<OpTimer> make_op_timer() = 0;
  // Brackets the measured repetitions for a profiler (--profile-range): cudaProfilerStart/Stop
  // on CUDA, so `nsys profile --capture-range=cudaProfilerApi` captures only them.
  virtual void profiler_start() {}
  virtual void profiler_stop() {}

  // ---- ops (semantics: the kernels/cpu header of the same name) ----
  virtual void embedding(float* out, const float* table, const std::int32_t* tokens,
                         int n_tokens, int dim) = 0;
  virtual void rmsnorm(float* out, const float* x, const float* weight, int n_rows, int dim,
                       float eps) = 0;
  // out[m, n] = x[m, k] . w[n, k]  (x rows lda apart).
  virtual void matmul(float* out, const float* x, const float* w, int m, int n, int k,
                      int lda) = 0;
  virtual void add_bias_rows(float* x, int n_rows, int stride, const float* bias, int n) = 0;
  virtual void rope(float* x, int n_rows, int row_stride, int n_heads, int head_dim,
                    const std::int32_t* positions, float theta) = 0;
  virtual void kv_cache_write(float* cache, const float* src, int src_stride, int batch,
                              int n_new, int past_len, int cache_seq, int kv_dim) = 0;
  virtual void attention(float* out, const float* q, const float* k_cache,
                         const float* v_cache, const AttentionShape& shape) = 0;
  virtual void swiglu(float* out, const float* gate_up, int n_rows, int ffn_dim) = 0;
  virtual void add_inplace(float* x, const float* y, std::size_t n) = 0;
  virtual void gather_rows(float* out, const float* x, const std::int32_t* rows, int n_rows,
                           int dim) = 0;
  virtual void argmax_rows(std::int32_t* out, const float* x, int n_rows, int n_cols) = 0;
};

}  // namespace llmbench
