// AVX-512 VNNI (vpdpbusd) kernel for int8/int4 weight blocks times int8 activation blocks
// (quant_vnni_avx512.h). Compiled with per-file flags including -mavx512vnni and
// -mavx512vbmi (kernels/CMakeLists.txt); reached only through matmul_quant_vnni's dispatch.
// Deliberately not: the weight-only product (quant_avx512.cpp), register tiles over several
// weight rows (prefill runs the same 4-row tiles, x in blocks of 64 rows).
//
// Work per group of 16 blocks (512 weights), for each x row: 8 vpdpbusd (two blocks each), a
// 21-instruction transpose-and-add that leaves one int32 lane per block, then one add (the
// offset correction), one convert, one multiply (dw * dx of all 16 blocks) and one FMA. Scaling
// each block's 8 lanes separately instead costs about twice the instructions, and at one row
// the kernel is bound by instructions, not by bandwidth.
#include "kernels/cpu/quant_vnni_avx512.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace llmbench::cpu::avx512 {

namespace {

constexpr int kGroupBlocks = 16;  // blocks per group: 8 pairs, one fp32 vector of results
constexpr int kRowBlock = 64;     // x rows per pass over the weights (64 x 5632: 450 KB packed)

// Lane of the reduced vector that holds block t (0..15) of a group: the transpose-and-add
// (reduce_group) leaves block 4 * t' + c in lane 4 * c + t'.
constexpr int lane_of_block(int t) { return 4 * (t % 4) + t / 4; }

// One x row's group of 16 blocks, in the byte order the weights of each pair unpack to, so
// lane l of a pair's vpdpbusd result belongs to one block:
//   q      8 x 64 int8   pair p (blocks 2p, 2p + 1). int8 weights: block 2p's 32 values then
//                        2p + 1's (lanes 0-7, 8-15); int4: 2p[0..15], 2p+1[0..15], 2p[16..31],
//                        2p+1[16..31] (lanes in fours: 2p, 2p+1, 2p, 2p+1), the order the low
//                        and high nibbles unpack to
//   corr   16 int32      per block (lane_of_block order): -offset * sum of its 32 x values,
//                        offset 128 (int8 weights read as q + 128) or 8 (int4 nibbles, q + 8)
//   scale  16 fp32       dx per block, lane_of_block order
// Blocks past k are zeros (scale 0).
struct alignas(64) PackedGroup {
  std::int8_t q[8][64];
  std::int32_t corr[16];
  float scale[16];
};

void pack_x(PackedGroup* dst, const std::int8_t* qx, const float* dx, bool int4, int m, int k) {
  const int nb = k / 32, ng = (nb + kGroupBlocks - 1) / kGroupBlocks;
#pragma omp parallel for schedule(static) if (std::int64_t(m) * k > (1 << 16))
  for (int i = 0; i < m; ++i)
    for (int g = 0; g < ng; ++g) {
      PackedGroup& pg = dst[std::int64_t(i) * ng + g];
      std::memset(&pg, 0, sizeof pg);
      for (int t = 0; t < kGroupBlocks; ++t) {
        const int b = g * kGroupBlocks + t;
        if (b >= nb) break;
        const std::int8_t* src = qx + std::int64_t(i) * k + b * 32;
        const int h = t % 2;
        int sum = 0;
        for (int j = 0; j < 32; ++j) {
          const int pos = int4 ? (j < 16 ? 16 * h + j : 32 + 16 * h + (j - 16)) : 32 * h + j;
          pg.q[t / 2][pos] = src[j];
          sum += src[j];
        }
        pg.corr[lane_of_block(t)] = -(int4 ? 8 : 128) * sum;
        pg.scale[lane_of_block(t)] = dx[std::int64_t(i) * nb + b];
      }
    }
}

// The unsigned weight bytes of blocks 2p and 2p + 1 of a group starting at `blk`.
template <bool kInt4>
inline __m512i weight_pair(const std::uint8_t* blk, int p) {
  if constexpr (kInt4) {
    // 34 bytes from block 2p's values (its 16 bytes, 2p+1's scale, 2p+1's 16 bytes; masked, so
    // never past the end), arranged as [2p | 2p+1 | 2p | 2p+1], then the first half keeps the
    // low nibbles and the second the high ones.
    const __m512i raw = _mm512_maskz_loadu_epi8(0x3FFFFFFFFull, blk + 36 * p + 2);
    const __m512i idx = _mm512_set_epi8(
        33, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18,
        15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0,
        33, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18,
        15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    const __m512i both = _mm512_permutexvar_epi8(idx, raw);
    return _mm512_and_si512(_mm512_mask_srli_epi16(both, 0xFFFF0000u, both, 4),
                            _mm512_set1_epi8(0x0F));
  } else {
    const __m256i v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 68 * p + 2));
    const __m256i v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 68 * p + 36));
    // q + 128 as unsigned bytes: flip the sign bit.
    return _mm512_xor_si512(_mm512_inserti64x4(_mm512_castsi256_si512(v0), v1, 1),
                            _mm512_set1_epi8(char(0x80)));
  }
}

// Even plus odd 32-bit lanes of a and b, per 128-bit chunk: [a0+a1, a2+a3, b0+b1, b2+b3].
inline __m512i add_pairs(__m512i a, __m512i b) {
  const __m512 fa = _mm512_castsi512_ps(a), fb = _mm512_castsi512_ps(b);
  return _mm512_add_epi32(
      _mm512_castps_si512(_mm512_shuffle_ps(fa, fb, _MM_SHUFFLE(2, 0, 2, 0))),
      _mm512_castps_si512(_mm512_shuffle_ps(fa, fb, _MM_SHUFFLE(3, 1, 3, 1))));
}

// The 8 pair results of a group to one vector of 16 block sums (lane_of_block order).
template <bool kInt4>
inline __m512i reduce_group(const __m512i* v) {
  // Level 1: 128-bit chunks of one block each. int8 pairs hold chunks (2p, 2p, 2p+1, 2p+1),
  // int4 pairs (2p, 2p+1, 2p, 2p+1); u[q] holds blocks 4q .. 4q + 3, one per chunk.
  constexpr int kLo = kInt4 ? _MM_SHUFFLE(1, 0, 1, 0) : _MM_SHUFFLE(2, 0, 2, 0);
  constexpr int kHi = kInt4 ? _MM_SHUFFLE(3, 2, 3, 2) : _MM_SHUFFLE(3, 1, 3, 1);
  __m512i u[4];
  for (int q = 0; q < 4; ++q)
    u[q] = _mm512_add_epi32(_mm512_shuffle_i32x4(v[2 * q], v[2 * q + 1], kLo),
                            _mm512_shuffle_i32x4(v[2 * q], v[2 * q + 1], kHi));
  // Level 2: chunk c of w0 holds blocks c, c + 4 (two lanes each), of w1 blocks c + 8, c + 12.
  const __m512i w0 = add_pairs(u[0], u[1]), w1 = add_pairs(u[2], u[3]);
  // Level 3: chunk c holds blocks c, c + 4, c + 8, c + 12.
  return add_pairs(w0, w1);
}

// R packed x rows (R <= 4) times one weight row: out[r * n]. One accumulator per row, groups
// in order: the same sum for every R.
template <bool kInt4, int R>
inline void rows_times_weight_row(float* out, int n, const PackedGroup* x, int ng,
                                  const std::uint8_t* row, int nb) {
  constexpr int kBlockBytes = kInt4 ? 18 : 34;
  __m512 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
  alignas(64) std::uint8_t tail[kGroupBlocks * kBlockBytes];
  for (int g = 0; g < ng; ++g) {
    const std::uint8_t* blk = row + std::int64_t(g) * kGroupBlocks * kBlockBytes;
    const int blocks = std::min(kGroupBlocks, nb - g * kGroupBlocks);
    if (blocks < kGroupBlocks) {  // a partial last group: zero-padded copy (scale 0)
      std::memset(tail, 0, sizeof tail);
      std::memcpy(tail, blk, std::size_t(blocks) * kBlockBytes);
      blk = tail;
    }
    alignas(32) std::uint16_t dh[kGroupBlocks];
    for (int t = 0; t < kGroupBlocks; ++t)
      std::memcpy(&dh[lane_of_block(t)], blk + t * kBlockBytes, 2);
    const __m512 dw = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(dh)));
    __m512i wu[8];
    for (int p = 0; p < 8; ++p) wu[p] = weight_pair<kInt4>(blk, p);
    for (int r = 0; r < R; ++r) {
      const PackedGroup& xg = x[std::int64_t(r) * ng + g];
      __m512i v[8];
      for (int p = 0; p < 8; ++p)
        v[p] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), wu[p],
                                   _mm512_load_si512(xg.q[p]));
      const __m512i sums = _mm512_add_epi32(reduce_group<kInt4>(v),
                                            _mm512_load_si512(xg.corr));
      acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sums),
                               _mm512_mul_ps(dw, _mm512_load_ps(xg.scale)), acc[r]);
    }
  }
  for (int r = 0; r < R; ++r) out[std::int64_t(r) * n] = _mm512_reduce_add_ps(acc[r]);
}

template <bool kInt4>
void vnni(float* out, const std::int8_t* qx, const float* dx, const void* w, int m, int n,
          int k) {
  const int nb = k / 32, ng = (nb + kGroupBlocks - 1) / kGroupBlocks;
  std::vector<PackedGroup> xp(std::size_t(m) * ng);  // 64-byte aligned (C++17 new)
  pack_x(xp.data(), qx, dx, kInt4, m, k);
  const std::int64_t row_bytes = std::int64_t(nb) * (kInt4 ? 18 : 34);
  const auto* base = static_cast<const std::uint8_t*>(w);
  // Rows in blocks of kRowBlock, so the packed x rows a weight row meets stay in L2 (prefill);
  // within a block, tiles of 4 rows per pass over the weight row (L1).
  for (int b0 = 0; b0 < m; b0 += kRowBlock) {
    const int mb = std::min(kRowBlock, m - b0);
#pragma omp parallel for schedule(static) if (std::int64_t(n) * k > (1 << 15))
    for (int j = 0; j < n; ++j) {
      const std::uint8_t* row = base + j * row_bytes;
      for (int i0 = b0; i0 < b0 + mb; i0 += 4) {
        float* o = out + std::int64_t(i0) * n + j;
        const PackedGroup* xi = xp.data() + std::int64_t(i0) * ng;
        switch (b0 + mb - i0 < 4 ? b0 + mb - i0 : 4) {
          case 1: rows_times_weight_row<kInt4, 1>(o, n, xi, ng, row, nb); break;
          case 2: rows_times_weight_row<kInt4, 2>(o, n, xi, ng, row, nb); break;
          case 3: rows_times_weight_row<kInt4, 3>(o, n, xi, ng, row, nb); break;
          default: rows_times_weight_row<kInt4, 4>(o, n, xi, ng, row, nb); break;
        }
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
