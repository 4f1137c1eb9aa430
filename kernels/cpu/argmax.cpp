// Per-row argmax (greedy sampling): the plain CPU reference.
// Deliberately not: top-k/top-p or temperature sampling. Ties go to the lowest index (strict >),
// and the first NaN of a row wins so a broken forward pass is visible, not silently skipped.
#include "kernels/cpu/argmax.h"

#include <cmath>
#include <cstddef>

namespace llmbench::cpu {

void argmax_rows(int32_t* out, const float* x, int n_rows, int n_cols) {
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

}  // namespace llmbench::cpu
