// Quantised weight matrices: the int8 and int4 block formats (--dtype int8|int4), their plain
// references (the spec) and the fast versions. Two products of x [m, k] fp32 with a quantised
// matrix: the weight-only one (matmul_quant: x stays fp32; row-major blocks) and the one the
// engine's CPU backend runs (matmul_quant_vnni: x's rows quantised to int8 blocks, integer dot
// products; the same blocks packed in column panels, below). Norms and the KV cache stay fp32.
//
// Layout (docs/metrics.md, "Quantised weights"), the canonical form every reference reads and
// the packed form is defined from: a matrix [n, k] is row-major, each row k / 32
// blocks of 32 consecutive weights along k (k must be a multiple of kQuantBlock), blocks
// back to back with no padding. A block is its scale d (fp16 bits, little-endian) followed by
// its values:
//   int8  34 bytes: d, then q[0..31] as int8 in [-127, 127];   w[j] = q[j] * d
//   int4  18 bytes: d, then 16 bytes; byte i holds q[i] + 8 in its low nibble and q[i + 16] + 8
//         in its high nibble, q in [-7, 7] (symmetric: no minimum);   w[j] = q[j] * d
// Quantisation (round to nearest even throughout): d = fp16(max|x| / Q) with Q = 127 (int8) or
// 7 (int4); q = clamp(rint(x / fp32(d)), -Q, Q) (q = 0 when d is 0). q * d is exact in fp32, so
// a dequantised weight is an fp32 value with no further rounding.
// Which product the engine runs, and why (measured): docs/metrics.md, "Quantised weights".
// Deliberately not: asymmetric (min/offset) blocks, k-quants' super-blocks.
#pragma once
#include <cstdint>

#include "kernels/common/dtype.h"

namespace llmbench::cpu {

// Bytes of one row of k weights of the block type `dtype` (kInt8 or kInt4; k % 32 == 0).
std::int64_t quant_row_bytes(DType dtype, int k);

// ---- the spec ----
// dst: n_rows rows of quant_row_bytes(dtype, k) bytes each, from src [n_rows, k] fp32.
void quantize_rows_reference(void* dst, const float* src, DType dtype, std::int64_t n_rows, int k);
// dst [n_rows, k] fp32 = q * d of every weight of src.
void dequantize_rows_reference(float* dst, const void* src, DType dtype, std::int64_t n_rows,
                               int k);
// sum_j x[j] * (q[j] * d) over one quantised row, accumulated in double.
double quant_dot_reference(const void* w_row, const float* x, DType dtype, int k);
// out[m, n] = x[m, k] . dequantise(w)[n, k]^T (x rows lda apart, out contiguous), in double.
void matmul_quant_reference(float* out, const float* x, const void* w, DType dtype, int m, int n,
                            int k, int lda);

// ---- fast versions: quantisation, and the weight-only product ----
// The same bytes as the references (rows in parallel).
void quantize_rows(void* dst, const float* src, DType dtype, std::int64_t n_rows, int k);
void dequantize_rows(float* dst, const void* src, DType dtype, std::int64_t n_rows, int k);

// matmul_quant_reference's product with fp32 accumulation (benchmarked and tested; the engine
// runs matmul_quant_vnni), chosen by row count:
//   m <= kQuantDecodeRowsMax (decode): each weight row's blocks read once and widened to fp32
//     in registers (AVX-512, cpu_isa.h) or into an L1 row buffer (portable), then multiplied
//     into all m rows of x with FMAs. Each output is the same fixed-order fp32 sum whatever m
//     is, so row i of the result does not depend on m.
//   larger m (prefill): kQuantTileRows weight rows at a time dequantised to fp32 and
//     multiplied by matmul() (kernels/cpu/matmul.h: the AVX-512 streaming kernel or sgemm).
void matmul_quant(float* out, const float* x, const void* w, DType dtype, int m, int n, int k,
                  int lda);

inline constexpr int kQuantDecodeRowsMax = 32;
inline constexpr int kQuantTileRows = 256;

// ---- the packed layout the int8-activation product reads (what the engine stores) ----
// The same blocks regrouped so that one 64-byte vector holds 4 consecutive k values of each of
// 16 output columns, the operand shape of vpdpbusd: a matrix [n, k] is stored as column groups
// of kQuantPanelCols weight rows (output columns; the last group has n % 16 when n is not a
// multiple of 16), group g from byte 16 g * quant_row_bytes(dtype, k). A group of nc columns
// holds k / 32 chunks back to back, chunk b (block b of each of its columns) of nc * 34 (int8)
// or nc * 18 (int4) bytes:
//   nc fp16 scales d (column order), then the values, with s = (j % 16) / 4 for int4:
//   int8  byte 2 nc + (j / 4) * 4 nc + 4 c + j % 4 = q[j] + 128 (unsigned)
//   int4  byte 2 nc + s * 4 nc + 4 c + j % 4 holds q[j] + 8 in its low nibble (j < 16) and
//         q[j + 16] + 8 in its high nibble (so each byte is the canonical block's byte j % 16)
// of column c's block b. Exactly quant_row_bytes(dtype, k) bytes per row, like the row-major
// form: no padding.
inline constexpr int kQuantPanelCols = 16;
// dst (packed) = src (row-major blocks, n rows of k). The spec of the packed layout.
void quant_pack_reference(void* dst, const void* src, DType dtype, std::int64_t n, int k);
// dst (packed) = quant_pack_reference(quantize_rows_reference(src)), column groups in parallel.
void quantize_packed(void* dst, const float* src, DType dtype, std::int64_t n, int k);
// q [k] = the integer values and d [k / 32] the fp16 scale bits of row `row` (an output
// column) of a packed matrix of n rows.
void unpack_packed_row(std::int8_t* q, std::uint16_t* d, const void* w, DType dtype,
                       std::int64_t n, int k, std::int64_t row);
// dst [k] fp32 = the dequantised weight row `row` of a packed matrix of n rows: the same
// values as dequantize_rows of the row-major form.
void dequantize_packed_row(float* dst, const void* w, DType dtype, std::int64_t n, int k,
                           std::int64_t row);

// ---- the product with int8 activations (AVX-512 VNNI vpdpbusd): what the engine runs ----
// Activations quantised per row in blocks of 32 along k (symmetric, one fp32 scale a block):
//   dx = max|x| / 127 (fp32);  qx = clamp(rint(x / dx), -127, 127), round to nearest even
//   (qx = 0 when dx is 0). q: [m, k] int8 contiguous; d: [m, k / 32] fp32.
void quantize_activations(std::int8_t* q, float* d, const float* x, int m, int k, int lda);
// The spec of the VNNI product (w row-major): x rows quantised as above, then per weight block
// the exact integer dot product I_b = sum_j qw[j] * qx[j], and
//   out[i, j] = sum_b dw_b * dx_b * I_b   (in double, rounded once to fp32).
// It differs from matmul_quant_reference by x's rounding: at most sum_b dx_b / 2 *
// sum_j |w_b[j]| in absolute value.
void matmul_quant_vnni_reference(float* out, const float* x, const void* w, DType dtype, int m,
                                 int n, int k, int lda);
// matmul_quant_vnni_reference's product with w in the packed layout (quantize_packed), in fp32:
// per output, over blocks b in order from acc = 0,
//   acc = fma(float(I_b) * dx_b, dw_b, acc)   (float(I_b) exact; one fp32 multiply; one FMA)
// so each output is the same fp32 value whatever m is (row i never depends on m), and the
// AVX-512 VNNI kernel (cpu_isa() with avx512_vnni; quant_vnni_avx512.h) and the plain loops
// (without it) give identical bits.
void matmul_quant_vnni(float* out, const float* x, const void* w, DType dtype, int m, int n,
                       int k, int lda);

// out[t, :] = the dequantised row tokens[t] of the packed table [vocab, dim] (the embedding of
// a quantised table: the same values the LM head multiplies by when embeddings are tied).
void embedding_quant(float* out, const void* table, DType dtype, const std::int32_t* tokens,
                     int n_tokens, int vocab, int dim);

}  // namespace llmbench::cpu
