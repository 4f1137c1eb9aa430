// AVX-512 argmax (see argmax.h): reached only through cpu::argmax_rows's dispatch.
#pragma once
#include "kernels/cpu/avx512_namespace.h"
#include <cstdint>

namespace llmbench::cpu::LLMBENCH_AVX512_NS {

// argmax_rows_reference's indices, 16 columns at a time. Each lane keeps the largest value it
// has seen and the first column that had it (replaced only on strictly greater, as the
// reference does); a NaN in a block ends the row with the first NaN of that block (no earlier
// block had one). At the end the row's maximum is the lanes' maximum and its index the lowest
// column among the lanes that hold a value equal to it, which is the reference's first column
// attaining the maximum (equal here is IEEE ==, so -0 and +0 tie as they do there).
void argmax_rows_f32(int32_t* out, const float* x, int n_rows, int n_cols);

}  // namespace llmbench::cpu::LLMBENCH_AVX512_NS
