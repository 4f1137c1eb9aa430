// The steps of one RoPE row, shared by rope.cpp and rope_kv_write.cpp so that the fused op's
// rotation is the reference's, bit for bit: the pairs' inverse frequencies, one row's cos/sin
// table, and the rotation of that row's heads (rotate_half layout; the spec is rope.h).
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace llmbench::cpu::detail {

// theta^(-2i/head_dim) for pair i < head_dim/2, in double: the same for every row.
inline std::vector<double> rope_inv_freq(int head_dim, float theta) {
  std::vector<double> inv_freq(head_dim / 2);
  for (int i = 0; i < head_dim / 2; ++i)
    inv_freq[i] = std::pow(static_cast<double>(theta), -2.0 * i / head_dim);
  return inv_freq;
}

// cos and sin of position * inv_freq[i], computed in double and rounded to float.
inline void rope_table(int32_t position, const std::vector<double>& inv_freq, float* cos_i,
                       float* sin_i) {
  for (std::size_t i = 0; i < inv_freq.size(); ++i) {
    const double angle = static_cast<double>(position) * inv_freq[i];
    cos_i[i] = static_cast<float>(std::cos(angle));
    sin_i[i] = static_cast<float>(std::sin(angle));
  }
}

// Rotates n_heads contiguous heads of head_dim values starting at row, in place.
inline void rope_rotate_heads(float* row, int n_heads, int head_dim, const float* cos_i,
                              const float* sin_i) {
  const int half = head_dim / 2;
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

}  // namespace llmbench::cpu::detail
