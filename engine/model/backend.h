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

#include "engine/model/buffer.h"
#include "engine/model/trace.h"
#include "engine/model/variants.h"
#include "kernels/common/dtype.h"
#include "kernels/common/error.h"
#include "kernels/common/layout.h"
#include "kernels/common/rope_kv_shape.h"

namespace llmbench {

class GraphDriver;  // cuda_graph.h

// A weight matrix in backend memory, [rows, cols] row-major, with its element type: fp32
// values, the bits of bf16/fp16 values, or int8/int4 blocks (kernels/cpu/quant.h) (--dtype;
// docs/metrics.md, "Weight dtypes" and "Quantised weights").
struct WeightRef {
  const void* data = nullptr;
  DType dtype = DType::kFp32;
};

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
  // A short-lived buffer, allocated and freed in stream order the way a framework's caching
  // allocator serves torch.cat (the --kv-cache concat caches): host memory from the C
  // allocator on the CPU; cudaMallocAsync / cudaFreeAsync from the device's default memory
  // pool on CUDA. Free it (drop the Buffer) before the backend goes away.
  virtual Buffer alloc_async(std::size_t bytes) = 0;
  virtual void to_device(void* dst, const void* src, std::size_t bytes) = 0;
  // Copies to the host and waits until the bytes are there.
  virtual void to_host(void* dst, const void* src, std::size_t bytes) = 0;
  virtual void synchronize() = 0;
  // A timer for traced ops. kDevice: the correct one (host clock on the synchronous CPU
  // backend; CUPTI's activity records on CUDA, event pairs in a build without CUPTI). kCupti,
  // kEvents: one of the two CUDA timers by name (BadInput on the CPU). kHostNoSync: the host
  // clock without synchronisation (HostOpTimer on both; wrong on purpose on CUDA).
  virtual std::unique_ptr<OpTimer> make_op_timer(TimerMode mode) = 0;
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
  // out[m, n] = x[m, k] . w[n, k] with w's elements bf16 or fp16 bits (`dtype`): x rounded to
  // `dtype` (nearest even), products accumulated in fp32, out fp32
  // (kernels/cpu/matmul_half.h).
  virtual void matmul_half(float* out, const float* x, const std::uint16_t* w, DType dtype,
                           int m, int n, int k, int lda) = 0;
  // out[m, n] = x[m, k] . dequantise(w)[n, k] with w int8 or int4 blocks (`dtype`; as
  // quantize_weights stores them, kernels/cpu/quant.h), x and out fp32; the CPU backend
  // quantises x's rows to int8 blocks first (matmul_quant_vnni_reference is its spec). The CPU backend only: the default refuses
  // (weights are never quantised for another backend: load_weights refuses first).
  virtual void matmul_quant(float* out, const float* x, const void* w, DType dtype, int m, int n,
                            int k, int lda);
  // dst (backend memory, host-visible) = src [n_rows, k] fp32 quantised to int8/int4 blocks
  // in the layout this backend's matmul_quant reads (the CPU's: the column panels of
  // kernels/cpu/quant.h, quantize_packed; the same bytes per weight as the row-major blocks):
  // weight loading. The CPU backend only, like matmul_quant.
  virtual void quantize_weights(void* dst, const float* src, DType dtype, std::int64_t n_rows,
                                int k);
  // matmul, matmul_half or matmul_quant, as w's dtype says: what forward() calls for every
  // weight GEMM.
  void matmul_weights(float* out, const float* x, WeightRef w, int m, int n, int k, int lda) {
    if (w.dtype == DType::kFp32)
      matmul(out, x, static_cast<const float*>(w.data), m, n, k, lda);
    else if (dtype_is_quantized(w.dtype))
      matmul_quant(out, x, w.data, w.dtype, m, n, k, lda);
    else
      matmul_half(out, x, static_cast<const std::uint16_t*>(w.data), w.dtype, m, n, k, lda);
  }
  // embedding from a table of bf16/fp16 bits, each row widened to fp32 (exact).
  virtual void embedding_half(float* out, const std::uint16_t* table, DType dtype,
                              const std::int32_t* tokens, int n_tokens, int dim) = 0;
  // embedding from a table [vocab, dim] of int8/int4 blocks as quantize_weights stores them,
  // each row dequantised to fp32 (the CPU backend only, like matmul_quant; the packed layout
  // needs vocab to find a row of a last, partial column group).
  virtual void embedding_quant(float* out, const void* table, DType dtype,
                               const std::int32_t* tokens, int n_tokens, int vocab, int dim);
  // One of the three above, as the table's dtype says; table is [vocab, dim].
  void embedding_weights(float* out, WeightRef table, const std::int32_t* tokens, int n_tokens,
                         int vocab, int dim) {
    if (table.dtype == DType::kFp32)
      embedding(out, static_cast<const float*>(table.data), tokens, n_tokens, dim);
    else if (dtype_is_quantized(table.dtype))
      embedding_quant(out, table.data, table.dtype, tokens, n_tokens, vocab, dim);
    else
      embedding_half(out, static_cast<const std::uint16_t*>(table.data), table.dtype, tokens,
                     n_tokens, dim);
  }
  virtual void add_bias_rows(float* x, int n_rows, int stride, const float* bias, int n) = 0;
  virtual void rope(float* x, int n_rows, int row_stride, int n_heads, int head_dim,
                    const std::int32_t* positions, float theta) = 0;
  virtual void kv_cache_write(float* cache, const float* src, int src_stride, int batch,
                              int n_new, int past_len, int cache_seq, int kv_dim) = 0;
  // kernels/cpu/attention.h, attention_strided: operands placed by `strides` (the shape's
  // q_stride, out_stride and cache_seq are not used). `kernel` (--decode-attention) picks the
  // CUDA kernel of the calls that do not go through cuBLAS (variants.h); the CPU has one.
  virtual void attention(float* out, const float* q, const float* k_cache,
                         const float* v_cache, const AttentionShape& shape,
                         const AttentionStrides& strides, DecodeAttention kernel) = 0;
  // kv_cache_write and attention with the pass's length in backend memory instead of an
  // argument, so a captured decode step replays at every length (--cuda-graphs, cuda_graph.h):
  // src row r = b * n_new + t goes to position positions[r], and query t of sequence b sees keys
  // [0, positions[b * n_new + t]] (shape.past_len is not used); positions is the pass's RoPE
  // array, [batch * n_new] int32. max_keys bounds every query's key count over all the passes
  // that share the launch (the case's longest context) and sizes the attention's split grid.
  // The defaults serve a host-visible backend: they read the positions, check that they are
  // past_len + t for one past_len, and call the ops above. Others override them.
  virtual void kv_cache_write_at(float* cache, const float* src, int src_stride, int batch,
                                 int n_new, const std::int32_t* positions, int cache_seq,
                                 int kv_dim);
  virtual void attention_at(float* out, const float* q, const float* k_cache,
                            const float* v_cache, const AttentionShape& shape,
                            const AttentionStrides& strides, const std::int32_t* positions,
                            int max_keys, DecodeAttention kernel);
  // ---- the fp16 KV cache (--kv-cache-dtype fp16, variants.h) ----
  // kv_cache_write, attention, their _at forms and rope_kv_write over binary16 caches: each new
  // key and value rounded to the nearest half (ties to even, kernels/common/half.h
  // fp32_to_fp16) on the write; attention widens them exactly to fp32 and computes what
  // attention() computes on the widened cache (kernels/cpu/attention_f16.h, the reference).
  // The defaults of the two writes and of attention_f16 refuse (BadInput naming the backend);
  // the _at defaults serve a host-visible backend as kv_cache_write_at and attention_at do.
  virtual void kv_cache_write_f16(std::uint16_t* cache, const float* src, int src_stride,
                                  int batch, int n_new, int past_len, int cache_seq, int kv_dim);
  virtual void attention_f16(float* out, const float* q, const std::uint16_t* k_cache,
                             const std::uint16_t* v_cache, const AttentionShape& shape,
                             const AttentionStrides& strides, DecodeAttention kernel);
  virtual void kv_cache_write_f16_at(std::uint16_t* cache, const float* src, int src_stride,
                                     int batch, int n_new, const std::int32_t* positions,
                                     int cache_seq, int kv_dim);
  virtual void attention_f16_at(float* out, const float* q, const std::uint16_t* k_cache,
                                const std::uint16_t* v_cache, const AttentionShape& shape,
                                const AttentionStrides& strides, const std::int32_t* positions,
                                int max_keys, DecodeAttention kernel);
  // What records this backend's launches into graphs and replays them (cuda_graph.h); nullptr
  // when it cannot (the CPU backend; CUDA with --sync-check, which synchronises after each op).
  virtual GraphDriver* graph_driver() { return nullptr; }
  // attention through a block table (kernels/cpu/paged_attention.h); `kernel` as attention's.
  virtual void paged_attention(float* out, const float* q, const float* k_pool,
                               const float* v_pool, const std::int32_t* block_table,
                               const PagedKv& paged, const AttentionShape& shape,
                               const HeadStrides& q_strides, const HeadStrides& out_strides,
                               DecodeAttention kernel) = 0;
  virtual void copy_heads(float* out, const HeadStrides& out_strides, const float* in,
                          const HeadStrides& in_strides, int batch, int seq, int heads,
                          int head_dim) = 0;
  virtual void kv_write_paged(float* pool, const std::int32_t* block_table,
                              const PagedKv& paged, const float* src,
                              const HeadStrides& src_strides, int batch, int n_new,
                              int past_len, int n_kv_heads, int head_dim) = 0;
  virtual void kv_gather_paged(float* out, const float* pool, const std::int32_t* block_table,
                               const PagedKv& paged, int batch, int len, int kv_dim,
                               int out_seq) = 0;
  // Continuous batching (kernels/cpu/ragged_attention.h): rows of many sequences, each at its
  // own position (seq, pos: device int32 arrays of n_rows), over one paged pool.
  virtual void kv_write_ragged(float* pool, const std::int32_t* block_table, const PagedKv& paged,
                               const float* src, int src_stride, const std::int32_t* seq,
                               const std::int32_t* pos, int n_rows, int kv_dim) = 0;
  virtual void ragged_paged_attention(float* out, int out_stride, const float* q, int q_stride,
                                      const float* k_pool, const float* v_pool,
                                      const std::int32_t* block_table, const PagedKv& paged,
                                      const std::int32_t* seq, const std::int32_t* pos,
                                      int n_rows, int n_heads, int n_kv_heads, int head_dim) = 0;
  // The continuous-batching pool in binary16 (serve and ragged cases with --kv-cache-dtype
  // fp16): kv_write_ragged and ragged_paged_attention over a pool of halves, rounding on the
  // write and widening in attention as the fp16 ops above (kernels/cpu/kv_f16.h). The defaults
  // refuse (BadInput naming the backend).
  virtual void kv_write_ragged_f16(std::uint16_t* pool, const std::int32_t* block_table,
                                   const PagedKv& paged, const float* src, int src_stride,
                                   const std::int32_t* seq, const std::int32_t* pos, int n_rows,
                                   int kv_dim);
  virtual void ragged_paged_attention_f16(float* out, int out_stride, const float* q,
                                          int q_stride, const std::uint16_t* k_pool,
                                          const std::uint16_t* v_pool,
                                          const std::int32_t* block_table, const PagedKv& paged,
                                          const std::int32_t* seq, const std::int32_t* pos,
                                          int n_rows, int n_heads, int n_kv_heads, int head_dim);
  virtual void swiglu(float* out, const float* gate_up, int n_rows, int ffn_dim) = 0;
  virtual void add_inplace(float* x, const float* y, std::size_t n) = 0;

  // ---- fused ops (--fuse small, docs/variants.md) ----
  // Each default runs the unfused ops it replaces, so every backend has them; the CPU and CUDA
  // backends override what they fuse.
  // x += residual, then out = rmsnorm(x, weight) (kernels/cpu/add_rmsnorm.h).
  virtual void add_rmsnorm(float* x, const float* residual, float* out, const float* weight,
                           int n_rows, int dim, float eps) {
    add_inplace(x, residual, std::size_t(n_rows) * std::size_t(dim));
    rmsnorm(out, x, weight, n_rows, dim, eps);
  }
  // RoPE on q and k of the fused qkv rows in place, then each row's k and v to the preallocated
  // caches at its position (kernels/cpu/rope_kv_write.h; positions: s.rows() int32 in backend
  // memory, equal to past_len + t).
  virtual void rope_kv_write(float* qkv, float* k_cache, float* v_cache,
                             const std::int32_t* positions, const RopeKvShape& s) {
    const int stride = s.qkv_dim(), q = s.q_dim(), kv = s.kv_dim();
    rope(qkv, s.rows(), stride, s.n_heads, s.head_dim, positions, s.theta);
    rope(qkv + q, s.rows(), stride, s.n_kv_heads, s.head_dim, positions, s.theta);
    kv_cache_write(k_cache, qkv + q, stride, s.batch, s.n_new, s.past_len, s.cache_seq, kv);
    kv_cache_write(v_cache, qkv + q + kv, stride, s.batch, s.n_new, s.past_len, s.cache_seq, kv);
  }
  // rope_kv_write into fp16 caches (--kv-cache-dtype fp16): the same rotation, then the
  // kv_cache_write_f16 rounding.
  virtual void rope_kv_write_f16(float* qkv, std::uint16_t* k_cache, std::uint16_t* v_cache,
                                 const std::int32_t* positions, const RopeKvShape& s) {
    const int stride = s.qkv_dim(), q = s.q_dim(), kv = s.kv_dim();
    rope(qkv, s.rows(), stride, s.n_heads, s.head_dim, positions, s.theta);
    rope(qkv + q, s.rows(), stride, s.n_kv_heads, s.head_dim, positions, s.theta);
    kv_cache_write_f16(k_cache, qkv + q, stride, s.batch, s.n_new, s.past_len, s.cache_seq, kv);
    kv_cache_write_f16(v_cache, qkv + q + kv, stride, s.batch, s.n_new, s.past_len, s.cache_seq,
                       kv);
  }
  // out [n_rows, dim] = swiglu(gate_up) . w_down^T (kernels/cpu/swiglu_down.h; w_down
  // [dim, ffn_dim] of any weight dtype). act [n_rows, ffn_dim] is scratch an implementation may
  // use for the activations (the default writes them there; the CUDA decode kernel does not).
  virtual void swiglu_down(float* out, const float* gate_up, float* act, WeightRef w_down,
                           int n_rows, int dim, int ffn_dim) {
    swiglu(act, gate_up, n_rows, ffn_dim);
    matmul_weights(out, act, w_down, n_rows, dim, ffn_dim, ffn_dim);
  }

  virtual void gather_rows(float* out, const float* x, const std::int32_t* rows, int n_rows,
                           int dim) = 0;
  virtual void argmax_rows(std::int32_t* out, const float* x, int n_rows, int n_cols) = 0;
};

namespace detail {

// The past_len of host-visible `positions` that are past_len + t for every sequence's new token
// t (Backend::kv_cache_write_at and attention_at on a host-visible backend); throws
// llmbench::Error naming `op` otherwise.
inline int host_past_len(const Backend& be, const char* op, const std::int32_t* positions,
                         int batch, int n_new) {
  if (!be.host_visible())
    throw Error("backend " + be.name() + ": " + op + " is not implemented");
  const int past = batch > 0 && n_new > 0 ? positions[0] : 0;
  for (int b = 0; b < batch; ++b)
    for (int t = 0; t < n_new; ++t)
      if (positions[b * n_new + t] != past + t)
        throw Error(std::string(op) + ": positions are not past_len + t for one past_len");
  return past;
}

}  // namespace detail

inline void Backend::kv_cache_write_at(float* cache, const float* src, int src_stride, int batch,
                                       int n_new, const std::int32_t* positions, int cache_seq,
                                       int kv_dim) {
  const int past = detail::host_past_len(*this, "kv_cache_write_at", positions, batch, n_new);
  kv_cache_write(cache, src, src_stride, batch, n_new, past, cache_seq, kv_dim);
}
inline void Backend::attention_at(float* out, const float* q, const float* k_cache,
                                  const float* v_cache, const AttentionShape& shape,
                                  const AttentionStrides& strides,
                                  const std::int32_t* positions, int max_keys,
                                  DecodeAttention kernel) {
  AttentionShape s = shape;
  s.past_len = detail::host_past_len(*this, "attention_at", positions, shape.batch, shape.n_new);
  if (s.past_len + s.n_new > max_keys)
    throw Error("attention_at: " + std::to_string(s.past_len + s.n_new) +
                " keys, over max_keys " + std::to_string(max_keys));
  attention(out, q, k_cache, v_cache, s, strides, kernel);
}

inline void Backend::kv_cache_write_f16(std::uint16_t*, const float*, int, int, int, int, int,
                                        int) {
  throw BadInput("--kv-cache-dtype fp16 is not implemented by backend " + name());
}
inline void Backend::attention_f16(float*, const float*, const std::uint16_t*,
                                   const std::uint16_t*, const AttentionShape&,
                                   const AttentionStrides&, DecodeAttention) {
  throw BadInput("--kv-cache-dtype fp16 is not implemented by backend " + name());
}
inline void Backend::kv_write_ragged_f16(std::uint16_t*, const std::int32_t*, const PagedKv&,
                                         const float*, int, const std::int32_t*,
                                         const std::int32_t*, int, int) {
  throw BadInput("--kv-cache-dtype fp16 is not implemented by backend " + name());
}
inline void Backend::ragged_paged_attention_f16(float*, int, const float*, int,
                                                const std::uint16_t*, const std::uint16_t*,
                                                const std::int32_t*, const PagedKv&,
                                                const std::int32_t*, const std::int32_t*, int, int,
                                                int, int) {
  throw BadInput("--kv-cache-dtype fp16 is not implemented by backend " + name());
}
inline void Backend::kv_cache_write_f16_at(std::uint16_t* cache, const float* src,
                                           int src_stride, int batch, int n_new,
                                           const std::int32_t* positions, int cache_seq,
                                           int kv_dim) {
  const int past = detail::host_past_len(*this, "kv_cache_write_f16_at", positions, batch, n_new);
  kv_cache_write_f16(cache, src, src_stride, batch, n_new, past, cache_seq, kv_dim);
}
inline void Backend::attention_f16_at(float* out, const float* q, const std::uint16_t* k_cache,
                                      const std::uint16_t* v_cache, const AttentionShape& shape,
                                      const AttentionStrides& strides,
                                      const std::int32_t* positions, int max_keys,
                                      DecodeAttention kernel) {
  AttentionShape s = shape;
  s.past_len =
      detail::host_past_len(*this, "attention_f16_at", positions, shape.batch, shape.n_new);
  if (s.past_len + s.n_new > max_keys)
    throw Error("attention_f16_at: " + std::to_string(s.past_len + s.n_new) +
                " keys, over max_keys " + std::to_string(max_keys));
  attention_f16(out, q, k_cache, v_cache, s, strides, kernel);
}

// The refusals of a backend without quantised kernels (every one but the CPU's).
inline void Backend::matmul_quant(float*, const float*, const void*, DType dtype, int, int, int,
                                  int) {
  throw BadInput("--dtype " + std::string(dtype_name(dtype)) + " is CPU-only for now (backend " +
                 name() + ")");
}
inline void Backend::quantize_weights(void*, const float*, DType dtype, std::int64_t, int) {
  throw BadInput("--dtype " + std::string(dtype_name(dtype)) + " is CPU-only for now (backend " +
                 name() + ")");
}
inline void Backend::embedding_quant(float*, const void*, DType dtype, const std::int32_t*, int,
                                     int, int) {
  throw BadInput("--dtype " + std::string(dtype_name(dtype)) + " is CPU-only for now (backend " +
                 name() + ")");
}

}  // namespace llmbench
