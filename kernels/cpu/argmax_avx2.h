// AVX2 argmax (see argmax.h): reached only through cpu::argmax_rows's dispatch, on a CPU with
// AVX2 but without the AVX-512 path (argmax_avx512.h is the version it follows).
#pragma once
#include <cstdint>

namespace llmbench::cpu::avx2 {

// argmax_rows_reference's indices, 8 columns at a time, by argmax_avx512.h's rule: each lane
// keeps the largest value it has seen and the first column that had it (replaced only on
// strictly greater); a NaN in a block ends the row with the first NaN of that block; at the end
// the index is the lowest column among the lanes holding the row's maximum (IEEE ==, so -0 and
// +0 tie as in the reference). A row's last n_cols % 8 columns are compared one by one, in
// order, after the lanes are reduced.
void argmax_rows_f32(int32_t* out, const float* x, int n_rows, int n_cols);

}  // namespace llmbench::cpu::avx2
