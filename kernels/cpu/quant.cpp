// The int8/int4 block formats: references (plain loops, the spec of quant.h) and the engine's
// versions (the packed layout's own functions: quant_pack.cpp). The AVX-512 kernels live in quant_avx512.cpp (weight-only decode) and
// quant_vnni_avx512.cpp (int8 activations, vpdpbusd), each with its own compile flags.
#include "kernels/cpu/quant.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/common/error.h"
#include "kernels/common/half.h"
#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/decode_dispatch.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/quant_avx2.h"
#include "kernels/cpu/quant_avx512.h"
#include "kernels/cpu/quant_vnni_avx512.h"

namespace llmbench::cpu {

namespace {

int quant_max(DType dtype) { return dtype == DType::kInt8 ? 127 : 7; }

void check_quant(DType dtype, int k) {
  LLMBENCH_CHECK(dtype_is_quantized(dtype), "int8 or int4 weights");
  LLMBENCH_CHECK(k % kQuantBlock == 0, "k a multiple of the block size (32)");
}

// One block of 32 weights: writes the scale and the values (layout: quant.h).
void quantize_block(std::uint8_t* dst, const float* x, DType dtype) {
  float amax = 0.0f;
  for (int j = 0; j < kQuantBlock; ++j) amax = std::max(amax, std::fabs(x[j]));
  const int qmax = quant_max(dtype);
  const std::uint16_t d = fp32_to_fp16(amax / float(qmax));
  const float df = fp16_to_fp32(d);
  const float inv = df > 0.0f ? 1.0f / df : 0.0f;
  std::memcpy(dst, &d, 2);  // little-endian on every target this builds for
  int q[kQuantBlock];
  for (int j = 0; j < kQuantBlock; ++j)
    q[j] = std::clamp(int(std::nearbyint(x[j] * inv)), -qmax, qmax);
  if (dtype == DType::kInt8) {
    for (int j = 0; j < kQuantBlock; ++j) dst[2 + j] = std::uint8_t(std::int8_t(q[j]));
  } else {
    for (int i = 0; i < 16; ++i)
      dst[2 + i] = std::uint8_t((q[i] + 8) | ((q[i + 16] + 8) << 4));
  }
}

// The 32 values q[j] * d of one block.
void dequantize_block(float* dst, const std::uint8_t* b, DType dtype) {
  std::uint16_t d;
  std::memcpy(&d, b, 2);
  const float df = fp16_to_fp32(d);
  if (dtype == DType::kInt8) {
    for (int j = 0; j < kQuantBlock; ++j) dst[j] = float(std::int8_t(b[2 + j])) * df;
  } else {
    for (int i = 0; i < 16; ++i) {
      dst[i] = float(int(b[2 + i] & 0x0F) - 8) * df;
      dst[i + 16] = float(int(b[2 + i] >> 4) - 8) * df;
    }
  }
}

const std::uint8_t* row_at(const void* w, DType dtype, std::int64_t row, int k) {
  return static_cast<const std::uint8_t*>(w) + row * quant_row_bytes(dtype, k);
}

}  // namespace

std::int64_t quant_row_bytes(DType dtype, int k) { return dtype_bytes_for(dtype, k); }

void quantize_rows_reference(void* dst, const float* src, DType dtype, std::int64_t n_rows,
                             int k) {
  check_quant(dtype, k);
  const std::int64_t bb = dtype_bytes_x32(dtype);
  auto* out = static_cast<std::uint8_t*>(dst);
  for (std::int64_t r = 0; r < n_rows; ++r)
    for (int b = 0; b < k / kQuantBlock; ++b)
      quantize_block(out + r * quant_row_bytes(dtype, k) + b * bb,
                     src + r * k + std::int64_t(b) * kQuantBlock, dtype);
}

void dequantize_rows_reference(float* dst, const void* src, DType dtype, std::int64_t n_rows,
                               int k) {
  check_quant(dtype, k);
  const std::int64_t bb = dtype_bytes_x32(dtype);
  for (std::int64_t r = 0; r < n_rows; ++r)
    for (int b = 0; b < k / kQuantBlock; ++b)
      dequantize_block(dst + r * k + std::int64_t(b) * kQuantBlock,
                       row_at(src, dtype, r, k) + b * bb, dtype);
}

double quant_dot_reference(const void* w_row, const float* x, DType dtype, int k) {
  check_quant(dtype, k);
  const auto* row = static_cast<const std::uint8_t*>(w_row);
  double s = 0.0;
  float w[kQuantBlock];
  for (int b = 0; b < k / kQuantBlock; ++b) {
    dequantize_block(w, row + b * dtype_bytes_x32(dtype), dtype);
    for (int j = 0; j < kQuantBlock; ++j) s += double(x[b * kQuantBlock + j]) * double(w[j]);
  }
  return s;
}

void matmul_quant_reference(float* out, const float* x, const void* w, DType dtype, int m, int n,
                            int k, int lda) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      out[std::int64_t(i) * n + j] =
          float(quant_dot_reference(row_at(w, dtype, j, k), x + std::int64_t(i) * lda, dtype, k));
}

void quantize_rows(void* dst, const float* src, DType dtype, std::int64_t n_rows, int k) {
  check_quant(dtype, k);
  const std::int64_t rb = quant_row_bytes(dtype, k);
#pragma omp parallel for schedule(static) if (n_rows * k > 65536)
  for (std::int64_t r = 0; r < n_rows; ++r)
    quantize_rows_reference(static_cast<std::uint8_t*>(dst) + r * rb, src + r * k, dtype, 1, k);
}

void dequantize_rows(float* dst, const void* src, DType dtype, std::int64_t n_rows, int k) {
  check_quant(dtype, k);
#pragma omp parallel for schedule(static) if (n_rows * k > 65536)
  for (std::int64_t r = 0; r < n_rows; ++r)
    dequantize_rows_reference(dst + r * k, row_at(src, dtype, r, k), dtype, 1, k);
}

namespace {

// The portable decode path: each weight row dequantised once into a per-thread L1 buffer, then
// one fixed-order fp32 dot product per x row (independent of m).
LLMBENCH_ISA_CLONES
void decode_portable(float* out, const float* x, const void* w, DType dtype, int m, int n, int k,
                     int lda) {
#pragma omp parallel if (std::int64_t(n) * k > (1 << 15))
  {
    std::vector<float> row(static_cast<std::size_t>(k));
#pragma omp for schedule(static)
    for (int j = 0; j < n; ++j) {
      dequantize_rows_reference(row.data(), row_at(w, dtype, j, k), dtype, 1, k);
      const float* wr = row.data();
      for (int i = 0; i < m; ++i) {
        const float* xr = x + std::int64_t(i) * lda;
        float s = 0.0f;
#pragma omp simd reduction(+ : s)
        for (int t = 0; t < k; ++t) s += xr[t] * wr[t];
        out[std::int64_t(i) * n + j] = s;
      }
    }
  }
}

// The prefill path: kQuantTileRows weight rows at a time dequantised and multiplied by matmul().
void prefill_tiles(float* out, const float* x, const void* w, DType dtype, int m, int n, int k,
                   int lda) {
  std::vector<float> tile(std::size_t(kQuantTileRows) * k);
  std::vector<float> part(std::size_t(m) * kQuantTileRows);
  for (int j0 = 0; j0 < n; j0 += kQuantTileRows) {
    const int nt = std::min(kQuantTileRows, n - j0);
    dequantize_rows(tile.data(), row_at(w, dtype, j0, k), dtype, nt, k);
    matmul(part.data(), x, tile.data(), m, nt, k, lda);
#pragma omp parallel for schedule(static) if (std::int64_t(m) * nt > 65536)
    for (int i = 0; i < m; ++i)
      std::memcpy(out + std::int64_t(i) * n + j0, part.data() + std::int64_t(i) * nt,
                  std::size_t(nt) * sizeof(float));
  }
}

}  // namespace

void matmul_quant(float* out, const float* x, const void* w, DType dtype, int m, int n, int k,
                  int lda) {
  check_quant(dtype, k);
  if (m <= 0 || n <= 0) return;
  if (k == 0) {
    std::fill(out, out + std::int64_t(m) * n, 0.0f);
    return;
  }
  if (m > kQuantDecodeRowsMax)
    prefill_tiles(out, x, w, dtype, m, n, k, lda);
  else if (cpu_isa().avx512)
    avx512::matmul_quant_decode(out, x, lda, w, dtype == DType::kInt4, m, n, k);
  else
    decode_portable(out, x, w, dtype, m, n, k, lda);
}

void quantize_activations(std::int8_t* q, float* d, const float* x, int m, int k, int lda) {
  LLMBENCH_CHECK(k % kQuantBlock == 0, "k a multiple of the block size (32)");
  const int nb = k / kQuantBlock;
#pragma omp parallel for schedule(static) if (std::int64_t(m) * k > 65536)
  for (int i = 0; i < m; ++i)
    for (int b = 0; b < nb; ++b) {
      const float* xb = x + std::int64_t(i) * lda + b * kQuantBlock;
      std::int8_t* qb = q + std::int64_t(i) * k + b * kQuantBlock;
      float amax = 0.0f;
      for (int j = 0; j < kQuantBlock; ++j) amax = std::max(amax, std::fabs(xb[j]));
      const float dx = amax / 127.0f;
      d[std::int64_t(i) * nb + b] = dx;
      for (int j = 0; j < kQuantBlock; ++j)
        qb[j] = dx > 0.0f ? std::int8_t(std::clamp(int(std::nearbyint(xb[j] / dx)), -127, 127))
                          : std::int8_t(0);
    }
}

namespace {

// The integer values q[0..31] of one weight block and its scale.
float block_values(int* q, const std::uint8_t* b, DType dtype) {
  std::uint16_t d;
  std::memcpy(&d, b, 2);
  if (dtype == DType::kInt8) {
    for (int j = 0; j < kQuantBlock; ++j) q[j] = std::int8_t(b[2 + j]);
  } else {
    for (int i = 0; i < 16; ++i) {
      q[i] = int(b[2 + i] & 0x0F) - 8;
      q[i + 16] = int(b[2 + i] >> 4) - 8;
    }
  }
  return fp16_to_fp32(d);
}

// The portable int8-activation product on the packed layout: per weight row (output column)
// its integer values and scales unpacked once into a per-thread buffer, then per x row the
// fp32 sum quant.h specifies, with explicit FMAs so that it is the AVX-512 kernel's sum bit for
// bit (both cvtepi32_ps and float() are exact here, the multiply and the FMA round once each).
LLMBENCH_ISA_CLONES
void vnni_portable(float* out, const std::int8_t* qx, const float* dx, const void* w,
                   DType dtype, int m, int n, int k, int j0) {
  const int nb = k / kQuantBlock;
#pragma omp parallel if (std::int64_t(n - j0) * k > (1 << 15))
  {
    std::vector<std::int8_t> wq(static_cast<std::size_t>(k));
    std::vector<std::uint16_t> dh(static_cast<std::size_t>(nb));
    std::vector<float> dw(static_cast<std::size_t>(nb));
#pragma omp for schedule(static)
    for (int j = j0; j < n; ++j) {
      unpack_packed_row(wq.data(), dh.data(), w, dtype, n, k, j);
      for (int b = 0; b < nb; ++b) dw[b] = fp16_to_fp32(dh[b]);
      for (int i = 0; i < m; ++i) {
        const std::int8_t* xi = qx + std::int64_t(i) * k;
        float acc = 0.0f;
        for (int b = 0; b < nb; ++b) {
          int dot = 0;
#pragma omp simd reduction(+ : dot)
          for (int t = 0; t < kQuantBlock; ++t)
            dot += int(wq[b * kQuantBlock + t]) * int(xi[b * kQuantBlock + t]);
          const float scaled = float(dot) * dx[std::int64_t(i) * nb + b];
          acc = std::fma(scaled, dw[b], acc);
        }
        out[std::int64_t(i) * n + j] = acc;
      }
    }
  }
}

}  // namespace

void matmul_quant_vnni_reference(float* out, const float* x, const void* w, DType dtype, int m,
                                 int n, int k, int lda) {
  check_quant(dtype, k);
  const int nb = k / kQuantBlock;
  std::vector<std::int8_t> qx(static_cast<std::size_t>(k));
  std::vector<float> dx(static_cast<std::size_t>(nb));
  int q[kQuantBlock];
  for (int i = 0; i < m; ++i) {
    quantize_activations(qx.data(), dx.data(), x + std::int64_t(i) * lda, 1, k, k);
    for (int j = 0; j < n; ++j) {
      const std::uint8_t* row = row_at(w, dtype, j, k);
      double s = 0.0;
      for (int b = 0; b < nb; ++b) {
        const float dw = block_values(q, row + b * dtype_bytes_x32(dtype), dtype);
        std::int64_t dot = 0;  // exact: |dot| <= 32 * 127 * 127
        for (int t = 0; t < kQuantBlock; ++t) dot += q[t] * int(qx[b * kQuantBlock + t]);
        s += double(dw) * double(dx[b]) * double(dot);
      }
      out[std::int64_t(i) * n + j] = float(s);
    }
  }
}

namespace {

// The product on quantised activations, on path p.
void vnni_on(IsaPath p, float* out, const std::int8_t* qx, const float* dx, const void* w,
             DType dtype, int m, int n, int k) {
  if (p == IsaPath::kAvx512) {
    avx512::matmul_quant_vnni(out, qx, dx, w, dtype == DType::kInt4, m, n, k);
  } else if (p == IsaPath::kAvx2) {
    // vpmaddubsw + vpmaddwd on the full 16-column groups, the plain loops on a partial last one.
    avx2::matmul_quant_vnni(out, qx, dx, w, dtype == DType::kInt4, m, n, k);
    const int done = n / kQuantPanelCols * kQuantPanelCols;
    if (done < n) vnni_portable(out, qx, dx, w, dtype, m, n, k, done);
  } else {
    vnni_portable(out, qx, dx, w, dtype, m, n, k, 0);
  }
}

// The path for m rows: decode_dispatch.h's at decode's row counts, else the widest.
IsaPath vnni_path(DType dtype, int m) {
  if (m <= kDecodeRowsMax) return decode_path(dtype, m);
  return cpu_isa().avx512_vnni ? IsaPath::kAvx512
         : cpu_isa().avx2      ? IsaPath::kAvx2
                               : IsaPath::kPortable;
}

}  // namespace

void matmul_quant_vnni_on(IsaPath p, float* out, const float* x, const void* w, DType dtype,
                          int m, int n, int k, int lda) {
  check_quant(dtype, k);
  if (m <= 0 || n <= 0) return;
  if (k == 0) {
    std::fill(out, out + std::int64_t(m) * n, 0.0f);
    return;
  }
  // x's blocks once per call: O(m k), against the O(n k) weight stream.
  std::vector<std::int8_t> qx(std::size_t(m) * k);
  std::vector<float> dx(std::size_t(m) * (k / kQuantBlock));
  quantize_activations(qx.data(), dx.data(), x, m, k, lda);
  vnni_on(p, out, qx.data(), dx.data(), w, dtype, m, n, k);
}

void matmul_quant_vnni(float* out, const float* x, const void* w, DType dtype, int m, int n,
                       int k, int lda) {
  matmul_quant_vnni_on(vnni_path(dtype, m), out, x, w, dtype, m, n, k, lda);
}

void embedding_quant(float* out, const void* table, DType dtype, const std::int32_t* tokens,
                     int n_tokens, int vocab, int dim) {
  check_quant(dtype, dim);
#pragma omp parallel for schedule(static) if (std::int64_t(n_tokens) * dim > 65536)
  for (int t = 0; t < n_tokens; ++t)
    dequantize_packed_row(out + std::int64_t(t) * dim, table, dtype, vocab, dim, tokens[t]);
}

}  // namespace llmbench::cpu
