// The row loop the vector argmax kernels share (argmax_avx512.cpp, argmax_avx2.cpp): what an
// empty row gives and when rows go to threads. Each kernel file instantiates it with its own
// row function, compiled with that file's instruction-set flags. Internal to kernels/cpu; the
// spec is argmax.h.
#pragma once
#include <cstddef>
#include <cstdint>

namespace llmbench::cpu::detail {

// out[r] = row_argmax(row r, n_cols) for each row; an empty row (n_cols <= 0) gives 0.
template <class RowArgmax>
void argmax_rows_loop(RowArgmax row_argmax, int32_t* out, const float* x, int n_rows,
                      int n_cols) {
  if (n_cols <= 0) {
    for (int r = 0; r < n_rows; ++r) out[r] = 0;
    return;
  }
// In parallel from two vocabulary-sized rows (bench_kernels BM_argmax_rows: a row of 32000 is
// a few microseconds, about what a parallel region costs).
#pragma omp parallel for if (n_rows > 1 && static_cast<long>(n_rows) * n_cols > (1 << 16))
  for (int r = 0; r < n_rows; ++r)
    out[r] = row_argmax(x + static_cast<std::size_t>(r) * n_cols, n_cols);
}

}  // namespace llmbench::cpu::detail
