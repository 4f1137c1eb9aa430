// CpuBackend: the Backend on host memory, with the OpenMP kernels of kernels/cpu and OpenBLAS
// GEMMs. Synchronous: every op has finished when its call returns.
#pragma once
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
  // Both modes: ops are synchronous, so the host clock is exact and host-nosync reads the same.
  std::unique_ptr<OpTimer> make_op_timer(TimerMode) override {
    return std::make_unique<HostOpTimer>();
  }

  void embedding(float* out, const float* table, const std::int32_t* tokens, int n_tokens,
                 int dim) override;
  void rmsnorm(float* out, const float* x, const float* weight, int n_rows, int dim,
               float eps) override;
  void matmul(float* out, const float* x, const float* w, int m, int n, int k,
              int lda) override;
  void matmul_half(float* out, const float* x, const std::uint16_t* w, DType dtype, int m, int n,
                   int k, int lda) override;
  void embedding_half(float* out, const std::uint16_t* table, DType dtype,
                      const std::int32_t* tokens, int n_tokens, int dim) override;
  void matmul_quant(float* out, const float* x, const void* w, DType dtype, int m, int n, int k,
                    int lda) override;
  void embedding_quant(float* out, const void* table, DType dtype, const std::int32_t* tokens,
                       int n_tokens, int vocab, int dim) override;
  void quantize_weights(void* dst, const float* src, DType dtype, std::int64_t n_rows,
                        int k) override;
  void add_bias_rows(float* x, int n_rows, int stride, const float* bias, int n) override;
  void rope(float* x, int n_rows, int row_stride, int n_heads, int head_dim,
            const std::int32_t* positions, float theta) override;
  void kv_cache_write(float* cache, const float* src, int src_stride, int batch, int n_new,
                      int past_len, int cache_seq, int kv_dim) override;
  void attention(float* out, const float* q, const float* k_cache, const float* v_cache,
                 const AttentionShape& shape, const AttentionStrides& strides) override;
  void paged_attention(float* out, const float* q, const float* k_pool, const float* v_pool,
                       const std::int32_t* block_table, const PagedKv& paged,
                       const AttentionShape& shape, const HeadStrides& q_strides,
                       const HeadStrides& out_strides) override;
  void copy_heads(float* out, const HeadStrides& out_strides, const float* in,
                  const HeadStrides& in_strides, int batch, int seq, int heads,
                  int head_dim) override;
  void kv_write_paged(float* pool, const std::int32_t* block_table, const PagedKv& paged,
                      const float* src, const HeadStrides& src_strides, int batch, int n_new,
                      int past_len, int n_kv_heads, int head_dim) override;
  void kv_gather_paged(float* out, const float* pool, const std::int32_t* block_table,
                       const PagedKv& paged, int batch, int len, int kv_dim,
                       int out_seq) override;
  void kv_write_ragged(float* pool, const std::int32_t* block_table, const PagedKv& paged,
                               const float* src, int src_stride, const std::int32_t* seq,
                               const std::int32_t* pos, int n_rows, int kv_dim) override;
  void ragged_paged_attention(float* out, int out_stride, const float* q, int q_stride,
                                      const float* k_pool, const float* v_pool,
                                      const std::int32_t* block_table, const PagedKv& paged,
                                      const std::int32_t* seq, const std::int32_t* pos,
                                      int n_rows, int n_heads, int n_kv_heads, int head_dim) override;
  void swiglu(float* out, const float* gate_up, int n_rows, int ffn_dim) override;
  void add_inplace(float* x, const float* y, std::size_t n) override;
  void gather_rows(float* out, const float* x, const std::int32_t* rows, int n_rows,
                   int dim) override;
  void argmax_rows(std::int32_t* out, const float* x, int n_rows, int n_cols) override;

 private:
  int threads_;
};

// The host's CPU model name (from /proc/cpuinfo), or "unknown".
std::string cpu_model_name();

}  // namespace llmbench
