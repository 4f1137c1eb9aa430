// Per-row argmax (greedy sampling): the plain CPU reference.
#pragma once
#include <cstdint>

namespace llmbench::cpu {

// out[r] = argmax_j x[r, j] over x: [n_rows, n_cols]; ties go to the lowest index.
// A row containing NaN yields the index of its first NaN (so NaN is never silently ignored).
void argmax_rows(int32_t* out, const float* x, int n_rows, int n_cols);

}  // namespace llmbench::cpu
