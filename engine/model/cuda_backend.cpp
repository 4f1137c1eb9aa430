// CudaBackend (see cuda_backend.h): one stream, one cuBLAS handle, kernels/cuda launchers.
// Its ops over the fp16 KV cache are in cuda_backend_kv_f16.cpp; what both share (the Impl, the
// scratch buffers, the attention routing) in cuda_backend_impl.h.
#include "engine/model/cuda_backend.h"

#include <cublas_v2.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <cstdio>
#include <vector>

#include "engine/model/cuda_backend_impl.h"
#include "engine/model/cuda_graph_driver.h"
#include "kernels/common/error.h"
#if defined(LLMBENCH_HAVE_CUPTI)
#include "engine/model/cupti_timer.h"
#endif
#include "kernels/cuda/add_rmsnorm.cuh"
#include "kernels/cuda/argmax.cuh"
#include "kernels/cuda/attention.cuh"
#include "kernels/cuda/attention_gemm.cuh"
#include "kernels/cuda/convert.cuh"
#include "kernels/cuda/copy_heads.cuh"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_event.h"
#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/embedding.cuh"
#include "kernels/cuda/gemm.cuh"
#include "kernels/cuda/gemv_half.cuh"
#include "kernels/cuda/kv_cache.cuh"
#include "kernels/cuda/paged_attention.cuh"
#include "kernels/cuda/paged_kv.cuh"
#include "kernels/cuda/ragged_attention.cuh"
#include "kernels/cuda/rmsnorm.cuh"
#include "kernels/cuda/rope.cuh"
#include "kernels/cuda/rope_kv_write.cuh"
#include "kernels/cuda/swiglu.cuh"
#include "kernels/cuda/swiglu_down.cuh"

namespace llmbench {

// The attention routing both op files share (cuda_backend_impl.h).
using detail::kAttentionScoreBudget;
using detail::kernel_of;
using detail::kGemmAttentionMinQueries;

namespace {

std::string version_text(int v) {  // 13000 -> "13.0"
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

// Times traced ops with CUDA events recorded on the backend's stream: no synchronisation
// while ops are issued. Event pairs come from a pool that grows to the largest step and is
// reused. Times are placed on the host timeline through an anchor: an event recorded, and
// synchronised, together with a host clock reading when the timer is created.
class CudaEventTimer final : public OpTimer {
 public:
  explicit CudaEventTimer(cudaStream_t stream) : stream_(stream) {
    anchor_.record(stream_);
    anchor_.synchronize();
    anchor_host_ = std::chrono::steady_clock::now();
  }

  void start(int slot) override {
    while (std::size_t(slot) >= pairs_.size()) pairs_.emplace_back();
    pairs_[std::size_t(slot)].start(stream_);
  }
  void stop(int slot) override { pairs_[std::size_t(slot)].stop(stream_); }
  void resolve(int slot, std::chrono::steady_clock::time_point origin, std::int64_t& start_ns,
               std::int64_t& dur_ns) override {
    cuda::CudaEventPair& pair = pairs_[std::size_t(slot)];
    const float dur_ms = pair.elapsed_ms();
    const float from_anchor_ms = cuda::CudaEvent::elapsed_ms(anchor_, pair.start_event());
    const auto anchor_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(anchor_host_ - origin).count();
    start_ns = anchor_ns + std::int64_t(double(from_anchor_ms) * 1e6);
    dur_ns = std::int64_t(double(dur_ms) * 1e6);
  }

 private:
  cudaStream_t stream_;
  cuda::CudaEvent anchor_;
  std::chrono::steady_clock::time_point anchor_host_;
  std::deque<cuda::CudaEventPair> pairs_;  // a deque: growing never moves live pairs
};

}  // namespace

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky "no device / no driver" error
    return 0;
  }
  return n;
}

CudaDeviceInfo query_cuda_device(int device) {
  CudaDeviceInfo info;
  cudaDeviceProp prop{};
  LLMBENCH_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  info.name = prop.name;
  info.sm_count = prop.multiProcessorCount;
  info.memory_bus_bits = prop.memoryBusWidth;
  info.memory_gib = double(prop.totalGlobalMem) / double(1ULL << 30);
  int khz = 0;
  LLMBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device));
  info.sm_clock_mhz = khz / 1000;
  LLMBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, device));
  info.memory_clock_mhz = khz / 1000;
  // Double data rate: two transfers per clock over the bus.
  info.datasheet_bandwidth_gbps = 2.0 * double(khz) * 1e3 * info.memory_bus_bits / 8 / 1e9;
  int v = 0;
  LLMBENCH_CUDA_CHECK(cudaDriverGetVersion(&v));
  info.driver_version = version_text(v);
  LLMBENCH_CUDA_CHECK(cudaRuntimeGetVersion(&v));
  info.runtime_version = version_text(v);
  return info;
}

CudaBackend::CudaBackend(int device, bool sync_check)
    : impl_(std::make_unique<Impl>()), sync_check_(sync_check) {
  const int n = cuda_device_count();
  if (device < 0 || device >= n)
    throw BadInput("--backend cuda: no CUDA device " + std::to_string(device) + " (" +
                   std::to_string(n) + " found)");
  impl_->device = device;
  LLMBENCH_CUDA_CHECK(cudaSetDevice(device));
  info_ = query_cuda_device(device);
  impl_->sm_count = info_.sm_count;
  LLMBENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&impl_->stream, cudaStreamNonBlocking));
  LLMBENCH_CUBLAS_CHECK(cublasCreate(&impl_->cublas));
  LLMBENCH_CUBLAS_CHECK(cublasSetStream(impl_->cublas, impl_->stream));
  constexpr std::size_t kCublasWorkspaceBytes = std::size_t{32} << 20;
  LLMBENCH_CUBLAS_CHECK(cublasSetWorkspace(
      impl_->cublas, impl_->cublas_workspace.at_least(kCublasWorkspaceBytes),
      kCublasWorkspaceBytes));
  impl_->graphs = std::make_unique<CudaGraphDriver>(impl_->stream);
  impl_->half_x.graphs = impl_->graphs.get();
  impl_->attention_scratch.graphs = impl_->graphs.get();
  impl_->attention_arrivals.graphs = impl_->graphs.get();
  // alloc_async: keep freed blocks in the default pool instead of returning them to the driver
  // at every synchronisation, as a framework's caching allocator does.
  cudaMemPool_t pool = nullptr;
  LLMBENCH_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
  std::uint64_t threshold = UINT64_MAX;
  LLMBENCH_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
}

CudaBackend::~CudaBackend() {
  if (impl_->cublas) LLMBENCH_CUBLAS_CHECK_NOTHROW(cublasDestroy(impl_->cublas));
  if (impl_->stream) LLMBENCH_CUDA_CHECK_NOTHROW(cudaStreamDestroy(impl_->stream));
}

std::string CudaBackend::device_description() const {
  return info_.name + ", " + std::to_string(info_.sm_count) + " SMs, driver " +
         info_.driver_version + ", runtime " + info_.runtime_version;
}

Buffer CudaBackend::alloc(std::size_t bytes) {
  void* p = nullptr;
  const cudaError_t rc = cudaMalloc(&p, bytes == 0 ? 256 : bytes);
  if (rc != cudaSuccess)
    throw Error("cuda backend: cannot allocate " + std::to_string(bytes) + " bytes (" +
                cudaGetErrorString(rc) + ")");
  return Buffer(p, bytes, [](void* q) { LLMBENCH_CUDA_CHECK_NOTHROW(cudaFree(q)); });
}

Buffer CudaBackend::alloc_async(std::size_t bytes) {
  void* p = nullptr;
  cudaStream_t stream = impl_->stream;
  const cudaError_t rc = cudaMallocAsync(&p, bytes == 0 ? 256 : bytes, stream);
  if (rc != cudaSuccess)
    throw Error("cuda backend: cannot allocate " + std::to_string(bytes) + " bytes in stream "
                "order (" + cudaGetErrorString(rc) + ")");
  after_op("alloc_async");
  return Buffer(p, bytes,
                [stream](void* q) { LLMBENCH_CUDA_CHECK_NOTHROW(cudaFreeAsync(q, stream)); });
}

void CudaBackend::to_device(void* dst, const void* src, std::size_t bytes) {
  LLMBENCH_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, impl_->stream));
  after_op("to_device");
}

void CudaBackend::to_host(void* dst, const void* src, std::size_t bytes) {
  LLMBENCH_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, impl_->stream));
  LLMBENCH_CUDA_CHECK(cudaStreamSynchronize(impl_->stream));
}

void CudaBackend::synchronize() { LLMBENCH_CUDA_CHECK(cudaStreamSynchronize(impl_->stream)); }

std::unique_ptr<OpTimer> CudaBackend::make_op_timer(TimerMode mode) {
  if (mode == TimerMode::kHostNoSync) return std::make_unique<HostOpTimer>();
  if (mode == TimerMode::kEvents) return std::make_unique<CudaEventTimer>(impl_->stream);
#if defined(LLMBENCH_HAVE_CUPTI)
  synchronize();  // what ran before the traced repetition stays out of its records
  return make_cupti_timer();  // kDevice and kCupti
#else
  if (mode == TimerMode::kCupti)
    throw Error("--timer cupti: this llmbench was built without CUPTI (the CUDA toolkit's "
                "libcupti was not found at configure time)");
  return std::make_unique<CudaEventTimer>(impl_->stream);
#endif
}

void CudaBackend::profiler_start() {
  synchronize();  // start the capture with an idle stream
  LLMBENCH_CUDA_CHECK(cudaProfilerStart());
}

void CudaBackend::profiler_stop() {
  synchronize();
  LLMBENCH_CUDA_CHECK(cudaProfilerStop());
}

void CudaBackend::after_op(const char* op) {
  if (!sync_check_) return;
  const cudaError_t rc = cudaStreamSynchronize(impl_->stream);
  if (rc != cudaSuccess)
    throw Error(std::string("--sync-check: op '") + op + "' failed: " + cudaGetErrorString(rc));
}

void CudaBackend::embedding(float* out, const float* table, const std::int32_t* tokens,
                            int n_tokens, int dim) {
  cuda::embedding(out, table, tokens, n_tokens, dim, impl_->stream);
  after_op("embedding");
}
void CudaBackend::rmsnorm(float* out, const float* x, const float* weight, int n_rows, int dim,
                          float eps) {
  cuda::rmsnorm(out, x, weight, n_rows, dim, eps, impl_->stream);
  after_op("rmsnorm");
}
void CudaBackend::matmul(float* out, const float* x, const float* w, int m, int n, int k,
                         int lda) {
  cuda::gemm_f32(impl_->cublas, out, x, w, m, n, k, lda);
  after_op("matmul");
}
void CudaBackend::matmul_half(float* out, const float* x, const std::uint16_t* w, DType dtype,
                              int m, int n, int k, int lda) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {  // the empty sum; gemm_ex writes the zeros
    cuda::gemm_bf16(impl_->cublas, out, nullptr, nullptr, m, n, k, lda);
    after_op("matmul_half");
    return;
  }
  // Decode shapes stream the weights through gemv_half; the same products and fp32
  // accumulation either way. Chosen end to end on an H100 (docs/gpu-validation.md): llama2-7b
  // fp16 batch-1 TPOT 6.94 ms with gemv for every decode GEMM, 7.03 ms with down_proj
  // (k = 11008, where the cold-cache kernel bench favours cuBLAS by 10%) on cuBLAS, 7.28 ms
  // with cuBLAS for all.
  const bool gemv = cuda::gemv_half_supported(m, k, lda) &&
                    reinterpret_cast<std::uintptr_t>(w) % 16 == 0;
  // Up to kGemvRoundsXRowsMax rows the GEMV rounds fp32 x itself: the bits of the conversion
  // below without its kernel (gemv_half.cuh).
  if (gemv && m <= cuda::kGemvRoundsXRowsMax && reinterpret_cast<std::uintptr_t>(x) % 16 == 0) {
    if (dtype == DType::kBf16)
      cuda::gemv_bf16_rounding_x(out, x, reinterpret_cast<const __nv_bfloat16*>(w), m, n, k, lda,
                                 impl_->stream);
    else
      cuda::gemv_f16_rounding_x(out, x, reinterpret_cast<const __half*>(w), m, n, k, lda,
                                impl_->stream);
    after_op("matmul_half");
    return;
  }
  // x's rows keep their stride lda: the (m - 1) * lda + k values from x's first to its last
  // used one are converted (the gaps are converted too and never read).
  const std::size_t n_x = std::size_t(m - 1) * lda + k, bytes = n_x * sizeof(std::uint16_t);
  void* half_x = impl_->half_x.at_least(bytes);
  if (dtype == DType::kBf16) {
    auto* xh = static_cast<__nv_bfloat16*>(half_x);
    const auto* wh = reinterpret_cast<const __nv_bfloat16*>(w);
    cuda::convert_f32_to_bf16(xh, x, n_x, impl_->stream);
    if (gemv)
      cuda::gemv_bf16(out, xh, wh, m, n, k, lda, impl_->stream);
    else
      cuda::gemm_bf16(impl_->cublas, out, xh, wh, m, n, k, lda);
  } else {
    auto* xh = static_cast<__half*>(half_x);
    const auto* wh = reinterpret_cast<const __half*>(w);
    cuda::convert_f32_to_f16(xh, x, n_x, impl_->stream);
    if (gemv)
      cuda::gemv_f16(out, xh, wh, m, n, k, lda, impl_->stream);
    else
      cuda::gemm_f16(impl_->cublas, out, xh, wh, m, n, k, lda);
  }
  after_op("matmul_half");
}
void CudaBackend::embedding_half(float* out, const std::uint16_t* table, DType dtype,
                                 const std::int32_t* tokens, int n_tokens, int dim) {
  if (dtype == DType::kBf16)
    cuda::embedding_bf16(out, reinterpret_cast<const __nv_bfloat16*>(table), tokens, n_tokens,
                         dim, impl_->stream);
  else
    cuda::embedding_f16(out, reinterpret_cast<const __half*>(table), tokens, n_tokens, dim,
                        impl_->stream);
  after_op("embedding_half");
}
void CudaBackend::add_bias_rows(float* x, int n_rows, int stride, const float* bias, int n) {
  cuda::add_bias_rows(x, n_rows, stride, bias, n, impl_->stream);
  after_op("add_bias_rows");
}
void CudaBackend::rope(float* x, int n_rows, int row_stride, int n_heads, int head_dim,
                       const std::int32_t* positions, float theta) {
  cuda::rope(x, n_rows, row_stride, n_heads, head_dim, positions, theta, impl_->stream);
  after_op("rope");
}
void CudaBackend::kv_cache_write(float* cache, const float* src, int src_stride, int batch,
                                 int n_new, int past_len, int cache_seq, int kv_dim) {
  cuda::kv_cache_write(cache, src, src_stride, batch, n_new, past_len, cache_seq, kv_dim,
                       impl_->stream);
  after_op("kv_cache_write");
}
void CudaBackend::attention(float* out, const float* q, const float* k_cache,
                            const float* v_cache, const AttentionShape& shape,
                            const AttentionStrides& strides, DecodeAttention kernel) {
  // Long prefills through cuBLAS whichever kernel --decode-attention names.
  if (shape.n_new >= kGemmAttentionMinQueries) {
    const std::size_t bytes = cuda::attention_gemm_scratch_bytes(shape, kAttentionScoreBudget);
    if (bytes > 0) {
      void* scratch = impl_->attention_scratch.at_least(bytes);
      cuda::attention_gemm(impl_->cublas, out, q, k_cache, v_cache, shape, strides, scratch,
                           impl_->attention_scratch.bytes, impl_->stream);
      after_op("attention");
      return;
    }
  }
  cuda::attention_strided(out, q, k_cache, v_cache, shape, strides, impl_->stream,
                          impl_->attention_split(shape),
                          kernel_of(kernel));
  after_op("attention");
}
void CudaBackend::kv_cache_write_at(float* cache, const float* src, int src_stride, int batch,
                                    int n_new, const std::int32_t* positions, int cache_seq,
                                    int kv_dim) {
  cuda::kv_cache_write_at(cache, src, src_stride, batch, n_new, positions, cache_seq, kv_dim,
                          impl_->stream);
  after_op("kv_cache_write_at");
}
void CudaBackend::attention_at(float* out, const float* q, const float* k_cache,
                               const float* v_cache, const AttentionShape& shape,
                               const AttentionStrides& strides, const std::int32_t* positions,
                               int max_keys, DecodeAttention kernel) {
  // Always the attention kernel (no cuBLAS prefill path: that one sizes its work by past_len).
  cuda::attention_strided_at(out, q, k_cache, v_cache, shape, strides, positions, max_keys,
                             impl_->stream,
                             impl_->attention_split(shape),
                             kernel_of(kernel));
  after_op("attention_at");
}
GraphDriver* CudaBackend::graph_driver() {
  return sync_check_ ? nullptr : impl_->graphs.get();
}
void CudaBackend::paged_attention(float* out, const float* q, const float* k_pool,
                                  const float* v_pool, const std::int32_t* block_table,
                                  const PagedKv& paged, const AttentionShape& shape,
                                  const HeadStrides& q_strides, const HeadStrides& out_strides,
                                  DecodeAttention kernel) {
  cuda::paged_attention(out, q, k_pool, v_pool, block_table, paged, shape, q_strides,
                        out_strides, impl_->stream,
                        impl_->attention_split(shape),
                        kernel_of(kernel));
  after_op("paged_attention");
}
void CudaBackend::kv_write_ragged(float* pool, const std::int32_t* block_table,
                                 const PagedKv& paged, const float* src, int src_stride,
                                 const std::int32_t* seq, const std::int32_t* pos, int n_rows,
                                 int kv_dim) {
  cuda::kv_write_ragged(pool, block_table, paged, src, src_stride, seq, pos, n_rows, kv_dim,
                        impl_->stream);
  after_op("kv_write_ragged");
}
void CudaBackend::ragged_paged_attention(float* out, int out_stride, const float* q, int q_stride,
                                        const float* k_pool, const float* v_pool,
                                        const std::int32_t* block_table, const PagedKv& paged,
                                        const std::int32_t* seq, const std::int32_t* pos,
                                        int n_rows, int n_heads, int n_kv_heads, int head_dim) {
  cuda::ragged_paged_attention(out, out_stride, q, q_stride, k_pool, v_pool, block_table, paged,
                               seq, pos, n_rows, n_heads, n_kv_heads, head_dim, impl_->stream);
  after_op("ragged_paged_attention");
}
void CudaBackend::copy_heads(float* out, const HeadStrides& out_strides, const float* in,
                             const HeadStrides& in_strides, int batch, int seq, int heads,
                             int head_dim) {
  cuda::copy_heads(out, out_strides, in, in_strides, batch, seq, heads, head_dim, impl_->stream);
  after_op("copy_heads");
}
void CudaBackend::kv_write_paged(float* pool, const std::int32_t* block_table,
                                 const PagedKv& paged, const float* src,
                                 const HeadStrides& src_strides, int batch, int n_new,
                                 int past_len, int n_kv_heads, int head_dim) {
  cuda::kv_write_paged(pool, block_table, paged, src, src_strides, batch, n_new, past_len,
                       n_kv_heads, head_dim, impl_->stream);
  after_op("kv_write_paged");
}
void CudaBackend::kv_gather_paged(float* out, const float* pool,
                                  const std::int32_t* block_table, const PagedKv& paged,
                                  int batch, int len, int kv_dim, int out_seq) {
  cuda::kv_gather_paged(out, pool, block_table, paged, batch, len, kv_dim, out_seq,
                        impl_->stream);
  after_op("kv_gather_paged");
}
void CudaBackend::swiglu(float* out, const float* gate_up, int n_rows, int ffn_dim) {
  cuda::swiglu(out, gate_up, n_rows, ffn_dim, impl_->stream);
  after_op("swiglu");
}
void CudaBackend::add_inplace(float* x, const float* y, std::size_t n) {
  cuda::add_inplace(x, y, n, impl_->stream);
  after_op("add_inplace");
}
void CudaBackend::add_rmsnorm(float* x, const float* residual, float* out, const float* weight,
                              int n_rows, int dim, float eps) {
  cuda::add_rmsnorm(x, residual, out, weight, n_rows, dim, eps, impl_->stream);
  after_op("add_rmsnorm");
}
void CudaBackend::rope_kv_write(float* qkv, float* k_cache, float* v_cache,
                                const std::int32_t* positions, const RopeKvShape& s) {
  cuda::rope_kv_write(qkv, k_cache, v_cache, positions, s, impl_->stream);
  after_op("rope_kv_write");
}
void CudaBackend::swiglu_down(float* out, const float* gate_up, float* act, WeightRef w_down,
                              int n_rows, int dim, int ffn_dim) {
  // The fused GEMV where matmul_half would take gemv_half (decode rows, 16-bit weights).
  const bool half = w_down.dtype == DType::kBf16 || w_down.dtype == DType::kFp16;
  if (!half || reinterpret_cast<std::uintptr_t>(w_down.data) % 16 != 0 ||
      !cuda::swiglu_down_supported(n_rows, ffn_dim)) {
    Backend::swiglu_down(out, gate_up, act, w_down, n_rows, dim, ffn_dim);
    return;
  }
  if (w_down.dtype == DType::kBf16)
    cuda::swiglu_down_bf16(out, gate_up, static_cast<const __nv_bfloat16*>(w_down.data), n_rows,
                           dim, ffn_dim, impl_->stream);
  else
    cuda::swiglu_down_f16(out, gate_up, static_cast<const __half*>(w_down.data), n_rows, dim,
                          ffn_dim, impl_->stream);
  after_op("swiglu_down");
}
void CudaBackend::gather_rows(float* out, const float* x, const std::int32_t* rows, int n_rows,
                              int dim) {
  cuda::gather_rows(out, x, rows, n_rows, dim, impl_->stream);
  after_op("gather_rows");
}
void CudaBackend::argmax_rows(std::int32_t* out, const float* x, int n_rows, int n_cols) {
  cuda::argmax_rows(out, x, n_rows, n_cols, impl_->stream);
  after_op("argmax_rows");
}

}  // namespace llmbench
