// Attention for a few new tokens per sequence (decode) over the KV cache, vectorised over
// positions and heads: the CPU backend's decode attention, strided and paged. The spec is the
// reference loop (attention.h, paged_attention.h); these are tested against it.
// On AVX-512 CPUs (cpu_isa.h) each (sequence, kv head, query) is one work item: every key
// vector is loaded once for all the query heads that share it (grouped-query attention), the
// scores of four keys are reduced together, exp is a vectorised polynomial (about 1 ulp), and
// each value vector is loaded once per block of query heads. On AVX2 CPUs without that path the
// same plan runs on 8-lane vectors for head_dim 8-128, a power of two (attention_avx2.cpp).
// Elsewhere they call the reference. Strided and paged give the same bits on the same data (one loop
// nest; only the address of key j differs).
// Deliberately not: online-softmax tiling (decode's scores fit in L1), or use for long prompts
// (attention_gemm.h is faster from kAttentionGemmMinRows new tokens).
#pragma once
#include <cstdint>

#include "kernels/common/layout.h"
#include "kernels/cpu/avx512_namespace.h"

namespace llmbench::cpu {

// As attention_strided (attention.h).
void attention_decode(float* out, const float* q, const float* k_cache, const float* v_cache,
                      const AttentionShape& s, const AttentionStrides& strides);

// As paged_attention (paged_attention.h).
void paged_attention_decode(float* out, const float* q, const float* k_pool, const float* v_pool,
                            const std::int32_t* block_table, const PagedKv& paged,
                            const AttentionShape& s, const HeadStrides& q_strides,
                            const HeadStrides& out_strides);

namespace LLMBENCH_AVX512_NS {
// The AVX-512 kernels behind the two (attention_avx512.cpp); head_dim <= 256.
void attention_decode(float* out, const float* q, const float* k_cache, const float* v_cache,
                      const AttentionShape& s, const AttentionStrides& strides);
void paged_attention_decode(float* out, const float* q, const float* k_pool, const float* v_pool,
                            const std::int32_t* block_table, const PagedKv& paged,
                            const AttentionShape& s, const HeadStrides& q_strides,
                            const HeadStrides& out_strides);
}  // namespace LLMBENCH_AVX512_NS

namespace avx2 {
// Where key/value j of sequence b and one kv head lives: a strided cache (block_table null:
// b * strided.batch + kv_head * strided.head + j * strided.seq) or a paged pool (paged_row of
// position j, then kv_head * head_dim).
struct KvRows {
  HeadStrides strided;
  const std::int32_t* block_table = nullptr;
  PagedKv paged{};
};
// The AVX2 kernel behind both (attention_avx2.cpp), for head_dim where
// attention_decode_fits(head_dim): 8, 16, 32, 64 or 128.
bool attention_decode_fits(int head_dim);
void attention_decode(float* out, const HeadStrides& out_s, const float* q, const HeadStrides& q_s,
                      const float* k, const float* v, const AttentionShape& s, const KvRows& kv);
// The same over binary16 keys and values (the fp16 KV cache, kv_f16.h), widened by F16C as they
// are loaded: equal bit for bit to the fp32 form over the widened values.
void attention_decode(float* out, const HeadStrides& out_s, const float* q, const HeadStrides& q_s,
                      const std::uint16_t* k, const std::uint16_t* v, const AttentionShape& s,
                      const KvRows& kv);
}  // namespace avx2

}  // namespace llmbench::cpu
