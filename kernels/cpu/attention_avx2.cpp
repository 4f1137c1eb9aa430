// AVX2 decode attention (see attention_decode.h): the AVX-512 kernel's plan on 8-lane vectors,
// for a CPU (or VM) with AVX2 and FMA but without the AVX-512 path, head_dim a multiple of 8 up
// to kMaxHeadDim and a power of two (no masked loads: AVX2 has none that are cheap). Compiled with -mavx2 -mfma
// (kernels/CMakeLists.txt); called only where cpu_isa() found them.
// One work item is (sequence, kv head, query token), its `group` query heads sharing the keys
// and values:
//   scores: per head, four keys at a time as vector FMAs over head_dim, the four sums reduced
//           together (one fixed tree), scaled by 1/sqrt(head_dim); the keys come from L1
//           after the first head;
//   softmax: max, exp(s - max) by the AVX2 SwiGLU's e^x (exp_avx2.h), sum;
//   values: acc_h += p_hj v_j over j in order, then acc_h / sum.
// Why: at short context the portable loop (std::exp per score, one query head at a time) was
// the largest op outside the GEMMs on tinyllama fp32 decode (21 us a layer; docs/metrics.md,
// issue 31). Every output is the same operations in the same order whatever the batch, the
// thread count or where key j lives (strided and paged share this loop nest).
// Deliberately not: online-softmax tiling (decode's scores fit in L1), or head sizes that
// need masked tails (they take the reference loop).
#include <immintrin.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/cpu/attention_decode.h"
#include "kernels/cpu/attention_decode_item.h"
#include "kernels/cpu/exp_avx2.h"

namespace llmbench::cpu::avx2 {

namespace {

constexpr long kParallelWork = 1L << 16;  // multiply-adds from which threads start (as AVX-512)
constexpr int kMaxHeadDim = 128;          // sixteen 8-float vectors per head

// exp(x) for softmax numerators (x = score - max <= 0), clamped at exp_poly::kSoftmaxFloor as
// the AVX-512 kernel (e^-87 ~ 1.6e-38, negligible in the sum).
inline __m256 exp256(__m256 x) {
  return exp_clamped(_mm256_max_ps(x, _mm256_set1_ps(exp_poly::kSoftmaxFloor)));
}

// Eight keys' or values' elements as fp32: loaded, or widened from binary16 by F16C (exact; the
// fp16 KV cache, kv_f16.h). Everything after the load is the same operations for both.
inline __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
inline __m256 load8(const std::uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// Lane c = the sum of the 8 lanes of a_c.
inline __m128 reduce4(__m256 a0, __m256 a1, __m256 a2, __m256 a3) {
  const __m256 u = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));
  return _mm_add_ps(_mm256_castps256_ps128(u), _mm256_extractf128_ps(u, 1));
}

// scores[g * ld + j] = (q_g . k_j) * scale for the item's `group` heads, four keys at a time
// (the last block's missing keys read key 0 again; their scores are overwritten by the caller).
template <int NV, class T>
void item_scores(float* scores, int ld, const float* q, std::ptrdiff_t q_head, int group,
                 const T* k, const std::int64_t* at, int n_keys, float scale) {
  for (int g = 0; g < group; ++g) {
    const float* qg = q + g * q_head;
    for (int j0 = 0; j0 < n_keys; j0 += 4) {
      const T* kp[4];
      for (int jj = 0; jj < 4; ++jj) kp[jj] = k + at[j0 + jj < n_keys ? j0 + jj : 0];
      __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                       _mm256_setzero_ps()};
#pragma GCC unroll 16
      for (int u = 0; u < NV; ++u) {
        const __m256 qv = _mm256_loadu_ps(qg + 8 * u);
#pragma GCC unroll 4
        for (int jj = 0; jj < 4; ++jj)
          acc[jj] = _mm256_fmadd_ps(qv, load8(kp[jj] + 8 * u), acc[jj]);
      }
      const __m128 sc = _mm_mul_ps(reduce4(acc[0], acc[1], acc[2], acc[3]), _mm_set1_ps(scale));
      _mm_storeu_ps(&scores[static_cast<std::size_t>(g) * ld + j0], sc);
    }
  }
}

// Softmax numerators in place of each head's scores, and their sums; lanes past n_keys are
// held at -inf for the maximum and left out of the sum.
void item_softmax(float* scores, int ld, int group, int n_keys, float* sums) {
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (int g = 0; g < group; ++g) {
    float* sg = &scores[static_cast<std::size_t>(g) * ld];
    for (int j = n_keys; j < (n_keys + 7) / 8 * 8; ++j) sg[j] = -INFINITY;
    __m256 mx = _mm256_set1_ps(-INFINITY);
    for (int j = 0; j < n_keys; j += 8) mx = _mm256_max_ps(mx, _mm256_loadu_ps(sg + j));
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(mx), _mm256_extractf128_ps(mx, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    m4 = _mm_max_ss(m4, _mm_shuffle_ps(m4, m4, 1));
    const __m256 mxv = _mm256_set1_ps(_mm_cvtss_f32(m4));
    __m256 sum = _mm256_setzero_ps();
    for (int j = 0; j < n_keys; j += 8) {
      const __m256 e = exp256(_mm256_sub_ps(_mm256_loadu_ps(sg + j), mxv));
      _mm256_storeu_ps(sg + j, e);
      const __m256 live = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(n_keys - j), iota));
      sum = _mm256_add_ps(sum, _mm256_and_ps(e, live));
    }
    __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(sum), _mm256_extractf128_ps(sum, 1));
    s4 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    s4 = _mm_add_ss(s4, _mm_shuffle_ps(s4, s4, 1));
    sums[g] = _mm_cvtss_f32(s4);
  }
}

// out_g = (sum_j p_gj v_j) / sum_g, kHeadBlock heads per pass over the values.
template <int NV, class T>
void item_values(float* out, std::ptrdiff_t out_head, const float* scores, int ld,
                 const float* sums, int group, const T* v, const std::int64_t* at,
                 int n_keys) {
  constexpr int kHeadBlock = NV >= 8 ? 1 : 8 / NV;  // at most 8 accumulators
  for (int g0 = 0; g0 < group; g0 += kHeadBlock) {
    const int hb = group - g0 < kHeadBlock ? group - g0 : kHeadBlock;
    __m256 acc[kHeadBlock][NV];
    for (int h = 0; h < kHeadBlock; ++h)
#pragma GCC unroll 16
      for (int u = 0; u < NV; ++u) acc[h][u] = _mm256_setzero_ps();
    for (int j = 0; j < n_keys; ++j) {
      const T* vj = v + at[j];
#pragma GCC unroll 8
      for (int h = 0; h < kHeadBlock; ++h) {
        if (h >= hb) break;
        const __m256 p = _mm256_set1_ps(scores[static_cast<std::size_t>(g0 + h) * ld + j]);
#pragma GCC unroll 16
        for (int u = 0; u < NV; ++u)
          acc[h][u] = _mm256_fmadd_ps(p, load8(vj + 8 * u), acc[h][u]);
      }
    }
    for (int h = 0; h < hb; ++h) {
      float* o = out + (g0 + h) * out_head;
      const __m256 den = _mm256_set1_ps(sums[g0 + h]);
#pragma GCC unroll 16
      for (int u = 0; u < NV; ++u) _mm256_storeu_ps(o + 8 * u, _mm256_div_ps(acc[h][u], den));
    }
  }
}

template <int NV, class T, class KvAt>
void decode_core(float* out, const HeadStrides& out_s, const float* q, const HeadStrides& q_s,
                 const T* k, const T* v, const AttentionShape& s, const KvAt& kv_at) {
  const int group = s.n_heads / s.n_kv_heads;
  const int max_keys = s.past_len + s.n_new;
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.head_dim)));
  const int items = s.batch * s.n_kv_heads * s.n_new;
  const long work = static_cast<long>(s.batch) * s.n_heads * s.n_new * max_keys * s.head_dim;

#pragma omp parallel if (work > kParallelWork)
  {
    const int ld = (max_keys + 7) / 8 * 8;  // scores row stride: whole vectors
    std::vector<float> scores(static_cast<std::size_t>(group) * ld);
    std::vector<std::int64_t> at(max_keys);
    std::vector<float> sums(group);

#pragma omp for schedule(static)
    for (int item = 0; item < items; ++item) {
      const detail::DecodeItem it = detail::decode_item(s, q_s, out_s, item);
      for (int j = 0; j < it.n_keys; ++j) at[j] = kv_at(it.b, it.kv_head, j);
      item_scores<NV>(scores.data(), ld, q + it.q, q_s.head, group, k, at.data(), it.n_keys,
                      scale);
      item_softmax(scores.data(), ld, group, it.n_keys, sums.data());
      item_values<NV>(out + it.out, out_s.head, scores.data(), ld, sums.data(), group, v,
                      at.data(), it.n_keys);
    }
  }
}

}  // namespace

bool attention_decode_fits(int head_dim) {
  return head_dim % 8 == 0 && head_dim > 0 && head_dim <= kMaxHeadDim &&
         (head_dim & (head_dim - 1)) == 0;
}

namespace {

template <class T>
void decode_any(float* out, const HeadStrides& out_s, const float* q, const HeadStrides& q_s,
                const T* k, const T* v, const AttentionShape& s, const KvRows& kv) {
  const int kv_dim = s.n_kv_heads * s.head_dim;
  // Offsets are computed once per work item (at[] in decode_core), so one branch serves both.
  const auto kv_at = [&kv, &s, kv_dim](int b, int kv_head, int j) -> std::int64_t {
    if (kv.block_table == nullptr)
      return b * kv.strided.batch + kv_head * kv.strided.head + j * kv.strided.seq;
    return paged_row(kv.block_table, kv.paged, b, j, kv_dim) + std::int64_t(kv_head) * s.head_dim;
  };
  // head_dim is 8, 16, 32, 64 or 128 (attention_decode_fits).
  switch (s.head_dim / 8) {
    case 1: return decode_core<1>(out, out_s, q, q_s, k, v, s, kv_at);
    case 2: return decode_core<2>(out, out_s, q, q_s, k, v, s, kv_at);
    case 4: return decode_core<4>(out, out_s, q, q_s, k, v, s, kv_at);
    case 8: return decode_core<8>(out, out_s, q, q_s, k, v, s, kv_at);
    default: return decode_core<16>(out, out_s, q, q_s, k, v, s, kv_at);
  }
}

}  // namespace

void attention_decode(float* out, const HeadStrides& out_s, const float* q, const HeadStrides& q_s,
                      const float* k, const float* v, const AttentionShape& s, const KvRows& kv) {
  decode_any(out, out_s, q, q_s, k, v, s, kv);
}

void attention_decode(float* out, const HeadStrides& out_s, const float* q, const HeadStrides& q_s,
                      const std::uint16_t* k, const std::uint16_t* v, const AttentionShape& s,
                      const KvRows& kv) {
  decode_any(out, out_s, q, q_s, k, v, s, kv);
}

}  // namespace llmbench::cpu::avx2
