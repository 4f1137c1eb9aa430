// Per-row argmax (greedy sampling): the plain CPU reference (the spec) and the version the
// engine runs.
#pragma once
#include <cstdint>

namespace llmbench::cpu {

// out[r] = argmax_j x[r, j] over x: [n_rows, n_cols]; ties go to the lowest index.
// A row containing NaN yields the index of its first NaN (so NaN is never silently ignored).
// An empty row (n_cols == 0) yields 0.
void argmax_rows_reference(int32_t* out, const float* x, int n_rows, int n_cols);

// The same indices, what the engine runs: on AVX-512 CPUs (cpu_isa.h) 16 columns at a time
// (argmax_avx512.h), on CPUs with AVX2 but not that path 8 at a time (argmax_avx2.h),
// elsewhere argmax_rows_reference itself. tests/kernels/test_argmax.cpp checks each against
// the same cases and each other on random rows with planted ties, NaNs,
// infinities and signed zeros.
void argmax_rows(int32_t* out, const float* x, int n_rows, int n_cols);

}  // namespace llmbench::cpu
