// Small elementwise and copy ops: the plain CPU references.
#pragma once
#include <cstddef>
#include <cstdint>

namespace llmbench::cpu {

// x[i] += y[i] for i in [0, n) (the residual add).
void add_inplace(float* x, const float* y, std::size_t n);

// x[r * stride + i] += bias[i] for r in [0, n_rows), i in [0, n) (qkv bias of Qwen2).
void add_bias_rows(float* x, int n_rows, int stride, const float* bias, int n);

// out[r, :] = x[rows[r], :] for r in [0, n_rows); x and out have `dim` floats per row.
void gather_rows(float* out, const float* x, const int32_t* rows, int n_rows, int dim);

}  // namespace llmbench::cpu
