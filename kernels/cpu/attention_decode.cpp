// Dispatch of decode attention (see attention_decode.h): the AVX-512 kernels where the CPU has
// them and the head fits, else the AVX2 ones where those fit, else the reference loops.
#include "kernels/cpu/attention_decode.h"

#include "kernels/cpu/attention.h"
#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/paged_attention.h"

namespace llmbench::cpu {

namespace {
constexpr int kMaxHeadDim = 256;  // sixteen 16-float vectors per head
}

void attention_decode(float* out, const float* q, const float* k_cache, const float* v_cache,
                      const AttentionShape& s, const AttentionStrides& strides) {
  if (cpu_isa().avx512 && s.head_dim <= kMaxHeadDim)
    return avx512::attention_decode(out, q, k_cache, v_cache, s, strides);
  if (cpu_isa().avx2 && avx2::attention_decode_fits(s.head_dim))
    return avx2::attention_decode(out, strides.out, q, strides.q, k_cache, v_cache, s,
                                  avx2::KvRows{strides.kv});
  attention_strided(out, q, k_cache, v_cache, s, strides);
}

void paged_attention_decode(float* out, const float* q, const float* k_pool, const float* v_pool,
                            const std::int32_t* block_table, const PagedKv& paged,
                            const AttentionShape& s, const HeadStrides& q_strides,
                            const HeadStrides& out_strides) {
  if (cpu_isa().avx512 && s.head_dim <= kMaxHeadDim)
    return avx512::paged_attention_decode(out, q, k_pool, v_pool, block_table, paged, s,
                                          q_strides, out_strides);
  if (cpu_isa().avx2 && avx2::attention_decode_fits(s.head_dim))
    return avx2::attention_decode(out, out_strides, q, q_strides, k_pool, v_pool, s,
                                  avx2::KvRows{{}, block_table, paged});
  paged_attention(out, q, k_pool, v_pool, block_table, paged, s, q_strides, out_strides);
}

}  // namespace llmbench::cpu
