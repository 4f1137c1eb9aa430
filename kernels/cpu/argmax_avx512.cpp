// AVX-512 argmax (see argmax_avx512.h). Compiled with AVX-512 flags (kernels/CMakeLists.txt);
// nothing here runs unless cpu_isa() found them.
#include "kernels/cpu/argmax_avx512.h"

#include "kernels/cpu/avx512_intrinsics.h"

#include <climits>
#include <cstddef>
#include <limits>

#include "kernels/cpu/argmax_rows_loop.h"

namespace llmbench::cpu::LLMBENCH_AVX512_NS {

namespace {

// One lane set's running maximum: per lane the largest value seen and its first column.
struct Lanes {
  __m512 best = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  __m512i col = _mm512_setzero_si512();  // a lane that never beats -inf keeps column 0

  // Strictly greater replaces, as in the reference (`in`: the lanes that hold columns).
  void update(__m512 v, __m512i cols, __mmask16 in) {
    const __mmask16 gt = _mm512_mask_cmp_ps_mask(in, v, best, _CMP_GT_OQ);
    best = _mm512_mask_mov_ps(best, gt, v);
    col = _mm512_mask_mov_epi32(col, gt, cols);
  }
  // Lane-wise merge with another set over other columns: the larger value, on a tie the
  // lower column.
  void merge(const Lanes& o) {
    const __mmask16 gt = _mm512_cmp_ps_mask(o.best, best, _CMP_GT_OQ);
    const __mmask16 eq = _mm512_cmp_ps_mask(o.best, best, _CMP_EQ_OQ);
    const __mmask16 lower = _mm512_cmp_epi32_mask(o.col, col, _MM_CMPINT_LT);
    const __mmask16 take = gt | (eq & lower);
    best = _mm512_mask_mov_ps(best, take, o.best);
    col = _mm512_mask_mov_epi32(col, take, o.col);
  }
};

int32_t argmax_row(const float* row, int n) {
  // Two lane sets over alternate blocks of 16, so two compare-and-select chains run side by
  // side; merged before the tail.
  Lanes a, b;
  __m512i col = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i sixteen = _mm512_set1_epi32(16);
  int j = 0;
  for (; j + 32 <= n; j += 32) {
    const __m512 v0 = _mm512_loadu_ps(row + j), v1 = _mm512_loadu_ps(row + j + 16);
    const __mmask16 nan0 = _mm512_cmp_ps_mask(v0, v0, _CMP_UNORD_Q);
    const __mmask16 nan1 = _mm512_cmp_ps_mask(v1, v1, _CMP_UNORD_Q);
    if (nan0 | nan1) return j + (nan0 ? __builtin_ctz(nan0) : 16 + __builtin_ctz(nan1));
    a.update(v0, col, 0xFFFF);
    col = _mm512_add_epi32(col, sixteen);
    b.update(v1, col, 0xFFFF);
    col = _mm512_add_epi32(col, sixteen);
  }
  a.merge(b);
  for (; j < n; j += 16) {
    const int rem = n - j;
    const __mmask16 in = rem >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << rem) - 1u);
    const __m512 v = _mm512_maskz_loadu_ps(in, row + j);
    const __mmask16 nan = _mm512_mask_cmp_ps_mask(in, v, v, _CMP_UNORD_Q);
    if (nan) return j + __builtin_ctz(nan);
    a.update(v, col, in);
    col = _mm512_add_epi32(col, sixteen);
  }
  // Column 0 holds -inf or more in lane 0 whenever n > 0, so the maximum is reached by a lane
  // with a real column; lanes left at -inf carry column 0, the right answer when the maximum
  // is -inf (the reference keeps row[0] then).
  const float max = _mm512_reduce_max_ps(a.best);
  const __mmask16 at_max = _mm512_cmp_ps_mask(a.best, _mm512_set1_ps(max), _CMP_EQ_OQ);
  return _mm512_reduce_min_epi32(_mm512_mask_mov_epi32(_mm512_set1_epi32(INT_MAX), at_max,
                                                        a.col));
}

}  // namespace

void argmax_rows_f32(int32_t* out, const float* x, int n_rows, int n_cols) {
  // A lambda, not argmax_row's pointer: its type is this file's own, so the loop instantiated
  // here (with this file's instruction-set flags) is never merged with another file's.
  detail::argmax_rows_loop([](const float* row, int n) { return argmax_row(row, n); }, out, x,
                           n_rows, n_cols);
}

}  // namespace llmbench::cpu::LLMBENCH_AVX512_NS
