// Per-row argmax: plain rows, ties to the lowest index, the first NaN wins, infinities, signed
// zeros; the reference and the AVX-512 and AVX2 kernels on the same cases, and on random rows.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/argmax.h"
#include "kernels/cpu/argmax_avx2.h"
#include "kernels/cpu/argmax_avx512.h"
#include "kernels/cpu/cpu_isa.h"
#include "tests/kernels/avx512_under_test.h"

namespace llmbench::cpu {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

using ArgmaxFn = void (*)(int32_t*, const float*, int, int);

// The implementations under test: the reference, and the AVX-512 and AVX2 kernels where the CPU
// has them.
struct Impl {
  const char* name;
  ArgmaxFn fn;
};

std::vector<Impl> impls() {
  std::vector<Impl> v = {{"reference", &argmax_rows_reference}, {"dispatch", &argmax_rows}};
  if (test::avx512_kernels_run())
    v.push_back({test::avx512_kernels_name(), &LLMBENCH_AVX512_NS::argmax_rows_f32});
  if (__builtin_cpu_supports("avx2")) v.push_back({"avx2", &avx2::argmax_rows_f32});
  return v;
}

// Each implementation's indices for x, which must all agree; returns the reference's.
std::vector<int32_t> argmax_of(const std::vector<float>& x, int n_rows, int n_cols) {
  std::vector<int32_t> want;
  for (const Impl& impl : impls()) {
    std::vector<int32_t> out(n_rows, -1);
    impl.fn(out.data(), x.data(), n_rows, n_cols);
    if (want.empty()) want = out;
    else EXPECT_EQ(out, want) << impl.name << " differs from the reference";
  }
  return want;
}

TEST(ArgmaxRows, PicksTheLargestOfEachRow) {
  const std::vector<float> x = {1,  5,  3,   // row 0 -> 1
                                -4, -9, -2,  // row 1 -> 2 (all negative)
                                7,  0,  6};  // row 2 -> 0
  EXPECT_EQ(argmax_of(x, 3, 3), (std::vector<int32_t>{1, 2, 0}));
}

TEST(ArgmaxRows, TiesGoToTheLowestIndex) {
  const std::vector<float> x = {2, 9, 9, 9,   // -> 1
                                0, 0, 0, 0};  // -> 0
  EXPECT_EQ(argmax_of(x, 2, 4), (std::vector<int32_t>{1, 0}));
}

TEST(ArgmaxRows, TheFirstNanWins) {
  const std::vector<float> x = {1,   kInf, NAN, 3, NAN,   // -> 2, even though an Inf comes first
                                NAN, 5,    6,   7, 8,     // -> 0
                                1,   2,    3,   4, NAN};  // -> 4
  EXPECT_EQ(argmax_of(x, 3, 5), (std::vector<int32_t>{2, 0, 4}));
}

TEST(ArgmaxRows, InfinitiesCompareAsNumbers) {
  const std::vector<float> x = {-kInf, -kInf, -5,     // -> 2
                                -kInf, kInf,  kInf,   // -> 1
                                -kInf, -kInf, -kInf};  // -> 0: every value is the maximum
  EXPECT_EQ(argmax_of(x, 3, 3), (std::vector<int32_t>{2, 1, 0}));
}

TEST(ArgmaxRows, SignedZerosTie) {
  // -0 == +0: the first zero wins whichever sign comes first, in one lane or across lanes.
  std::vector<float> x(2 * 40, -1.0f);
  x[3] = -0.0f;
  x[19] = 0.0f;  // same lane as column 3
  x[40 + 5] = 0.0f;
  x[40 + 6] = -0.0f;
  EXPECT_EQ(argmax_of(x, 2, 40), (std::vector<int32_t>{3, 5}));
}

TEST(ArgmaxRows, EmptyRowsGiveZero) {
  const std::vector<float> x;
  EXPECT_EQ(argmax_of(x, 2, 0), (std::vector<int32_t>{0, 0}));
}

TEST(ArgmaxRows, VocabSizedRows) {
  // Two rows of 32000 with the maximum placed near the end and a tie placed after it.
  const int n_cols = 32000;
  std::vector<float> x(2 * n_cols, 0.0f);
  x[31000] = 3.0f;
  x[31999] = 3.0f;
  x[n_cols + 17] = 1.0f;
  EXPECT_EQ(argmax_of(x, 2, n_cols), (std::vector<int32_t>{31000, 17}));
}

TEST(ArgmaxRows, RandomRowsOfOddWidthsAgreeWithTheReference) {
  // Widths around the 16-lane blocks (and the AVX2 kernel's pairs of 8), values drawn from a small set so ties are frequent, and
  // planted NaNs, infinities and signed zeros; argmax_of compares every implementation.
  std::mt19937 rng(7);
  const float values[] = {-2.0f, -1.0f, -0.0f, 0.0f, 1.0f, 2.0f, kInf, -kInf};
  std::uniform_int_distribution<int> pick(0, 7), rare(0, 199);
  for (int n_cols : {1, 2, 7, 8, 9, 15, 16, 17, 23, 31, 33, 100, 257, 32000}) {
    for (int trial = 0; trial < 20; ++trial) {
      const int n_rows = 1 + trial % 5;
      std::vector<float> x(static_cast<std::size_t>(n_rows) * n_cols);
      for (float& v : x) {
        const int r = rare(rng);
        v = r == 0 ? NAN : r < 20 ? values[pick(rng)] : float(pick(rng)) * 0.25f - 1.0f;
      }
      SCOPED_TRACE("n_cols " + std::to_string(n_cols) + ", trial " + std::to_string(trial));
      argmax_of(x, n_rows, n_cols);
    }
  }
}

}  // namespace
}  // namespace llmbench::cpu
