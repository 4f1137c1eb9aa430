// Rotary position embedding, Hugging Face rotate_half layout: the plain CPU reference.
// Per row, cos/sin of each pair's angle are computed once (in double, rounded to float) into a
// small per-thread table, then applied to every head with a contiguous, vectorisable loop.
// Deliberately not: a cached cos/sin table across calls, or the interleaved (GPT-J) layout.
#include "kernels/cpu/rope.h"

#include <cstddef>
#include <vector>

#include "kernels/cpu/rope_rows.h"

namespace llmbench::cpu {

void rope(float* x, int n_rows, int row_stride, int n_heads, int head_dim, const int32_t* positions,
          float theta) {
  const int half = head_dim / 2;
  const std::vector<double> inv_freq = detail::rope_inv_freq(head_dim, theta);
#pragma omp parallel if (static_cast<long>(n_rows) * n_heads * head_dim > (1 << 15))
  {
    std::vector<float> cos_i(half), sin_i(half);  // one table per thread, reused for each row
#pragma omp for
    for (int r = 0; r < n_rows; ++r) {
      detail::rope_table(positions[r], inv_freq, cos_i.data(), sin_i.data());
      detail::rope_rotate_heads(x + static_cast<std::size_t>(r) * row_stride, n_heads, head_dim,
                                cos_i.data(), sin_i.data());
    }
  }
}

}  // namespace llmbench::cpu
