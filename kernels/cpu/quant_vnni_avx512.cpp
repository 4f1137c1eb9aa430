// AVX-512 VNNI (vpdpbusd) kernel for packed int8/int4 weight panels times int8 activation
// blocks (quant_vnni_avx512.h). Compiled with per-file flags including -mavx512vnni
// (kernels/CMakeLists.txt); reached only through matmul_quant_vnni's dispatch. Deliberately
// not: the weight-only product (quant_avx512.cpp), row-major weights (the layout is packed at
// load time so that no shuffle is needed here).
//
// The packed layout (quant.h) gives one 64-byte vector per 4 consecutive k values of 16 output
// columns, so a vpdpbusd of that vector with x's 4 bytes broadcast to every lane adds 64
// products straight into 16 per-column int32 sums: a block of 32 weights is 8 vpdpbusd (int8)
// per x row and column group, with no transpose. The weights are the unsigned operand (q + 128
// or the int4 nibbles q + 8), so each block's sum starts from -offset * sum(qx), computed when
// x is quantised. Per (x row, column group, block) that is 8 vpdpbusd, then one convert, one
// multiply by x's block scale and one FMA with the 16 columns' weight scales (converted from
// fp16 once per group and block, shared by the tile's rows): 11 instructions a 512 MACs
// against the row-major kernel's 33.
//
// Decode (up to kDecodeRows x rows): one column group at a time, every block of k, each thread
// streaming whole groups that PanelSchedule hands out, with a software prefetch (decode()). Prefill: register tile of kTileRows x rows by kTileGroups column groups (8
// int32 and 8 fp32 accumulators, 2 weight vectors); x in blocks of kRowBlock rows (L2), blocks
// of k in chunks of kChunkBlocks (the tile's weights then stay in L1 while every row tile of
// the row block passes over them), threads over column groups by a static split. An output's fp32 sum runs over the blocks in
// order from zero whatever the tile, chunk or row count (a chunk boundary stores and reloads
// the exact fp32 value), which is what keeps row i independent of m.
#include "kernels/cpu/quant_vnni_avx512.h"

#include "kernels/cpu/avx512_intrinsics.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/cpu/panel_schedule.h"

namespace llmbench::cpu::LLMBENCH_AVX512_NS {

namespace {

constexpr int kCols = 16;          // columns per group (kQuantPanelCols): one vector of outputs
constexpr int kTileRows = 4;       // x rows per register tile
constexpr int kTileGroups = 2;     // column groups per register tile
constexpr int kRowBlock = 64;      // x rows per pass over the weights (64 x 5632: 450 KB)
constexpr int kChunkBlocks = 16;   // k blocks per pass of a row block over one tile's weights
constexpr int kDecodeRows = 8;     // kDecodeRowsMax (decode_dispatch.h)
// Software prefetch distance in a column group's stream at decode, as the AVX2 matmul kernels'
// measured one (matmul_avx2.cpp); not yet measured on an AVX-512 CPU.
constexpr int kDecodePrefetchBytes = 512;

// x quantised (quantize_activations) plus each block's offset correction, row r at r * k
// (values) and r * nb (corrections and scales).
struct XBlocks {
  const std::int8_t* q;
  const std::int32_t* corr;  // -offset * sum of the block's 32 values
  const float* dx;
  int k, nb;
};

inline __m512i broadcast_dword(const std::int8_t* p) {
  std::int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

// out[r0 .. r0 + R) x (the C groups' columns) over blocks [b0, b1), accumulating onto what out
// holds when b0 > 0. `w` is the first group's start; groups are group_bytes apart. kFull: 16
// columns a group; else one group (C == 1) of nc < 16 columns, read and written with masks.
// prefetch: prefetch each group's stream kDecodePrefetchBytes ahead (decode; a flag, not a
// template parameter, so decode adds no instantiations to the build).
template <bool kInt4, int R, int C, bool kFull>
inline void tile(float* out, std::int64_t n, const XBlocks& x, int r0, const std::uint8_t* w,
                 std::int64_t group_bytes, int nc, int b0, int b1, bool prefetch) {
  static_assert(kFull || C == 1);
  constexpr int kBlockBytes = kInt4 ? 18 : 34;
  const int cols = kFull ? kCols : nc;
  const __mmask16 mask = kFull ? __mmask16(0xFFFF) : __mmask16((1u << nc) - 1);
  const __mmask64 byte_mask = kFull ? ~0ull : (1ull << (4 * nc)) - 1;  // nc <= 15
  auto load_values = [&](const std::uint8_t* p) {
    return kFull ? _mm512_loadu_si512(p) : _mm512_maskz_loadu_epi8(byte_mask, p);
  };
  __m512 acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c)
      acc[r][c] = b0 == 0 ? _mm512_setzero_ps()
                          : _mm512_maskz_loadu_ps(mask, out + std::int64_t(r0 + r) * n + c * kCols);
  const __m512i low4 = _mm512_set1_epi8(0x0F);
  for (int b = b0; b < b1; ++b) {
    const std::uint8_t* chunk[C];
    __m512 dw[C];
    for (int c = 0; c < C; ++c) {
      chunk[c] = w + c * group_bytes + std::int64_t(b) * cols * kBlockBytes;
      if (prefetch)
        for (int l = 0; l < cols * kBlockBytes; l += 64)
          _mm_prefetch(reinterpret_cast<const char*>(chunk[c]) + kDecodePrefetchBytes + l,
                       _MM_HINT_T0);
      const __m256i dh = kFull ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(chunk[c]))
                               : _mm256_maskz_loadu_epi16(mask, chunk[c]);
      dw[c] = _mm512_cvtph_ps(dh);
    }
    __m512i isum[R][C];
    for (int r = 0; r < R; ++r) {
      const __m512i corr = _mm512_set1_epi32(x.corr[std::int64_t(r0 + r) * x.nb + b]);
      for (int c = 0; c < C; ++c) isum[r][c] = corr;
    }
    const std::int8_t* xb = x.q + std::int64_t(r0) * x.k + b * 32;
    if constexpr (kInt4) {
      // Vector s holds k values 4s..4s+3 in its low nibbles and 16+4s..16+4s+3 in its high ones.
      for (int s = 0; s < 4; ++s) {
        __m512i lo[C], hi[C];
        for (int c = 0; c < C; ++c) {
          const __m512i raw = load_values(chunk[c] + 2 * cols + s * 4 * cols);
          lo[c] = _mm512_and_si512(raw, low4);
          hi[c] = _mm512_and_si512(_mm512_srli_epi16(raw, 4), low4);
        }
        for (int r = 0; r < R; ++r) {
          const __m512i xl = broadcast_dword(xb + std::int64_t(r) * x.k + 4 * s);
          const __m512i xh = broadcast_dword(xb + std::int64_t(r) * x.k + 16 + 4 * s);
          for (int c = 0; c < C; ++c) {
            isum[r][c] = _mm512_dpbusd_epi32(isum[r][c], lo[c], xl);
            isum[r][c] = _mm512_dpbusd_epi32(isum[r][c], hi[c], xh);
          }
        }
      }
    } else {
      for (int s = 0; s < 8; ++s) {
        __m512i wv[C];
        for (int c = 0; c < C; ++c) wv[c] = load_values(chunk[c] + 2 * cols + s * 4 * cols);
        for (int r = 0; r < R; ++r) {
          const __m512i xv = broadcast_dword(xb + std::int64_t(r) * x.k + 4 * s);
          for (int c = 0; c < C; ++c) isum[r][c] = _mm512_dpbusd_epi32(isum[r][c], wv[c], xv);
        }
      }
    }
    for (int r = 0; r < R; ++r) {
      const __m512 dx = _mm512_set1_ps(x.dx[std::int64_t(r0 + r) * x.nb + b]);
      for (int c = 0; c < C; ++c)
        acc[r][c] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(isum[r][c]), dx), dw[c],
                                    acc[r][c]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c)
      _mm512_mask_storeu_ps(out + std::int64_t(r0 + r) * n + c * kCols, mask, acc[r][c]);
}

// Rows [i0, i1) through one column unit (C groups) over blocks [b0, b1), in row tiles.
template <bool kInt4, int C, bool kFull>
void unit_rows(float* out, std::int64_t n, const XBlocks& x, int i0, int i1,
               const std::uint8_t* w, std::int64_t group_bytes, int nc, int b0, int b1,
               bool prefetch = false) {
  for (int r0 = i0; r0 < i1; r0 += kTileRows) {
    switch (std::min(kTileRows, i1 - r0)) {
      case 1: tile<kInt4, 1, C, kFull>(out, n, x, r0, w, group_bytes, nc, b0, b1, prefetch); break;
      case 2: tile<kInt4, 2, C, kFull>(out, n, x, r0, w, group_bytes, nc, b0, b1, prefetch); break;
      case 3: tile<kInt4, 3, C, kFull>(out, n, x, r0, w, group_bytes, nc, b0, b1, prefetch); break;
      default: tile<kInt4, 4, C, kFull>(out, n, x, r0, w, group_bytes, nc, b0, b1, prefetch); break;
    }
  }
}

// Decode (m <= kDecodeRows): one column group at a time over all its blocks, so each thread
// reads one sequential stream (a group's 16 columns x k are contiguous), prefetched; groups
// handed out by PanelSchedule (panel_schedule.h, as the AVX2 kernel), the partial group of
// n % 16 columns last. Rows in the prefill's tiles of kTileRows: past 4 rows the group is read
// again, from L2 (34 KB at k 2048 in int8), for no new tile code. The sums are the prefill
// tiles' (blocks in order from zero), so row i does not depend on m.
template <bool kInt4>
void decode(float* out, const XBlocks& x, const std::uint8_t* base, int m, int n) {
  const std::int64_t group_bytes = std::int64_t(kCols) * x.nb * (kInt4 ? 18 : 34);
  const int full = n / kCols, tail = n % kCols, units = full + (tail > 0 ? 1 : 0);
  PanelSchedule schedule(units, omp_get_max_threads());
#pragma omp parallel if (std::int64_t(n) * x.k > (1 << 15))
  schedule.run(omp_get_thread_num(), [&](int g) {
    const std::uint8_t* wg = base + g * group_bytes;
    float* o = out + std::int64_t(g) * kCols;
    if (g < full)
      unit_rows<kInt4, 1, true>(o, n, x, 0, m, wg, group_bytes, kCols, 0, x.nb, true);
    else
      unit_rows<kInt4, 1, false>(o, n, x, 0, m, wg, group_bytes, tail, 0, x.nb, true);
  });
}

template <bool kInt4>
void vnni(float* out, const std::int8_t* qx, const float* dx, const void* w, int m, int n,
          int k) {
  const int nb = k / 32;
  // The offset correction: weights read as q + 128 (int8) or q + 8 (int4 nibbles).
  std::vector<std::int32_t> corr(std::size_t(m) * nb);
  for (std::int64_t i = 0; i < std::int64_t(m) * nb; ++i) {
    int sum = 0;
    for (int j = 0; j < 32; ++j) sum += qx[i * 32 + j];
    corr[std::size_t(i)] = -(kInt4 ? 8 : 128) * sum;
  }
  const XBlocks x{qx, corr.data(), dx, k, nb};
  if (m <= kDecodeRows) return decode<kInt4>(out, x, static_cast<const std::uint8_t*>(w), m, n);
  const std::int64_t group_bytes = std::int64_t(kCols) * nb * (kInt4 ? 18 : 34);
  const int full = n / kCols, tail = n % kCols;
  // Units of kTileGroups full groups, then a last single full group if `full` is odd, then the
  // partial group of n % 16 columns if there is one.
  const int pairs = full / kTileGroups, single = full % kTileGroups;
  const int units = pairs + single + (tail > 0 ? 1 : 0);
  const auto* base = static_cast<const std::uint8_t*>(w);
  for (int i0 = 0; i0 < m; i0 += kRowBlock) {
    const int i1 = std::min(m, i0 + kRowBlock);
#pragma omp parallel for schedule(static) if (std::int64_t(n) * k > (1 << 15))
    for (int u = 0; u < units; ++u) {
      const int g = u < pairs ? u * kTileGroups : pairs * kTileGroups + (u - pairs);
      const std::uint8_t* wg = base + g * group_bytes;
      float* o = out + std::int64_t(g) * kCols;
      for (int b0 = 0; b0 < nb; b0 += kChunkBlocks) {
        const int b1 = std::min(nb, b0 + kChunkBlocks);
        if (u < pairs)
          unit_rows<kInt4, kTileGroups, true>(o, n, x, i0, i1, wg, group_bytes, kCols, b0, b1);
        else if (g < full)
          unit_rows<kInt4, 1, true>(o, n, x, i0, i1, wg, group_bytes, kCols, b0, b1);
        else
          unit_rows<kInt4, 1, false>(o, n, x, i0, i1, wg, group_bytes, tail, b0, b1);
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

}  // namespace llmbench::cpu::LLMBENCH_AVX512_NS
