// CpuBackend: forwards each op to its kernels/cpu reference implementation.
#include "engine/model/cpu_backend.h"

#include <cblas.h>
#include <omp.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>
#include <vector>

#include "kernels/common/error.h"
#include "kernels/cpu/add_rmsnorm.h"
#include "kernels/cpu/argmax.h"
#include "kernels/cpu/attention_decode.h"
#include "kernels/cpu/attention_gemm.h"
#include "kernels/cpu/copy_heads.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/embedding.h"
#include "kernels/cpu/kv_cache.h"
#include "kernels/cpu/kv_f16.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/matmul_half.h"
#include "kernels/cpu/quant.h"
#include "kernels/cpu/paged_attention.h"
#include "kernels/cpu/paged_kv.h"
#include "kernels/cpu/ragged_attention.h"
#include "kernels/cpu/ragged_attention_gemm.h"
#include "kernels/cpu/rmsnorm.h"
#include "kernels/cpu/rope.h"
#include "kernels/cpu/rope_kv_write.h"
#include "kernels/cpu/swiglu.h"

namespace llmbench {

CpuBackend::CpuBackend(int threads) : threads_(threads > 0 ? threads : omp_get_max_threads()) {
  // Set both explicitly, every time: OpenBLAS's own default need not follow OpenMP's.
  omp_set_num_threads(threads_);
  openblas_set_num_threads(threads_);
}

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown";
}

std::string CpuBackend::device_description() const {
  return cpu_model_name() + ", " + std::to_string(threads_) + " threads";
}

std::unique_ptr<OpTimer> CpuBackend::make_op_timer(TimerMode mode) {
  if (mode == TimerMode::kCupti || mode == TimerMode::kEvents)
    throw BadInput("--timer " + std::string(timer_mode_name(mode)) +
                   " needs the CUDA backend (CPU ops are timed by the host clock)");
  return std::make_unique<HostOpTimer>();
}

namespace {
constexpr std::size_t kHugePageBytes = std::size_t(2) << 20;
}  // namespace

Buffer CpuBackend::alloc(std::size_t bytes) {
  if (bytes >= kHugePageBytes) {
    // Weight matrices and other large buffers: whole 2 MiB pages, advised as transparent huge
    // pages before anything touches them (where THP is set to `madvise`, as on Debian, nothing
    // gets huge pages without this). A decode step streams every weight once, gigabytes past
    // the L3; with 4 KiB pages that is a TLB miss and a page walk every 4 KiB. Measured on the
    // AVX2-only VM (docs/metrics.md, issue 31): batch-1 TPOT with THP-backed weights over
    // without, alternating pairs, tinyllama-1.1b fp16 0.85-1.05, `small` fp32 0.86-0.97.
    // Advice only: where THP is off the pages stay 4 KiB and nothing else changes.
    const std::size_t rounded = (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
    void* p = std::aligned_alloc(kHugePageBytes, rounded);
    if (!p) throw Error("cpu backend: cannot allocate " + std::to_string(bytes) + " bytes");
    (void)madvise(p, rounded, MADV_HUGEPAGE);
    return Buffer(p, bytes, [](void* q) { std::free(q); });
  }
  // 64-byte alignment: one cache line, and the widest vector loads.
  const std::size_t rounded = (bytes + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
  if (!p) throw Error("cpu backend: cannot allocate " + std::to_string(bytes) + " bytes");
  return Buffer(p, bytes, [](void* q) { std::free(q); });
}

// Zero bytes may come with null pointers (an empty vector's data(), an empty buffer), which
// memcpy must not be given even for a count of 0.
void CpuBackend::to_device(void* dst, const void* src, std::size_t bytes) {
  if (bytes > 0) std::memcpy(dst, src, bytes);
}

void CpuBackend::to_host(void* dst, const void* src, std::size_t bytes) {
  if (bytes > 0) std::memcpy(dst, src, bytes);
}

void CpuBackend::embedding(float* out, const float* table, const std::int32_t* tokens,
                           int n_tokens, int dim) {
  cpu::embedding(out, table, tokens, n_tokens, dim);
}
void CpuBackend::rmsnorm(float* out, const float* x, const float* weight, int n_rows, int dim,
                         float eps) {
  cpu::rmsnorm(out, x, weight, n_rows, dim, eps);
}
#ifdef LLMBENCH_CALIBRATION_SLOWDOWN
namespace {
// Calibration builds only (-DLLMBENCH_CALIBRATION_SLOWDOWN=ON, see the top CMakeLists.txt):
// LLMBENCH_EXTRA_MATMUL_PCT=P recomputes the first P% of every matmul's output columns into
// scratch, a deliberate extra pass (a second kernel call, so not proportional to P; 10 costs
// the ci-smoke cases about 10%); the result is unchanged.
int extra_matmul_pct() {
  static const int pct = [] {
    const char* v = std::getenv("LLMBENCH_EXTRA_MATMUL_PCT");
    return v ? std::max(0, std::atoi(v)) : 0;
  }();
  return pct;
}
}  // namespace
#endif

namespace {
// A planted slowdown for the tests of the regression gate and of bisect (tests/compare,
// tests/history), in every build: LLMBENCH_PLANTED_SLOWDOWN_PCT=P makes every CPU fp32 matmul
// busy-wait for P% of its own duration after it, so a case gets slower by about P% of its
// matmul time, a known change those tests must find. Unset (every real measurement), it costs
// one predictable branch per matmul.
double planted_slowdown() {
  static const double f = [] {
    const char* v = std::getenv("LLMBENCH_PLANTED_SLOWDOWN_PCT");
    return v ? std::max(0.0, std::atof(v)) / 100.0 : 0.0;
  }();
  return f;
}
}  // namespace

void CpuBackend::matmul(float* out, const float* x, const float* w, int m, int n, int k,
                        int lda) {
  if (const double f = planted_slowdown(); f > 0) {
    const auto t0 = std::chrono::steady_clock::now();
    cpu::matmul(out, x, w, m, n, k, lda);
    const auto until = std::chrono::steady_clock::now() + (std::chrono::steady_clock::now() - t0) * f;
    while (std::chrono::steady_clock::now() < until) {
    }
    return;
  }
  cpu::matmul(out, x, w, m, n, k, lda);
#ifdef LLMBENCH_CALIBRATION_SLOWDOWN
  if (const int pct = extra_matmul_pct(); pct > 0) {
    const int n_extra = std::max(1, int(std::int64_t(n) * pct / 100));
    thread_local std::vector<float> scratch;
    scratch.resize(std::size_t(m) * std::size_t(n_extra));
    cpu::matmul(scratch.data(), x, w, m, n_extra, k, lda);
  }
#endif
}
void CpuBackend::matmul_half(float* out, const float* x, const std::uint16_t* w, DType dtype,
                             int m, int n, int k, int lda) {
  cpu::matmul_half(out, x, w, dtype, m, n, k, lda);
}
void CpuBackend::embedding_half(float* out, const std::uint16_t* table, DType dtype,
                                const std::int32_t* tokens, int n_tokens, int dim) {
  for (int i = 0; i < n_tokens; ++i)
    cpu::widen_half(out + std::size_t(i) * dim, table + std::size_t(tokens[i]) * dim, dim, dtype);
}
void CpuBackend::matmul_quant(float* out, const float* x, const void* w, DType dtype, int m,
                              int n, int k, int lda) {
  // Every row count on the int8-activation product, so prefill, decode and --logits all give
  // the same row for the same input (docs/metrics.md, "Quantised weights").
  cpu::matmul_quant_vnni(out, x, w, dtype, m, n, k, lda);
}
void CpuBackend::embedding_quant(float* out, const void* table, DType dtype,
                                 const std::int32_t* tokens, int n_tokens, int vocab, int dim) {
  cpu::embedding_quant(out, table, dtype, tokens, n_tokens, vocab, dim);
}
void CpuBackend::quantize_weights(void* dst, const float* src, DType dtype, std::int64_t n_rows,
                                  int k) {
  // The column-panel layout matmul_quant_vnni reads (kernels/cpu/quant.h), made once here.
  cpu::quantize_packed(dst, src, dtype, n_rows, k);
}
void CpuBackend::add_bias_rows(float* x, int n_rows, int stride, const float* bias, int n) {
  cpu::add_bias_rows(x, n_rows, stride, bias, n);
}
void CpuBackend::rope(float* x, int n_rows, int row_stride, int n_heads, int head_dim,
                      const std::int32_t* positions, float theta) {
  cpu::rope(x, n_rows, row_stride, n_heads, head_dim, positions, theta);
}
void CpuBackend::kv_cache_write(float* cache, const float* src, int src_stride, int batch,
                                int n_new, int past_len, int cache_seq, int kv_dim) {
  cpu::kv_cache_write(cache, src, src_stride, batch, n_new, past_len, cache_seq, kv_dim);
}
// The CPU has one decode attention kernel: --decode-attention picks between CUDA kernels, so
// tiled and streamed both run it here (the same tokens by construction).
void CpuBackend::attention(float* out, const float* q, const float* k_cache,
                           const float* v_cache, const AttentionShape& shape,
                           const AttentionStrides& strides, DecodeAttention /*kernel*/) {
  // Prefill as GEMMs (several times the reference loop's rate at long prompts); decode steps
  // and short prompts on the vectorised decode kernel (the reference loop without AVX-512).
  if (shape.n_new >= cpu::kAttentionGemmMinRows)
    cpu::attention_gemm(out, q, k_cache, v_cache, shape, strides);
  else
    cpu::attention_decode(out, q, k_cache, v_cache, shape, strides);
}
void CpuBackend::kv_cache_write_f16(std::uint16_t* cache, const float* src, int src_stride,
                                    int batch, int n_new, int past_len, int cache_seq,
                                    int kv_dim) {
  cpu::kv_cache_write_f16(cache, src, src_stride, batch, n_new, past_len, cache_seq, kv_dim);
}
// As attention() above: prefill as GEMMs over the widened visible positions, decode on the
// vectorised kernel, which widens as it loads.
void CpuBackend::attention_f16(float* out, const float* q, const std::uint16_t* k_cache,
                               const std::uint16_t* v_cache, const AttentionShape& shape,
                               const AttentionStrides& strides, DecodeAttention /*kernel*/) {
  if (shape.n_new >= cpu::kAttentionGemmMinRows) {
    kv_f16_scratch_.resize(std::size_t(cpu::attention_f16_scratch_floats(shape)));
    cpu::attention_f16_gemm(out, q, k_cache, v_cache, shape, strides, kv_f16_scratch_.data());
  } else {
    cpu::attention_f16_decode(out, q, k_cache, v_cache, shape, strides);
  }
}
void CpuBackend::rope_kv_write_f16(float* qkv, std::uint16_t* k_cache, std::uint16_t* v_cache,
                                   const std::int32_t* positions, const RopeKvShape& s) {
  cpu::rope_kv_write_f16(qkv, k_cache, v_cache, positions, s);
}
void CpuBackend::paged_attention(float* out, const float* q, const float* k_pool,
                                 const float* v_pool, const std::int32_t* block_table,
                                 const PagedKv& paged, const AttentionShape& shape,
                                 const HeadStrides& q_strides, const HeadStrides& out_strides,
                                 DecodeAttention /*kernel*/) {
  // Through the block table at every prompt length (no GEMM version reads a paged cache); one
  // kernel for both --decode-attention values, as attention() above.
  cpu::paged_attention_decode(out, q, k_pool, v_pool, block_table, paged, shape, q_strides,
                              out_strides);
}
void CpuBackend::copy_heads(float* out, const HeadStrides& out_strides, const float* in,
                            const HeadStrides& in_strides, int batch, int seq, int heads,
                            int head_dim) {
  cpu::copy_heads(out, out_strides, in, in_strides, batch, seq, heads, head_dim);
}
void CpuBackend::kv_write_paged(float* pool, const std::int32_t* block_table,
                                const PagedKv& paged, const float* src,
                                const HeadStrides& src_strides, int batch, int n_new,
                                int past_len, int n_kv_heads, int head_dim) {
  cpu::kv_write_paged(pool, block_table, paged, src, src_strides, batch, n_new, past_len,
                      n_kv_heads, head_dim);
}
void CpuBackend::kv_gather_paged(float* out, const float* pool, const std::int32_t* block_table,
                                 const PagedKv& paged, int batch, int len, int kv_dim,
                                 int out_seq) {
  cpu::kv_gather_paged(out, pool, block_table, paged, batch, len, kv_dim, out_seq);
}
void CpuBackend::kv_write_ragged(float* pool, const std::int32_t* block_table,
                                 const PagedKv& paged, const float* src, int src_stride,
                                 const std::int32_t* seq, const std::int32_t* pos, int n_rows,
                                 int kv_dim) {
  cpu::kv_write_ragged(pool, block_table, paged, src, src_stride, seq, pos, n_rows, kv_dim);
}
void CpuBackend::ragged_paged_attention(float* out, int out_stride, const float* q, int q_stride,
                                        const float* k_pool, const float* v_pool,
                                        const std::int32_t* block_table, const PagedKv& paged,
                                        const std::int32_t* seq, const std::int32_t* pos,
                                        int n_rows, int n_heads, int n_kv_heads, int head_dim) {
  // Prompt chunks of kAttentionGemmMinRows rows or more as GEMMs, like attention() above.
  cpu::ragged_paged_attention_gemm(out, out_stride, q, q_stride, k_pool, v_pool, block_table,
                                   paged, seq, pos, n_rows, n_heads, n_kv_heads, head_dim);
}
void CpuBackend::kv_write_ragged_f16(std::uint16_t* pool, const std::int32_t* block_table,
                                     const PagedKv& paged, const float* src, int src_stride,
                                     const std::int32_t* seq, const std::int32_t* pos,
                                     int n_rows, int kv_dim) {
  cpu::kv_write_ragged_f16(pool, block_table, paged, src, src_stride, seq, pos, n_rows, kv_dim);
}
void CpuBackend::ragged_paged_attention_f16(float* out, int out_stride, const float* q,
                                            int q_stride, const std::uint16_t* k_pool,
                                            const std::uint16_t* v_pool,
                                            const std::int32_t* block_table,
                                            const PagedKv& paged, const std::int32_t* seq,
                                            const std::int32_t* pos, int n_rows, int n_heads,
                                            int n_kv_heads, int head_dim) {
  cpu::ragged_paged_attention_gemm_f16(out, out_stride, q, q_stride, k_pool, v_pool, block_table,
                                       paged, seq, pos, n_rows, n_heads, n_kv_heads, head_dim);
}
void CpuBackend::swiglu(float* out, const float* gate_up, int n_rows, int ffn_dim) {
  cpu::swiglu(out, gate_up, n_rows, ffn_dim);
}
void CpuBackend::add_inplace(float* x, const float* y, std::size_t n) {
  cpu::add_inplace(x, y, n);
}
void CpuBackend::add_rmsnorm(float* x, const float* residual, float* out, const float* weight,
                             int n_rows, int dim, float eps) {
  cpu::add_rmsnorm(x, residual, out, weight, n_rows, dim, eps);
}
void CpuBackend::rope_kv_write(float* qkv, float* k_cache, float* v_cache,
                               const std::int32_t* positions, const RopeKvShape& s) {
  cpu::rope_kv_write(qkv, k_cache, v_cache, positions, s);
}
void CpuBackend::gather_rows(float* out, const float* x, const std::int32_t* rows, int n_rows,
                             int dim) {
  cpu::gather_rows(out, x, rows, n_rows, dim);
}
void CpuBackend::argmax_rows(std::int32_t* out, const float* x, int n_rows, int n_cols) {
  cpu::argmax_rows(out, x, n_rows, n_cols);
}

}  // namespace llmbench
