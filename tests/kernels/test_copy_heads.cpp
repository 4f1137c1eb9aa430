// Strided head copy: token-major -> head-major puts every element where the layout says, the
// round trip restores the input exactly, and nothing outside the copied heads is touched.
#include <gtest/gtest.h>

#include <vector>

#include "kernels/cpu/copy_heads.h"
#include "tests/kernels/check.h"

namespace llmbench::cpu {
namespace {

// Value of element (b, t, h, i): distinct for every element of the shapes below.
float tag(int b, int t, int h, int i) { return float(1000 * b + 100 * t + 10 * h + i); }

TEST(CopyHeads, TokenMajorRowsToHeadMajor) {
  // 2 sequences, 3 tokens, 2 heads of 4; source rows padded to stride 11 (like q inside a
  // fused qkv row).
  const int B = 2, T = 3, H = 2, D = 4, stride = 11;
  std::vector<float> in(std::size_t(B) * T * stride, -1.0f);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t)
      for (int h = 0; h < H; ++h)
        for (int i = 0; i < D; ++i) in[(b * T + t) * stride + h * D + i] = tag(b, t, h, i);
  std::vector<float> out(std::size_t(B) * H * T * D, -5.0f);
  copy_heads(out.data(), head_major(H, T, D), in.data(), token_major(T, stride, D), B, T, H, D);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int t = 0; t < T; ++t)
        for (int i = 0; i < D; ++i)
          ASSERT_EQ(out[((b * H + h) * T + t) * D + i], tag(b, t, h, i)) << b << h << t << i;
}

TEST(CopyHeads, RoundTripIsExactAndLeavesPaddingAlone) {
  // Big enough to run in parallel; odd sizes.
  const int B = 3, T = 19, H = 7, D = 64, stride = H * D + 5;
  const std::vector<float> rows = test::random_floats(std::size_t(B) * T * stride, 31);
  std::vector<float> hm(std::size_t(B) * H * T * D, 0.0f);
  copy_heads(hm.data(), head_major(H, T, D), rows.data(), token_major(T, stride, D), B, T, H, D);
  std::vector<float> back(rows.size(), -7.0f);
  copy_heads(back.data(), token_major(T, stride, D), hm.data(), head_major(H, T, D), B, T, H, D);
  for (std::size_t r = 0; r < std::size_t(B) * T; ++r)
    for (int c = 0; c < stride; ++c) {
      const float expected = c < H * D ? rows[r * stride + c] : -7.0f;
      ASSERT_EQ(back[r * stride + c], expected) << "row " << r << " col " << c;
    }
}

TEST(CopyHeads, WritesAtAPositionOffsetOfALongerCache) {
  // The KV write into a head-major cache [B, H, L, D]: new tokens land at positions P.. only.
  const int B = 2, T = 2, H = 3, D = 2, L = 6, P = 3;
  std::vector<float> src(std::size_t(B) * T * H * D);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t)
      for (int h = 0; h < H; ++h)
        for (int i = 0; i < D; ++i) src[((b * T + t) * H + h) * D + i] = tag(b, t, h, i);
  std::vector<float> cache(std::size_t(B) * H * L * D, 0.5f);
  const HeadStrides to = head_major(H, L, D);
  copy_heads(cache.data() + P * to.seq, to, src.data(), token_major(T, H * D, D), B, T, H, D);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int pos = 0; pos < L; ++pos)
        for (int i = 0; i < D; ++i) {
          const bool written = pos >= P && pos < P + T;
          const float expected = written ? tag(b, pos - P, h, i) : 0.5f;
          ASSERT_EQ(cache[((b * H + h) * L + pos) * D + i], expected) << b << h << pos << i;
        }
}

}  // namespace
}  // namespace llmbench::cpu
