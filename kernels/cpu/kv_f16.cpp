// The fp16 KV cache on the CPU (see kv_f16.h).
// Writes round eight values at a time with F16C's vcvtps2ph (round to nearest even, overflow to
// inf, NaN quieted with its top payload bits: half.h's fp32_to_fp16 bit for bit, which the tail
// and the portable path use). The scalar rounding alone made a prefill's write of 8 x 1024 rows
// of `small` 2.8 ms a layer against the fp32 copy's 0.8 ms; with F16C 0.75 ms against 0.62
// (traced, AVX2 AMD EPYC, 2026-12-07).
// Widening for the prefill GEMMs goes through matmul_half.h's widen_half (F16C where the CPU
// has it, exact either way).
#include "kernels/cpu/kv_f16.h"

#include <cstddef>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "kernels/common/dtype.h"
#include "kernels/common/half.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/attention_decode.h"
#include "kernels/cpu/attention_gemm.h"
#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/matmul_half.h"
#include "kernels/cpu/ragged_attention.h"
#include "kernels/cpu/rope.h"

namespace llmbench::cpu {

namespace {

#if defined(__x86_64__)
__attribute__((target("avx,f16c"))) void round_row_f16c(std::uint16_t* dst, const float* src,
                                                       int n) {
  int i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(src + i),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  for (; i < n; ++i) dst[i] = fp32_to_fp16(src[i]);
}
#endif

void round_row(std::uint16_t* dst, const float* src, int n) {
#if defined(__x86_64__)
  if (cpu_isa().avx2) return round_row_f16c(dst, src, n);  // AVX2 implies F16C (cpu_isa.h)
#endif
  for (int i = 0; i < n; ++i) dst[i] = fp32_to_fp16(src[i]);
}

// The visible positions of both caches widened into k_out and v_out, token-major [batch, len,
// kv_dim]; the strides attention then reads them with.
AttentionStrides widen_visible(float* k_out, float* v_out, const std::uint16_t* k_cache,
                               const std::uint16_t* v_cache, const AttentionShape& s,
                               const AttentionStrides& strides) {
  const int len = s.past_len + s.n_new, kv_dim = s.n_kv_heads * s.head_dim;
  const HeadStrides compact = token_major(len, kv_dim, s.head_dim);
  widen_kv_f16(k_out, compact, k_cache, strides.kv, s.batch, len, s.n_kv_heads, s.head_dim);
  widen_kv_f16(v_out, compact, v_cache, strides.kv, s.batch, len, s.n_kv_heads, s.head_dim);
  return {strides.q, compact, strides.out};
}

}  // namespace

void kv_cache_write_f16(std::uint16_t* cache, const float* src, int src_stride, int batch,
                        int n_new, int past_len, int cache_seq, int kv_dim) {
#pragma omp parallel for collapse(2) if (static_cast<long>(batch) * n_new * kv_dim > (1 << 16))
  for (int b = 0; b < batch; ++b) {
    for (int t = 0; t < n_new; ++t) {
      const std::size_t src_row = static_cast<std::size_t>(b) * n_new + t;
      const std::size_t dst_row = static_cast<std::size_t>(b) * cache_seq + past_len + t;
      round_row(cache + dst_row * kv_dim, src + src_row * src_stride, kv_dim);
    }
  }
}

void widen_kv_f16(float* out, const HeadStrides& out_s, const std::uint16_t* in,
                  const HeadStrides& in_s, int batch, int len, int n_kv_heads, int head_dim) {
  const long n = static_cast<long>(batch) * len * n_kv_heads * head_dim;
#pragma omp parallel for collapse(2) if (n > (1 << 18))
  for (int b = 0; b < batch; ++b)
    for (int j = 0; j < len; ++j)
      for (int g = 0; g < n_kv_heads; ++g)
        widen_half(out + b * out_s.batch + j * out_s.seq + g * out_s.head,
                   in + b * in_s.batch + j * in_s.seq + g * in_s.head, head_dim, DType::kFp16);
}

void attention_f16_strided(float* out, const float* q, const std::uint16_t* k_cache,
                           const std::uint16_t* v_cache, const AttentionShape& s,
                           const AttentionStrides& strides) {
  const std::size_t n = std::size_t(s.batch) * (s.past_len + s.n_new) * s.n_kv_heads * s.head_dim;
  std::vector<float> k(n), v(n);
  const AttentionStrides wide = widen_visible(k.data(), v.data(), k_cache, v_cache, s, strides);
  attention_strided(out, q, k.data(), v.data(), s, wide);
}

void attention_f16_decode(float* out, const float* q, const std::uint16_t* k_cache,
                          const std::uint16_t* v_cache, const AttentionShape& s,
                          const AttentionStrides& strides) {
  // AVX-512 CPUs have AVX2 and F16C too, so they run this kernel for fp16 caches.
  if (cpu_isa().avx2 && avx2::attention_decode_fits(s.head_dim))
    return avx2::attention_decode(out, strides.out, q, strides.q, k_cache, v_cache, s,
                                  avx2::KvRows{strides.kv});
  attention_f16_strided(out, q, k_cache, v_cache, s, strides);
}

void attention_f16_gemm(float* out, const float* q, const std::uint16_t* k_cache,
                        const std::uint16_t* v_cache, const AttentionShape& s,
                        const AttentionStrides& strides, float* scratch) {
  const long half = attention_f16_scratch_floats(s) / 2;
  const AttentionStrides wide =
      widen_visible(scratch, scratch + half, k_cache, v_cache, s, strides);
  attention_gemm(out, q, scratch, scratch + half, s, wide);
}

void rope_kv_write_f16(float* qkv, std::uint16_t* k_cache, std::uint16_t* v_cache,
                       const std::int32_t* positions, const RopeKvShape& s) {
  const int stride = s.qkv_dim(), q_dim = s.q_dim(), kv = s.kv_dim();
  rope(qkv, s.rows(), stride, s.n_heads, s.head_dim, positions, s.theta);
  rope(qkv + q_dim, s.rows(), stride, s.n_kv_heads, s.head_dim, positions, s.theta);
  for (int r = 0; r < s.rows(); ++r) {
    const float* row = qkv + static_cast<std::size_t>(r) * stride;
    const std::size_t at =
        (static_cast<std::size_t>(r / s.n_new) * s.cache_seq + positions[r]) * kv;
    round_row(k_cache + at, row + q_dim, kv);
    round_row(v_cache + at, row + q_dim + kv, kv);
  }
}

void kv_write_ragged_f16(std::uint16_t* pool, const std::int32_t* block_table,
                         const PagedKv& paged, const float* src, int src_stride,
                         const std::int32_t* seq, const std::int32_t* pos, int n_rows,
                         int kv_dim) {
#pragma omp parallel for if (static_cast<long>(n_rows) * kv_dim > (1 << 16))
  for (int r = 0; r < n_rows; ++r)
    round_row(pool + paged_row(block_table, paged, seq[r], pos[r], kv_dim),
              src + std::int64_t(r) * src_stride, kv_dim);
}

void kv_gather_paged_f16(float* out, const std::uint16_t* pool, const std::int32_t* block_table,
                         const PagedKv& paged, int len, int kv_dim) {
  for (int j = 0; j < len; ++j)
    widen_half(out + std::int64_t(j) * kv_dim, pool + paged_row(block_table, paged, 0, j, kv_dim),
               kv_dim, DType::kFp16);
}

void paged_attention_f16_decode(float* out, const float* q, const std::uint16_t* k_pool,
                                const std::uint16_t* v_pool, const std::int32_t* block_table,
                                const PagedKv& paged, const AttentionShape& s,
                                const HeadStrides& q_s, const HeadStrides& out_s) {
  if (cpu_isa().avx2 && avx2::attention_decode_fits(s.head_dim))
    return avx2::attention_decode(out, out_s, q, q_s, k_pool, v_pool, s,
                                  avx2::KvRows{{}, block_table, paged});
  // Elsewhere: each sequence's visible positions widened, then the strided reference.
  const int len = s.past_len + s.n_new, kv_dim = s.n_kv_heads * s.head_dim;
  std::vector<float> k(std::size_t(len) * kv_dim), v(k.size());
  AttentionShape one = s;
  one.batch = 1;
  for (int b = 0; b < s.batch; ++b) {
    const std::int32_t* table = block_table + std::int64_t(b) * paged.max_blocks;
    kv_gather_paged_f16(k.data(), k_pool, table, paged, len, kv_dim);
    kv_gather_paged_f16(v.data(), v_pool, table, paged, len, kv_dim);
    const AttentionStrides st{q_s, token_major(len, kv_dim, s.head_dim), out_s};
    attention_strided(out + b * out_s.batch, q + b * q_s.batch, k.data(), v.data(), one, st);
  }
}

void ragged_paged_attention_f16_reference(float* out, int out_stride, const float* q,
                                          int q_stride, const std::uint16_t* k_pool,
                                          const std::uint16_t* v_pool,
                                          const std::int32_t* block_table, const PagedKv& paged,
                                          const std::int32_t* seq, const std::int32_t* pos,
                                          int n_rows, int n_heads, int n_kv_heads, int head_dim,
                                          long pool_rows) {
  const std::size_t n = std::size_t(pool_rows) * n_kv_heads * head_dim;
  std::vector<float> k(n), v(n);
  widen_half(k.data(), k_pool, std::int64_t(n), DType::kFp16);
  widen_half(v.data(), v_pool, std::int64_t(n), DType::kFp16);
  ragged_paged_attention(out, out_stride, q, q_stride, k.data(), v.data(), block_table, paged,
                         seq, pos, n_rows, n_heads, n_kv_heads, head_dim);
}

}  // namespace llmbench::cpu
