// CudaBackend: the Backend on one CUDA device, with the kernels of kernels/cuda and cuBLAS
// GEMMs, all on one stream it owns. Ops are asynchronous; to_host() and synchronize() wait.
// Traced ops are timed with CUDA events from a pool (CudaEventTimer), resolved after the
// step's single synchronisation. With sync_check, every op is followed by a stream
// synchronisation and error check, so an asynchronous fault is blamed on the op that caused it.
// Only compiled when the CUDA toolkit is found (LLMBENCH_HAVE_CUDA).
#pragma once
#include <memory>
#include <string>

#include "engine/model/backend.h"

namespace llmbench {

// Facts about a CUDA device, for the run table and the roofline's datasheet peak.
struct CudaDeviceInfo {
  std::string name;
  int sm_count = 0;
  int sm_clock_mhz = 0;          // peak SM clock
  int memory_clock_mhz = 0;      // peak memory clock
  int memory_bus_bits = 0;
  double datasheet_bandwidth_gbps = 0;  // 2 (DDR) x memory clock x bus width / 8
  std::string driver_version;    // e.g. "13.0"
  std::string runtime_version;
  double memory_gib = 0;
};

class CudaBackend final : public Backend {
 public:
  // Uses device `device`. Throws BadInput when no such device exists.
  explicit CudaBackend(int device = 0, bool sync_check = false);
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  std::string name() const override { return "cuda"; }
  std::string device_description() const override;
  bool host_visible() const override { return false; }
  const CudaDeviceInfo& info() const { return info_; }

  Buffer alloc(std::size_t bytes) override;
  // cudaMallocAsync on the backend's stream from the device's default memory pool (its release
  // threshold raised so freed memory stays cached, like PyTorch's caching allocator);
  // cudaFreeAsync on the same stream.
  Buffer alloc_async(std::size_t bytes) override;
  void to_device(void* dst, const void* src, std::size_t bytes) override;
  void to_host(void* dst, const void* src, std::size_t bytes) override;
  void synchronize() override;
  // kDevice and kCupti: the CUPTI activity timer (cupti_timer.h); without CUPTI in the build,
  // kDevice falls back to CudaEventTimer and kCupti is an llmbench::Error. kEvents:
  // CudaEventTimer (pooled CUDA event pairs around every op). kHostNoSync: HostOpTimer, which
  // reads the host clock around each enqueue: wrong on purpose.
  std::unique_ptr<OpTimer> make_op_timer(TimerMode mode) override;
  void profiler_start() override;
  void profiler_stop() override;

#include "engine/model/backend_op_overrides.inc"
  // One kernel at decode shapes with 16-bit weights (kernels/cuda/swiglu_down.cuh); else the
  // unfused default.
  void swiglu_down(float* out, const float* gate_up, float* act, WeightRef w_down, int n_rows,
                   int dim, int ffn_dim) override;
  void kv_cache_write_at(float* cache, const float* src, int src_stride, int batch, int n_new,
                         const std::int32_t* positions, int cache_seq, int kv_dim) override;
  void attention_at(float* out, const float* q, const float* k_cache, const float* v_cache,
                    const AttentionShape& shape, const AttentionStrides& strides,
                    const std::int32_t* positions, int max_keys,
                    DecodeAttention kernel) override;
  // The same two over fp16 caches (--kv-cache-dtype fp16, cuda_backend_kv_f16.cpp), so a captured
  // decode step reads its length from device memory with either cache.
  void kv_cache_write_f16_at(std::uint16_t* cache, const float* src, int src_stride, int batch,
                             int n_new, const std::int32_t* positions, int cache_seq,
                             int kv_dim) override;
  void attention_f16_at(float* out, const float* q, const std::uint16_t* k_cache,
                        const std::uint16_t* v_cache, const AttentionShape& shape,
                        const AttentionStrides& strides, const std::int32_t* positions,
                        int max_keys, DecodeAttention kernel) override;
  // The stream's graph driver (cuda_graph_driver.h); nullptr with sync_check.
  GraphDriver* graph_driver() override;

 private:
  // After each op: with sync_check, synchronise and check, naming the op.
  void after_op(const char* op);

  // CUDA handles, kept out of this header so host code needs no CUDA headers (defined in
  // cuda_backend_impl.h, for the backend's own .cpp files)
  struct Impl;
  std::unique_ptr<Impl> impl_;
  CudaDeviceInfo info_;
  bool sync_check_;
};

// Number of CUDA devices usable by this process (0 when none or the driver is missing).
int cuda_device_count();
// Info about `device` without creating a backend.
CudaDeviceInfo query_cuda_device(int device);

}  // namespace llmbench
