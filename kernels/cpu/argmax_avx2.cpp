// AVX2 argmax (see argmax_avx2.h). Compiled with -mavx2 (kernels/CMakeLists.txt); nothing here
// runs unless cpu_isa() found AVX2. Decode's one vocabulary-sized row took 46 us a step on the
// reference loop (tinyllama-1.1b and `small`, 32000 columns: docs/metrics.md, issue 31).
#include "kernels/cpu/argmax_avx2.h"

#include <immintrin.h>

#include <cmath>
#include <cstddef>
#include <limits>

#include "kernels/cpu/argmax_rows_loop.h"

namespace llmbench::cpu::avx2 {

namespace {

constexpr int kLanes = 8;

// One lane set's running maximum: per lane the largest value seen and its first column.
struct Lanes {
  __m256 best = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  __m256i col = _mm256_setzero_si256();  // a lane that never beats -inf keeps column 0

  // Strictly greater replaces, as in the reference.
  void update(__m256 v, __m256i cols) {
    const __m256 gt = _mm256_cmp_ps(v, best, _CMP_GT_OQ);
    best = _mm256_blendv_ps(best, v, gt);
    col = _mm256_castps_si256(
        _mm256_blendv_ps(_mm256_castsi256_ps(col), _mm256_castsi256_ps(cols), gt));
  }

  // Lane-wise merge with another set over other columns: the larger value, on a tie the lower
  // column.
  void merge(const Lanes& o) {
    const __m256 gt = _mm256_cmp_ps(o.best, best, _CMP_GT_OQ);
    const __m256 eq = _mm256_cmp_ps(o.best, best, _CMP_EQ_OQ);
    const __m256 lower = _mm256_castsi256_ps(_mm256_cmpgt_epi32(col, o.col));
    const __m256 take = _mm256_or_ps(gt, _mm256_and_ps(eq, lower));
    best = _mm256_blendv_ps(best, o.best, take);
    col = _mm256_castps_si256(
        _mm256_blendv_ps(_mm256_castsi256_ps(col), _mm256_castsi256_ps(o.col), take));
  }
};

// A bit per NaN lane of v (bit l: lane l).
inline int nan_lanes(__m256 v) { return _mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)); }

int32_t argmax_row(const float* row, int n) {
  // Two lane sets over alternate blocks of 8, so two compare-and-select chains run side by
  // side; merged before the reduction.
  Lanes a, b;
  __m256i col = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i eight = _mm256_set1_epi32(kLanes);
  int j = 0;
  for (; j + 2 * kLanes <= n; j += 2 * kLanes) {
    const __m256 v0 = _mm256_loadu_ps(row + j), v1 = _mm256_loadu_ps(row + j + kLanes);
    const int nan0 = nan_lanes(v0), nan1 = nan_lanes(v1);
    if (nan0 | nan1)
      return j + (nan0 ? __builtin_ctz(unsigned(nan0)) : kLanes + __builtin_ctz(unsigned(nan1)));
    a.update(v0, col);
    col = _mm256_add_epi32(col, eight);
    b.update(v1, col);
    col = _mm256_add_epi32(col, eight);
  }
  a.merge(b);
  // Lane 0 holds column 0 (>= -inf) whenever a block ran, so the lanes' maximum is reached by
  // a lane with a real column; lanes left at -inf carry column 0, the reference's answer when
  // the maximum is -inf.
  alignas(32) float best[kLanes];
  alignas(32) std::int32_t cols[kLanes];
  _mm256_store_ps(best, a.best);
  _mm256_store_si256(reinterpret_cast<__m256i*>(cols), a.col);
  float best_value = j > 0 ? best[0] : row[0];
  std::int32_t best_col = j > 0 ? cols[0] : 0;
  for (int l = 1; l < kLanes && j > 0; ++l)
    if (best[l] > best_value || (best[l] == best_value && cols[l] < best_col))
      best_value = best[l], best_col = cols[l];
  // The tail, in column order after every block: strictly greater replaces, a NaN wins.
  for (; j < n; ++j) {
    if (std::isnan(row[j])) return j;
    if (row[j] > best_value) best_value = row[j], best_col = j;
  }
  return best_col;
}

}  // namespace

void argmax_rows_f32(int32_t* out, const float* x, int n_rows, int n_cols) {
  // A lambda, not argmax_row's pointer: its type is this file's own, so the loop instantiated
  // here (with this file's instruction-set flags) is never merged with another file's.
  detail::argmax_rows_loop([](const float* row, int n) { return argmax_row(row, n); }, out, x,
                           n_rows, n_cols);
}

}  // namespace llmbench::cpu::avx2
