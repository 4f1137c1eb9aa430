// RoPE on q and k + the KV-cache write of k and v (see rope_kv_write.h).
// Deliberately not: a cos/sin table cached across calls (as rope.cpp), or paged caches (those
// variants keep the unfused ops).
#include "kernels/cpu/rope_kv_write.h"

#include <cstddef>
#include <cstring>
#include <vector>

#include "kernels/cpu/rope.h"
#include "kernels/cpu/rope_rows.h"

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
  const std::vector<double> inv_freq = detail::rope_inv_freq(s.head_dim, s.theta);

#pragma omp parallel if (static_cast<long>(s.rows()) * stride > (1 << 15))
  {
    std::vector<float> cos_i(half), sin_i(half);  // one table per thread, reused for each row
#pragma omp for
    for (int r = 0; r < s.rows(); ++r) {
      detail::rope_table(positions[r], inv_freq, cos_i.data(), sin_i.data());
      float* row = qkv + static_cast<std::size_t>(r) * stride;
      detail::rope_rotate_heads(row, heads, s.head_dim, cos_i.data(), sin_i.data());
      write_row(row, k_cache, v_cache, positions, r, s);
    }
  }
}

}  // namespace llmbench::cpu
