// The packed (column-panel) layout of quantised weights (quant.h): the plain repacking of
// row-major blocks that is its spec, the load-time quantise-and-pack the CPU backend runs, and
// the row reads the embedding needs. Deliberately not: any product (quant.cpp and the VNNI
// kernel read this layout), or a way back to the row-major form beyond one row at a time.
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/common/error.h"
#include "kernels/common/half.h"
#include "kernels/cpu/quant.h"

namespace llmbench::cpu {

namespace {

void check_quant(DType dtype, int k) {
  LLMBENCH_CHECK(dtype_is_quantized(dtype), "int8 or int4 weights");
  LLMBENCH_CHECK(k % kQuantBlock == 0, "k a multiple of the block size (32)");
}

// Where a column group starts (byte offset) and how many columns it has.
std::int64_t group_offset(DType dtype, int k, std::int64_t g) {
  return g * kQuantPanelCols * quant_row_bytes(dtype, k);
}
int group_cols(std::int64_t n, std::int64_t g) {
  return int(std::min<std::int64_t>(kQuantPanelCols, n - g * kQuantPanelCols));
}

// Byte of value j (0..31) of column c in a chunk of nc columns, past the nc scales (quant.h).
int value_byte(DType dtype, int nc, int c, int j) {
  const int step = dtype == DType::kInt8 ? j / 4 : (j % 16) / 4;
  return 2 * nc + step * 4 * nc + 4 * c + j % 4;
}

// One column group (nc <= 16 row-major rows at src) into its packed bytes at dst.
void pack_group(std::uint8_t* dst, const std::uint8_t* src, DType dtype, int nc, int k) {
  const std::int64_t bb = dtype_bytes_x32(dtype), rb = quant_row_bytes(dtype, k);
  for (int b = 0; b < k / kQuantBlock; ++b) {
    std::uint8_t* chunk = dst + b * nc * bb;
    for (int c = 0; c < nc; ++c) {
      const std::uint8_t* blk = src + c * rb + b * bb;
      std::memcpy(chunk + 2 * c, blk, 2);  // the fp16 scale
      if (dtype == DType::kInt8) {
        // q + 128: the vpdpbusd operand is unsigned (the kernel subtracts 128 * sum(x)).
        for (int j = 0; j < kQuantBlock; ++j)
          chunk[value_byte(dtype, nc, c, j)] = std::uint8_t(blk[2 + j] ^ 0x80u);
      } else {
        // The canonical bytes as they are: byte i holds q[i] + 8 and q[i + 16] + 8.
        for (int i = 0; i < 16; ++i) chunk[value_byte(dtype, nc, c, i)] = blk[2 + i];
      }
    }
  }
}

}  // namespace

void quant_pack_reference(void* dst, const void* src, DType dtype, std::int64_t n, int k) {
  check_quant(dtype, k);
  const auto* in = static_cast<const std::uint8_t*>(src);
  auto* out = static_cast<std::uint8_t*>(dst);
  const std::int64_t ng = (n + kQuantPanelCols - 1) / kQuantPanelCols;
  for (std::int64_t g = 0; g < ng; ++g)
    pack_group(out + group_offset(dtype, k, g), in + group_offset(dtype, k, g), dtype,
               group_cols(n, g), k);
}

void quantize_packed(void* dst, const float* src, DType dtype, std::int64_t n, int k) {
  check_quant(dtype, k);
  const std::int64_t ng = (n + kQuantPanelCols - 1) / kQuantPanelCols;
  const std::int64_t rb = quant_row_bytes(dtype, k);
  auto* out = static_cast<std::uint8_t*>(dst);
  // Each group's rows quantised into a small row-major buffer, then packed: no second copy of
  // the matrix.
#pragma omp parallel if (n * k > 65536)
  {
    std::vector<std::uint8_t> rows(std::size_t(kQuantPanelCols * rb));
#pragma omp for schedule(static)
    for (std::int64_t g = 0; g < ng; ++g) {
      const int nc = group_cols(n, g);
      quantize_rows_reference(rows.data(), src + g * kQuantPanelCols * k, dtype, nc, k);
      pack_group(out + group_offset(dtype, k, g), rows.data(), dtype, nc, k);
    }
  }
}

void unpack_packed_row(std::int8_t* q, std::uint16_t* d, const void* w, DType dtype,
                       std::int64_t n, int k, std::int64_t row) {
  check_quant(dtype, k);
  LLMBENCH_CHECK(row >= 0 && row < n, "a row of the matrix");
  const std::int64_t g = row / kQuantPanelCols;
  const int nc = group_cols(n, g), c = int(row % kQuantPanelCols);
  const std::int64_t bb = dtype_bytes_x32(dtype);
  const auto* group = static_cast<const std::uint8_t*>(w) + group_offset(dtype, k, g);
  for (int b = 0; b < k / kQuantBlock; ++b) {
    const std::uint8_t* chunk = group + b * nc * bb;
    std::memcpy(&d[b], chunk + 2 * c, 2);
    std::int8_t* o = q + b * kQuantBlock;
    if (dtype == DType::kInt8) {
      for (int j = 0; j < kQuantBlock; ++j)
        o[j] = std::int8_t(int(chunk[value_byte(dtype, nc, c, j)]) - 128);
    } else {
      for (int i = 0; i < 16; ++i) {
        const std::uint8_t v = chunk[value_byte(dtype, nc, c, i)];
        o[i] = std::int8_t(int(v & 0x0F) - 8);
        o[i + 16] = std::int8_t(int(v >> 4) - 8);
      }
    }
  }
}

void dequantize_packed_row(float* dst, const void* w, DType dtype, std::int64_t n, int k,
                           std::int64_t row) {
  std::vector<std::int8_t> q(static_cast<std::size_t>(k));
  std::vector<std::uint16_t> d(static_cast<std::size_t>(k / kQuantBlock));
  unpack_packed_row(q.data(), d.data(), w, dtype, n, k, row);
  for (int j = 0; j < k; ++j)
    dst[j] = float(q[std::size_t(j)]) * fp16_to_fp32(d[std::size_t(j / kQuantBlock)]);
}

}  // namespace llmbench::cpu
