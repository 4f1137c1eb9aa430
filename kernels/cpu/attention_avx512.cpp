// AVX-512 decode attention (see attention_decode.h). Compiled with AVX-512 flags
// (kernels/CMakeLists.txt); called only where cpu_isa() found them.
// One work item is (sequence, kv head, query token): its `group` query heads share every key
// and value vector, so each is loaded once per item (values once per block of heads).
//   scores: four keys at a time, for every head: q . k_j as vector FMAs over head_dim, the four
//           sums reduced together (one fixed tree), scaled by 1/sqrt(head_dim);
//   softmax: max, exp(s - max) by exp_avx512.h (the AVX2 kernel's polynomial), sum;
//   values: acc_h += p_hj v_j over j in order, then acc_h / sum.
// Every output is the same operations in the same order whatever the batch, the thread count
// or where key j lives (strided and paged share this loop nest).
#include "kernels/cpu/avx512_intrinsics.h"
#include <omp.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/cpu/attention_decode.h"
#include "kernels/cpu/attention_decode_item.h"
#include "kernels/cpu/exp_avx512.h"

namespace llmbench::cpu::LLMBENCH_AVX512_NS {

namespace {

// exp(x) for the softmax numerators (x = score - max <= 0), clamped at exp_poly::kSoftmaxFloor
// (e^-87 ~ 1.6e-38, negligible in the sum): exp_avx512.h, the AVX2 kernel's arithmetic.
inline __m512 exp512(__m512 x) {
  return exp_clamped(_mm512_max_ps(x, _mm512_set1_ps(exp_poly::kSoftmaxFloor)));
}

// Lane c = the sum of the 16 lanes of a_c (the same tree as the matmul kernels').
inline __m128 reduce4(__m512 a0, __m512 a1, __m512 a2, __m512 a3) {
  auto half_sum = [](__m512 a) {
    return _mm256_add_ps(_mm512_castps512_ps256(a),
                         _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a), 1)));
  };
  const __m256 t0 = _mm256_hadd_ps(half_sum(a0), half_sum(a1));
  const __m256 t1 = _mm256_hadd_ps(half_sum(a2), half_sum(a3));
  const __m256 u = _mm256_hadd_ps(t0, t1);
  return _mm_add_ps(_mm256_castps256_ps128(u), _mm256_extractf128_ps(u, 1));
}

// Work (multiply-adds) from which threads are started. It was 1 << 20 while llmbench slept its
// idle OpenMP workers (a wake-up cost 25-50 us); with libgomp's default policy a region costs
// about a microsecond, and bench_kernels BM_attention_decode batch 1 at 143 positions (295 k
// multiply-adds) went from 8.35 to 5.23 us on two threads, the larger shapes unchanged.
constexpr long kParallelWork = 1L << 16;

// NV: vectors of 16 floats per head (head_dim <= 16 NV; lanes past head_dim masked to 0).
// Full: head_dim == 16 NV, so no load needs a mask (a masked load reads its mask register from
// the stack every time, which measured as the second-hottest instruction).
template <int NV, bool Full>
inline __m512 load_head(const float* p, const __mmask16* mask, int u) {
  return Full ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(mask[u], p);
}

// The steps of one work item, always inlined into decode_core so the loop nest compiles as one.
#define LLMBENCH_STEP inline __attribute__((always_inline))

// scores[g * ld + j] = (q_g . k_j) * scale for the item's `group` heads, four keys at a time
// (the last, partial block's missing keys are zeros). at[j]: where key j starts in k.
template <int NV, bool Full>
LLMBENCH_STEP void item_scores(float* scores, int ld, const float* q, std::ptrdiff_t q_head,
                               int group, const float* k, const std::int64_t* at, int n_keys,
                               const __mmask16* mask, float scale) {
  for (int j0 = 0; j0 < n_keys; j0 += 4) {
    __m512 kv4[4][NV];
    if (j0 + 4 <= n_keys) {
#pragma GCC unroll 4
      for (int jj = 0; jj < 4; ++jj)
#pragma GCC unroll 16
        for (int u = 0; u < NV; ++u)
          kv4[jj][u] = load_head<NV, Full>(k + at[j0 + jj] + 16 * u, mask, u);
    } else {  // the last, partial block: missing keys are zeros
      for (int jj = 0; jj < 4; ++jj)
        for (int u = 0; u < NV; ++u)
          kv4[jj][u] = j0 + jj < n_keys ? load_head<NV, Full>(k + at[j0 + jj] + 16 * u, mask, u)
                                        : _mm512_setzero_ps();
    }
    for (int g = 0; g < group; ++g) {
      const float* qg = q + g * q_head;
      __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(),
                       _mm512_setzero_ps()};
#pragma GCC unroll 16
      for (int u = 0; u < NV; ++u) {
        const __m512 qv = load_head<NV, Full>(qg + 16 * u, mask, u);
#pragma GCC unroll 4
        for (int jj = 0; jj < 4; ++jj) acc[jj] = _mm512_fmadd_ps(qv, kv4[jj][u], acc[jj]);
      }
      const __m128 sc = _mm_mul_ps(reduce4(acc[0], acc[1], acc[2], acc[3]), _mm_set1_ps(scale));
      _mm_storeu_ps(&scores[static_cast<std::size_t>(g) * ld + j0], sc);
    }
  }
}

// Softmax numerators in place of each head's scores, and their sums.
LLMBENCH_STEP void item_softmax(float* scores, int ld, int group, int n_keys, float* sums) {
  for (int g = 0; g < group; ++g) {
    float* sg = &scores[static_cast<std::size_t>(g) * ld];
    __m512 mx = _mm512_set1_ps(-INFINITY);
    for (int j = 0; j < n_keys; j += 16) {
      const __mmask16 mk = n_keys - j >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n_keys - j)) - 1u);
      mx = _mm512_mask_max_ps(mx, mk, mx, _mm512_loadu_ps(sg + j));
    }
    const __m512 mxv = _mm512_set1_ps(_mm512_reduce_max_ps(mx));
    __m512 sum = _mm512_setzero_ps();
    for (int j = 0; j < n_keys; j += 16) {
      const __mmask16 mk = n_keys - j >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n_keys - j)) - 1u);
      const __m512 e = exp512(_mm512_sub_ps(_mm512_loadu_ps(sg + j), mxv));
      _mm512_storeu_ps(sg + j, e);
      sum = _mm512_add_ps(sum, _mm512_maskz_mov_ps(mk, e));
    }
    sums[g] = _mm512_reduce_add_ps(sum);
  }
}

// out_g = (sum_j p_gj v_j) / sum_g, kHeadBlock heads per pass over the values; out points at
// the item's first head, out_head apart.
template <int NV, bool Full>
LLMBENCH_STEP void item_values(float* out, std::ptrdiff_t out_head, const float* scores, int ld,
                               const float* sums, int group, const float* v,
                               const std::int64_t* at, int n_keys, const __mmask16* mask) {
  constexpr int kHeadBlock = NV >= 16 ? 1 : 16 / NV;  // heads per pass over the values
  for (int g0 = 0; g0 < group; g0 += kHeadBlock) {
    __m512 acc[kHeadBlock][NV];
    for (int h = 0; h < kHeadBlock; ++h)
#pragma GCC unroll 16
      for (int u = 0; u < NV; ++u) acc[h][u] = _mm512_setzero_ps();
    const int hb = group - g0 < kHeadBlock ? group - g0 : kHeadBlock;
    for (int j = 0; j < n_keys; ++j) {
      __m512 vv[NV];
#pragma GCC unroll 16
      for (int u = 0; u < NV; ++u) vv[u] = load_head<NV, Full>(v + at[j] + 16 * u, mask, u);
#pragma GCC unroll 16
      for (int h = 0; h < kHeadBlock; ++h) {
        if (h >= hb) break;
        const __m512 p = _mm512_set1_ps(scores[static_cast<std::size_t>(g0 + h) * ld + j]);
#pragma GCC unroll 16
        for (int u = 0; u < NV; ++u) acc[h][u] = _mm512_fmadd_ps(p, vv[u], acc[h][u]);
      }
    }
    for (int h = 0; h < hb; ++h) {
      const int g = g0 + h;
      float* o = out + g * out_head;
      const __m512 den = _mm512_set1_ps(sums[g]);
#pragma GCC unroll 16
      for (int u = 0; u < NV; ++u)
        _mm512_mask_storeu_ps(o + 16 * u, mask[u], _mm512_div_ps(acc[h][u], den));
    }
  }
}

template <int NV, bool Full, class KvAt>
void decode_core(float* out, const HeadStrides& out_s, const float* q, const HeadStrides& q_s,
                 const float* k, const float* v, const AttentionShape& s, const KvAt& kv_at) {
  const int d = s.head_dim;
  const int group = s.n_heads / s.n_kv_heads;
  const int max_keys = s.past_len + s.n_new;
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  __mmask16 mask[NV];
  for (int u = 0; u < NV; ++u) {
    const int lanes = d - 16 * u;
    mask[u] = lanes >= 16 ? __mmask16(0xFFFF) : lanes <= 0 ? __mmask16(0) : __mmask16((1u << lanes) - 1u);
  }
  const int items = s.batch * s.n_kv_heads * s.n_new;
  const long work = static_cast<long>(s.batch) * s.n_heads * s.n_new * max_keys * d;

#pragma omp parallel if (work > kParallelWork)
  {
    std::vector<float> scores(static_cast<std::size_t>(group) * (max_keys + 16));
    std::vector<std::int64_t> at(max_keys + 3);
    std::vector<float> sums(group);
    const int ld = max_keys + 16;  // scores row stride: room for a full last vector

#pragma omp for schedule(static)
    for (int item = 0; item < items; ++item) {
      const detail::DecodeItem it = detail::decode_item(s, q_s, out_s, item);
      for (int j = 0; j < it.n_keys; ++j) at[j] = kv_at(it.b, it.kv_head, j);
      item_scores<NV, Full>(scores.data(), ld, q + it.q, q_s.head, group, k, at.data(), it.n_keys,
                            mask, scale);
      item_softmax(scores.data(), ld, group, it.n_keys, sums.data());
      item_values<NV, Full>(out + it.out, out_s.head, scores.data(), ld, sums.data(), group, v,
                            at.data(), it.n_keys, mask);
    }
  }
}

#undef LLMBENCH_STEP

template <class KvAt>
void decode_dispatch(float* out, const HeadStrides& out_s, const float* q, const HeadStrides& q_s,
                     const float* k, const float* v, const AttentionShape& s, const KvAt& kv_at) {
  const int nv = (s.head_dim + 15) / 16;
  const bool full = s.head_dim % 16 == 0 && (nv == 1 || nv == 2 || nv == 4 || nv == 8 || nv == 16);
  if (full) {
    if (nv == 1) return decode_core<1, true>(out, out_s, q, q_s, k, v, s, kv_at);
    if (nv == 2) return decode_core<2, true>(out, out_s, q, q_s, k, v, s, kv_at);
    if (nv == 4) return decode_core<4, true>(out, out_s, q, q_s, k, v, s, kv_at);
    if (nv == 8) return decode_core<8, true>(out, out_s, q, q_s, k, v, s, kv_at);
    return decode_core<16, true>(out, out_s, q, q_s, k, v, s, kv_at);
  }
  if (nv <= 1) return decode_core<1, false>(out, out_s, q, q_s, k, v, s, kv_at);
  if (nv <= 2) return decode_core<2, false>(out, out_s, q, q_s, k, v, s, kv_at);
  if (nv <= 4) return decode_core<4, false>(out, out_s, q, q_s, k, v, s, kv_at);
  if (nv <= 8) return decode_core<8, false>(out, out_s, q, q_s, k, v, s, kv_at);
  return decode_core<16, false>(out, out_s, q, q_s, k, v, s, kv_at);
}

}  // namespace

void attention_decode(float* out, const float* q, const float* k_cache, const float* v_cache,
                      const AttentionShape& s, const AttentionStrides& st) {
  const HeadStrides kv = st.kv;
  decode_dispatch(out, st.out, q, st.q, k_cache, v_cache, s, [kv](int b, int kv_head, int j) {
    return b * kv.batch + kv_head * kv.head + j * kv.seq;
  });
}

void paged_attention_decode(float* out, const float* q, const float* k_pool, const float* v_pool,
                            const std::int32_t* block_table, const PagedKv& paged,
                            const AttentionShape& s, const HeadStrides& q_strides,
                            const HeadStrides& out_strides) {
  const int d = s.head_dim, kv_dim = s.n_kv_heads * s.head_dim;
  decode_dispatch(out, out_strides, q, q_strides, k_pool, v_pool, s,
                  [=](int b, int kv_head, int j) {
                    return paged_row(block_table, paged, b, j, kv_dim) + std::int64_t(kv_head) * d;
                  });
}

}  // namespace llmbench::cpu::LLMBENCH_AVX512_NS
