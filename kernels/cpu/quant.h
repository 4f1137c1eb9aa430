// Quantised weight matrices: the int8 and int4 block formats (--dtype int8|int4), their plain
// references (the spec) and the fast versions. Two products of x [m, k] fp32 with a quantised
// matrix: the weight-only one (matmul_quant: x stays fp32) and the one the engine's CPU backend
// runs (matmul_quant_vnni: x's rows quantised to int8 blocks, integer dot products). Norms and
// the KV cache stay fp32.
//
// Layout (docs/metrics.md, "Quantised weights"): a matrix [n, k] is row-major, each row k / 32
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

// ---- the product with int8 activations (AVX-512 VNNI vpdpbusd): what the engine runs ----
// Activations quantised per row in blocks of 32 along k (symmetric, one fp32 scale a block):
//   dx = max|x| / 127 (fp32);  qx = clamp(rint(x / dx), -127, 127), round to nearest even
//   (qx = 0 when dx is 0). q: [m, k] int8 contiguous; d: [m, k / 32] fp32.
void quantize_activations(std::int8_t* q, float* d, const float* x, int m, int k, int lda);
// The spec of the VNNI product: x rows quantised as above, then per weight block the exact
// integer dot product I_b = sum_j qw[j] * qx[j], and
//   out[i, j] = sum_b dw_b * dx_b * I_b   (in double, rounded once to fp32).
// It differs from matmul_quant_reference by x's rounding: at most sum_b dx_b / 2 *
// sum_j |w_b[j]| in absolute value.
void matmul_quant_vnni_reference(float* out, const float* x, const void* w, DType dtype, int m,
                                 int n, int k, int lda);
// matmul_quant_vnni_reference's product with fp32 accumulation, any m (x in blocks of 64 rows):
// AVX-512 VNNI where cpu_isa() has it (quant_vnni_avx512.h), else plain loops (integer block
// dot, fp32 sum). Row i of the result does not depend on m.
void matmul_quant_vnni(float* out, const float* x, const void* w, DType dtype, int m, int n,
                       int k, int lda);
inline constexpr int kQuantTileRows = 256;

// out[t, :] = the dequantised row tokens[t] of table [vocab, dim] (the embedding of a
// quantised table: the same values the LM head multiplies by when embeddings are tied).
void embedding_quant(float* out, const void* table, DType dtype, const std::int32_t* tokens,
                     int n_tokens, int dim);

}  // namespace llmbench::cpu
