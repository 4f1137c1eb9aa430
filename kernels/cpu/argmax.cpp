// Per-row argmax (greedy sampling): the plain CPU reference and the dispatch (argmax.h).
// Deliberately not: top-k/top-p or temperature sampling. Ties go to the lowest index (strict >),
// and the first NaN of a row wins so a broken forward pass is visible, not silently skipped.
#include "kernels/cpu/argmax.h"

#include <cmath>
#include <cstddef>

#include "kernels/cpu/argmax_avx2.h"
#include "kernels/cpu/argmax_avx512.h"
#include "kernels/cpu/cpu_isa.h"

namespace llmbench::cpu {

void argmax_rows_reference(int32_t* out, const float* x, int n_rows, int n_cols) {
#pragma omp parallel for if (static_cast<long>(n_rows) * n_cols > (1 << 18))
  for (int r = 0; r < n_rows; ++r) {
    const float* row = x + static_cast<std::size_t>(r) * n_cols;
    int32_t best = 0;
    float best_value = n_cols > 0 ? row[0] : 0.0f;
    for (int j = 0; j < n_cols; ++j) {
      if (std::isnan(row[j])) {
        best = j;
        break;
      }
      if (row[j] > best_value) {  // strict: an equal value later does not replace the first
        best = j;
        best_value = row[j];
      }
    }
    out[r] = best;
  }
}

void argmax_rows(int32_t* out, const float* x, int n_rows, int n_cols) {
  if (cpu_isa().avx512)
    avx512::argmax_rows_f32(out, x, n_rows, n_cols);
  else if (cpu_isa().avx2)
    avx2::argmax_rows_f32(out, x, n_rows, n_cols);
  else
    argmax_rows_reference(out, x, n_rows, n_cols);
}

}  // namespace llmbench::cpu
