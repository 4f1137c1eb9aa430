// Rotary position embedding, Hugging Face rotate_half layout: the plain CPU reference.
// Per row, cos/sin of each pair's angle are computed once (in double, rounded to float) into a
// small per-thread table, then applied to every head with a contiguous, vectorisable loop.
// Deliberately not: a cached cos/sin table across calls, or the interleaved (GPT-J) layout.
#include "kernels/cpu/rope.h"

#include <cmath>
#include <cstddef>
#include <vector>

namespace llmbench::cpu {

void rope(float* x, int n_rows, int row_stride, int n_heads, int head_dim, const int32_t* positions,
          float theta) {
  const int half = head_dim / 2;
  // theta^(-2i/head_dim): the frequency of pair i, the same for every row.
  std::vector<double> inv_freq(half);
  for (int i = 0; i < half; ++i) {
    inv_freq[i] = std::pow(static_cast<double>(theta), -2.0 * i / head_dim);
  }

#pragma omp parallel if (static_cast<long>(n_rows) * n_heads * head_dim > (1 << 15))
  {
    std::vector<float> cos_i(half), sin_i(half);  // one table per thread, reused for each row
#pragma omp for
    for (int r = 0; r < n_rows; ++r) {
      for (int i = 0; i < half; ++i) {
        const double angle = static_cast<double>(positions[r]) * inv_freq[i];
        cos_i[i] = static_cast<float>(std::cos(angle));
        sin_i[i] = static_cast<float>(std::sin(angle));
      }
      float* row = x + static_cast<std::size_t>(r) * row_stride;
      for (int h = 0; h < n_heads; ++h) {
        float* lo = row + static_cast<std::size_t>(h) * head_dim;  // first halves of the pairs
        float* hi = lo + half;                                     // second halves
#pragma omp simd
        for (int i = 0; i < half; ++i) {
          const float a = lo[i], b = hi[i];
          lo[i] = a * cos_i[i] - b * sin_i[i];
          hi[i] = b * cos_i[i] + a * sin_i[i];
        }
      }
    }
  }
}

}  // namespace llmbench::cpu
