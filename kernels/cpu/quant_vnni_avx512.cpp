// AVX-512 VNNI (vpdpbusd) kernel for int8/int4 weight blocks times int8 activation blocks
// (quant_vnni_avx512.h). Compiled with per-file flags including -mavx512vnni
// (kernels/CMakeLists.txt); reached only through matmul_quant_vnni's dispatch.
// Deliberately not: the weight-only product (quant_avx512.cpp), prefill-sized register tiles.
#include "kernels/cpu/quant_vnni_avx512.h"

#include <immintrin.h>

#include <cstring>
#include <vector>

namespace llmbench::cpu::avx512 {

namespace {

// x packed per row and per pair of blocks (b = 2p, b + 1; a missing last block is zeros), in
// the byte order the weight vector of that pair has, so lane l of every vector belongs to one
// block:
//   q     64 int8    int8 weights: block b's 32 values, then b + 1's (lanes 0-7 b, 8-15 b+1);
//                    int4: b[0..15], b+1[0..15], b[16..31], b+1[16..31] (lanes b, b+1, b, b+1
//                    in fours), the order the low and high nibbles unpack to
//   corr  16 int32   -offset * (sum of the lane's four x bytes), offset 128 (int8) or 8 (int4)
//   scale 16 fp32    dx of the lane's block
struct PackedPair {
  std::int8_t q[64];
  std::int32_t corr[16];
  float scale[16];
};

void pack_x(PackedPair* dst, const std::int8_t* qx, const float* dx, bool int4, int m, int k) {
  const int nb = k / 32, np = (nb + 1) / 2;
  for (int i = 0; i < m; ++i)
    for (int p = 0; p < np; ++p) {
      PackedPair& pp = dst[std::int64_t(i) * np + p];
      std::memset(&pp, 0, sizeof pp);
      for (int h = 0; h < 2; ++h) {
        const int b = 2 * p + h;
        if (b >= nb) break;
        const std::int8_t* src = qx + std::int64_t(i) * k + b * 32;
        for (int j = 0; j < 32; ++j) {
          // Byte position of value j of block half h.
          const int pos = int4 ? (j < 16 ? 16 * h + j : 32 + 16 * h + (j - 16)) : 32 * h + j;
          pp.q[pos] = src[j];
        }
      }
      const int offset = int4 ? 8 : 128;
      for (int l = 0; l < 16; ++l) {
        int s = 0;
        for (int t = 0; t < 4; ++t) s += pp.q[4 * l + t];
        pp.corr[l] = -offset * s;
        const int h = int4 ? (l / 4) % 2 : l / 8;  // which block of the pair lane l holds
        pp.scale[l] = 2 * p + h < nb ? dx[std::int64_t(i) * nb + 2 * p + h] : 0.0f;
      }
    }
}

// The unsigned weight bytes of blocks b and b + 1 (has_second false: only b, the rest zero)
// and their scales spread over the lanes the same way.
template <bool kInt4>
inline void weight_pair(const std::uint8_t* blk, bool has_second, __m512i& wu, __m512& dw) {
  constexpr int kBlockBytes = kInt4 ? 18 : 34;
  std::uint16_t d0, d1 = 0;
  std::memcpy(&d0, blk, 2);
  if (has_second) std::memcpy(&d1, blk + kBlockBytes, 2);
  const __m128 d = _mm_cvtph_ps(_mm_cvtsi32_si128(int(std::uint32_t(d0) | std::uint32_t(d1) << 16)));
  if constexpr (kInt4) {
    const __m128i v0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 2));
    const __m128i v1 = has_second
        ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + kBlockBytes + 2))
        : _mm_setzero_si128();
    const __m256i v = _mm256_inserti128_si256(_mm256_castsi128_si256(v0), v1, 1);
    const __m256i mask = _mm256_set1_epi8(0x0F);
    wu = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_and_si256(v, mask)),
                            _mm256_and_si256(_mm256_srli_epi16(v, 4), mask), 1);
    const __m512i idx = _mm512_set_epi32(1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0);
    dw = _mm512_permutexvar_ps(idx, _mm512_castps128_ps512(d));
  } else {
    const __m256i v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2));
    const __m256i v1 = has_second
        ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + kBlockBytes + 2))
        : _mm256_setzero_si256();
    // q + 128 as unsigned bytes: flip the sign bit.
    wu = _mm512_xor_si512(_mm512_inserti64x4(_mm512_castsi256_si512(v0), v1, 1),
                          _mm512_set1_epi8(char(0x80)));
    const __m512i idx = _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
    dw = _mm512_permutexvar_ps(idx, _mm512_castps128_ps512(d));
  }
}

// R packed x rows (R <= 4) times one weight row: out[r * n]. Two accumulators per row (even and
// odd pairs); the same order for every R.
template <bool kInt4, int R>
inline void rows_times_weight_row(float* out, int n, const PackedPair* x, int np,
                                  const std::uint8_t* row, int nb) {
  constexpr int kBlockBytes = kInt4 ? 18 : 34;
  __m512 a0[R], a1[R];
  for (int r = 0; r < R; ++r) a0[r] = a1[r] = _mm512_setzero_ps();
  for (int p = 0; p < np; ++p) {
    __m512i wu;
    __m512 dw;
    weight_pair<kInt4>(row + std::int64_t(2 * p) * kBlockBytes, 2 * p + 1 < nb, wu, dw);
    for (int r = 0; r < R; ++r) {
      const PackedPair& xp = x[std::int64_t(r) * np + p];
      const __m512i dot = _mm512_dpbusd_epi32(_mm512_loadu_si512(xp.corr), wu,
                                              _mm512_loadu_si512(xp.q));
      const __m512 s = _mm512_mul_ps(dw, _mm512_loadu_ps(xp.scale));
      if (p & 1)
        a1[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), s, a1[r]);
      else
        a0[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), s, a0[r]);
    }
  }
  for (int r = 0; r < R; ++r)
    out[std::int64_t(r) * n] = _mm512_reduce_add_ps(_mm512_add_ps(a0[r], a1[r]));
}

template <bool kInt4>
void vnni(float* out, const std::int8_t* qx, const float* dx, const void* w, int m, int n,
          int k) {
  const int nb = k / 32, np = (nb + 1) / 2;
  std::vector<PackedPair> xp(std::size_t(m) * np);
  pack_x(xp.data(), qx, dx, kInt4, m, k);
  const std::int64_t row_bytes = std::int64_t(nb) * (kInt4 ? 18 : 34);
  const auto* base = static_cast<const std::uint8_t*>(w);
#pragma omp parallel for schedule(static) if (std::int64_t(n) * k > (1 << 15))
  for (int j = 0; j < n; ++j) {
    const std::uint8_t* row = base + j * row_bytes;
    for (int i0 = 0; i0 < m; i0 += 4) {
      float* o = out + std::int64_t(i0) * n + j;
      const PackedPair* xi = xp.data() + std::int64_t(i0) * np;
      switch (m - i0 < 4 ? m - i0 : 4) {
        case 1: rows_times_weight_row<kInt4, 1>(o, n, xi, np, row, nb); break;
        case 2: rows_times_weight_row<kInt4, 2>(o, n, xi, np, row, nb); break;
        case 3: rows_times_weight_row<kInt4, 3>(o, n, xi, np, row, nb); break;
        default: rows_times_weight_row<kInt4, 4>(o, n, xi, np, row, nb); break;
      }
    }
  }
}

}  // namespace

void matmul_quant_vnni(float* out, const std::int8_t* qx, const float* dx, const void* w,
                       bool int4, int m, int n, int k) {
  if (int4)
    vnni<true>(out, qx, dx, w, m, n, k);
  else
    vnni<false>(out, qx, dx, w, m, n, k);
}

}  // namespace llmbench::cpu::avx512
