// RoPE on q and k + the KV-cache write of k and v (see rope_kv_write.h).
// Deliberately not: a cos/sin table cached across calls (as rope.cpp), or paged caches (those
// variants keep the unfused ops).
#include "kernels/cpu/rope_kv_write.h"

#include <cmath>
#include <cstddef>
#include <cstring>
#include <vector>

#include "kernels/cpu/rope.h"

namespace llmbench::cpu {

namespace {

// Copies row r's k and v (already rotated) to their cache row, positions[r] of sequence b.
void write_row(const float* row, float* k_cache, float* v_cache, const int32_t* positions, int r,
               const RopeKvShape& s) {
  const std::size_t kv = static_cast<std::size_t>(s.kv_dim());
  const std::size_t at =
      (static_cast<std::size_t>(r / s.n_new) * s.cache_seq + positions[r]) * kv;
  std::memcpy(k_cache + at, row + s.q_dim(), kv * sizeof(float));
  std::memcpy(v_cache + at, row + s.q_dim() + kv, kv * sizeof(float));
}

}  // namespace

void rope_kv_write_reference(float* qkv, float* k_cache, float* v_cache,
                             const int32_t* positions, const RopeKvShape& s) {
  const int stride = s.qkv_dim();
  rope(qkv, s.rows(), stride, s.n_heads, s.head_dim, positions, s.theta);
  rope(qkv + s.q_dim(), s.rows(), stride, s.n_kv_heads, s.head_dim, positions, s.theta);
  for (int r = 0; r < s.rows(); ++r)
    write_row(qkv + static_cast<std::size_t>(r) * stride, k_cache, v_cache, positions, r, s);
}

void rope_kv_write(float* qkv, float* k_cache, float* v_cache, const int32_t* positions,
                   const RopeKvShape& s) {
  const int half = s.head_dim / 2, stride = s.qkv_dim();
  const int heads = s.n_heads + s.n_kv_heads;  // q's heads, then k's: contiguous in the row
  std::vector<double> inv_freq(half);  // as rope.cpp: theta^(-2i/head_dim) in double
  for (int i = 0; i < half; ++i)
    inv_freq[i] = std::pow(static_cast<double>(s.theta), -2.0 * i / s.head_dim);

#pragma omp parallel if (static_cast<long>(s.rows()) * stride > (1 << 15))
  {
    std::vector<float> cos_i(half), sin_i(half);  // one table per thread, reused for each row
#pragma omp for
    for (int r = 0; r < s.rows(); ++r) {
      for (int i = 0; i < half; ++i) {
        const double angle = static_cast<double>(positions[r]) * inv_freq[i];
        cos_i[i] = static_cast<float>(std::cos(angle));
        sin_i[i] = static_cast<float>(std::sin(angle));
      }
      float* row = qkv + static_cast<std::size_t>(r) * stride;
      for (int h = 0; h < heads; ++h) {
        float* lo = row + static_cast<std::size_t>(h) * s.head_dim;  // first halves of the pairs
        float* hi = lo + half;                                       // second halves
#pragma omp simd
        for (int i = 0; i < half; ++i) {
          const float a = lo[i], b = hi[i];
          lo[i] = a * cos_i[i] - b * sin_i[i];
          hi[i] = b * cos_i[i] + a * sin_i[i];
        }
      }
      write_row(row, k_cache, v_cache, positions, r, s);
    }
  }
}

}  // namespace llmbench::cpu
