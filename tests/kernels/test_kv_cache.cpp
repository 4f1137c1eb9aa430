// KV cache write: rows land at [b, past_len + t], strided source rows, other positions intact.
#include <gtest/gtest.h>

#include <vector>

#include "kernels/cpu/kv_cache.h"

namespace llmbench::cpu {
namespace {

TEST(KvCacheWrite, WritesEachSequenceAfterItsPast) {
  // batch 2, cache_seq 4, kv_dim 2, past_len 1, n_new 2. Source rows have stride 3, like a
  // padded qkv row whose k part is its first 2 floats: row (b * 2 + t) holds
  // [100b + 10t, 100b + 10t + 1, -1].
  const int batch = 2, n_new = 2, past_len = 1, cache_seq = 4, kv_dim = 2, src_stride = 3;
  std::vector<float> src;
  for (int b = 0; b < batch; ++b) {
    for (int t = 0; t < n_new; ++t)
      src.insert(src.end(), {100.0f * b + 10 * t, 100.0f * b + 10 * t + 1, -1});
  }
  std::vector<float> cache(batch * cache_seq * kv_dim, 5.0f);
  kv_cache_write(cache.data(), src.data(), src_stride, batch, n_new, past_len, cache_seq, kv_dim);
  EXPECT_EQ(cache, (std::vector<float>{5, 5, 0, 1, 10, 11, 5, 5,           // sequence 0
                                       5, 5, 100, 101, 110, 111, 5, 5}));  // sequence 1
}

TEST(KvCacheWrite, DecodeStepFillsTheLastPosition) {
  const int batch = 3, cache_seq = 5, kv_dim = 4;
  std::vector<float> src(batch * kv_dim);
  for (int i = 0; i < batch * kv_dim; ++i) src[i] = float(i);
  std::vector<float> cache(batch * cache_seq * kv_dim, 0.0f);
  kv_cache_write(cache.data(), src.data(), kv_dim, batch, 1, cache_seq - 1, cache_seq, kv_dim);
  for (int b = 0; b < batch; ++b) {
    for (int pos = 0; pos < cache_seq; ++pos) {
      for (int i = 0; i < kv_dim; ++i) {
        const float expected = pos == cache_seq - 1 ? float(b * kv_dim + i) : 0.0f;
        EXPECT_EQ(cache[(b * cache_seq + pos) * kv_dim + i], expected)
            << b << " " << pos << " " << i;
      }
    }
  }
}

}  // namespace
}  // namespace llmbench::cpu
