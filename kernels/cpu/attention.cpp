// Causal grouped-query attention over a contiguous (strided) KV cache: the plain CPU reference.
// The loop nest is attention_core.h, shared with the paged version; here keys and values of a
// sequence and kv head sit at a fixed stride.
// Deliberately not: flash/online-softmax tiling or intrinsics. The only speed work is that the
// inner loops run over head_dim contiguously, four keys at a time, so the compiler vectorises
// them well even at the baseline instruction set.
#include "kernels/cpu/attention.h"

#include "kernels/cpu/attention_core.h"

namespace llmbench::cpu {

void attention_strided(float* out, const float* q, const float* k_cache, const float* v_cache,
                       const AttentionShape& s, const AttentionStrides& st) {
  const HeadStrides kv = st.kv;
  detail::attention_core(out, st.out, q, st.q, k_cache, v_cache, s,
                         [kv](int b, int kv_head, int j) {
                           return b * kv.batch + kv_head * kv.head + j * kv.seq;
                         });
}

void attention(float* out, const float* q, const float* k_cache, const float* v_cache,
               const AttentionShape& s) {
  attention_strided(out, q, k_cache, v_cache, s, row_major_strides(s));
}

}  // namespace llmbench::cpu
