// The fp16 KV cache's writes on CUDA (--kv-cache-dtype fp16) against the CPU reference
// (kernels/cpu/kv_f16.h, the spec), through CudaBackend's ops: kv_cache_write_f16 and its _at
// form bit for bit (the same rounding, ties to even, overflow to inf, subnormals), the fused
// rope_kv_write_f16 (the rotation within the fp32 rope tolerance, every stored key the nearest
// half of the key the kernel left in qkv, every value bit for bit, and bit for bit the unfused
// rope, rope, write, write), widen_kv_f16 exact for every bit pattern, and which fp16 caches the
// streamed attention kernel takes (host code: runs without a device). Cache positions outside
// the write keep their sentinels. The other tests skip (GTEST_SKIP) without a device.
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/common/half.h"
#include "kernels/common/layout.h"
#include "kernels/cpu/kv_f16.h"
#include "kernels/cuda/attention_f16.cuh"
#include "tests/cuda/cuda_stream_test.h"
#include "tests/cuda/device_buffer.h"
#include "tests/cuda/kv_f16_test.h"
#include "tests/kernels/check.h"

namespace llmbench {
namespace {

using test::all_close;
using test::kAtol;
using test::kRtol;
using test::random_floats;
using test::random_halves;
using test::rounding_sources;
using test::widened;

class CudaKvF16Writes : public test::CudaKvF16Test {};

TEST_F(CudaKvF16Writes, WriteRoundsEveryValueAsTheCpuDoes) {
  for (const int batch : {1, 4}) {
    for (const int n_new : {1, 7}) {
      SCOPED_TRACE(::testing::Message() << "batch " << batch << ", n_new " << n_new);
      const int kv_dim = 256, src_stride = 3 * kv_dim + 1, past_len = 37;
      const int cache_seq = past_len + n_new + 5;
      const std::vector<float> src = rounding_sources(std::size_t(batch) * n_new * src_stride, 1);
      std::vector<std::uint16_t> ref = random_halves(std::size_t(batch) * cache_seq * kv_dim, 2);
      const Buffer d_cache = upload(ref), d_src = upload(src);
      cpu::kv_cache_write_f16(ref.data(), src.data(), src_stride, batch, n_new, past_len,
                              cache_seq, kv_dim);
      be_->kv_cache_write_f16(d_cache.as<std::uint16_t>(), d_src.f32(), src_stride, batch, n_new,
                              past_len, cache_seq, kv_dim);
      EXPECT_EQ(download<std::uint16_t>(d_cache), ref);
    }
  }
}

TEST_F(CudaKvF16Writes, WriteAtPlacesRowsWhereTheDevicePositionsSay) {
  for (const int batch : {1, 3}) {
    for (const int n_new : {1, 5}) {
      SCOPED_TRACE(::testing::Message() << "batch " << batch << ", n_new " << n_new);
      const int kv_dim = 512, src_stride = 2 * kv_dim + 3, past_len = 1000;
      const int cache_seq = past_len + n_new + 2;
      const std::vector<float> src = rounding_sources(std::size_t(batch) * n_new * src_stride, 3);
      std::vector<std::uint16_t> ref = random_halves(std::size_t(batch) * cache_seq * kv_dim, 4);
      std::vector<std::int32_t> positions;
      for (int b = 0; b < batch; ++b)
        for (int t = 0; t < n_new; ++t) positions.push_back(past_len + t);
      const Buffer d_cache = upload(ref), d_src = upload(src), d_pos = upload(positions);
      cpu::kv_cache_write_f16(ref.data(), src.data(), src_stride, batch, n_new, past_len,
                              cache_seq, kv_dim);
      be_->kv_cache_write_f16_at(d_cache.as<std::uint16_t>(), d_src.f32(), src_stride, batch,
                                 n_new, d_pos.as<std::int32_t>(), cache_seq, kv_dim);
      EXPECT_EQ(download<std::uint16_t>(d_cache), ref);
    }
  }
}

// ---- RoPE + KV write into fp16 caches --------------------------------------------------------

constexpr std::uint16_t kSentinelHalf = 0x7fff;  // a NaN no rounded finite value can be

// |a - b| within the rotation's fp32 tolerance plus the two roundings to half (each at most half
// a unit in the last place: 2^-11 relative, 2^-25 absolute among the subnormals).
bool halves_close(std::uint16_t a, std::uint16_t b) {
  const double x = fp16_to_fp32(a), y = fp16_to_fp32(b);
  return std::fabs(x - y) <= kAtol + (kRtol + 0x1p-10) * std::fabs(y) + 0x1p-24;
}

TEST_F(CudaKvF16Writes, RopeKvWriteRoundsTheRotatedKeysAndMatchesTheUnfusedOps) {
  struct Case {
    int batch, n_new, past_len, n_heads, n_kv_heads, head_dim;
    float theta;
  };
  for (const Case c : {Case{1, 1, 0, 1, 1, 2, 10000.0f}, Case{1, 1, 37, 32, 32, 128, 10000.0f},
                       Case{4, 1, 4000, 32, 8, 128, 500000.0f},
                       Case{3, 7, 0, 14, 2, 64, 1000000.0f}, Case{2, 19, 5, 3, 3, 8, 10000.0f}}) {
    RopeKvShape s;
    s.batch = c.batch, s.n_new = c.n_new, s.past_len = c.past_len;
    s.cache_seq = c.past_len + c.n_new + 3;
    s.n_heads = c.n_heads, s.n_kv_heads = c.n_kv_heads, s.head_dim = c.head_dim;
    s.theta = c.theta;
    SCOPED_TRACE(::testing::Message() << "batch " << c.batch << ", n_new " << c.n_new
                                      << ", past " << c.past_len << ", heads " << c.n_heads
                                      << "/" << c.n_kv_heads << "x" << c.head_dim);
    std::vector<std::int32_t> positions(static_cast<std::size_t>(s.rows()));
    for (int r = 0; r < s.rows(); ++r) positions[r] = s.past_len + r % s.n_new;
    // Up to 300 in magnitude: keys of both signs over the half's whole exponent range.
    std::vector<float> qkv0 =
        random_floats(static_cast<std::size_t>(s.rows()) * s.qkv_dim(), 5, -2.0f, 2.0f);
    for (std::size_t i = 0; i < qkv0.size(); i += 5) qkv0[i] *= 150.0f;
    const std::size_t cache_n = static_cast<std::size_t>(s.batch) * s.cache_seq * s.kv_dim();
    const std::vector<std::uint16_t> sentinels(cache_n, kSentinelHalf);
    std::vector<float> qkv_ref = qkv0;
    std::vector<std::uint16_t> k_ref = sentinels, v_ref = sentinels;
    cpu::rope_kv_write_f16(qkv_ref.data(), k_ref.data(), v_ref.data(), positions.data(), s);

    const Buffer d_pos = upload(positions);
    const Buffer d_qkv = upload(qkv0), d_k = upload(sentinels), d_v = upload(sentinels);
    be_->rope_kv_write_f16(d_qkv.f32(), d_k.as<std::uint16_t>(), d_v.as<std::uint16_t>(),
                           d_pos.as<std::int32_t>(), s);
    // Unfused: Backend's default, rope (q), rope (k), kv_cache_write_f16 (k, v) on this backend.
    const Buffer d_qkv2 = upload(qkv0), d_k2 = upload(sentinels), d_v2 = upload(sentinels);
    be_->Backend::rope_kv_write_f16(d_qkv2.f32(), d_k2.as<std::uint16_t>(),
                                    d_v2.as<std::uint16_t>(), d_pos.as<std::int32_t>(), s);
    const std::vector<float> qkv = download<float>(d_qkv);
    const std::vector<std::uint16_t> k = download<std::uint16_t>(d_k);
    const std::vector<std::uint16_t> v = download<std::uint16_t>(d_v);

    EXPECT_TRUE(all_close(qkv, qkv_ref, kAtol, kRtol));
    EXPECT_EQ(v, v_ref);  // rounded from the same unrotated values: bit for bit
    // k: every written half is the nearest half of the rotated key left in qkv, and within the
    // rotation's tolerance of the CPU's; the sentinels stay where nothing was written.
    for (std::size_t i = 0; i < cache_n; ++i) {
      const std::size_t row = i / s.kv_dim(), e = i % s.kv_dim();
      const int b = static_cast<int>(row / s.cache_seq), pos = static_cast<int>(row % s.cache_seq);
      const int t = pos - s.past_len;
      if (t < 0 || t >= s.n_new) {
        ASSERT_EQ(k[i], kSentinelHalf) << "cache element " << i;
        continue;
      }
      const float rotated = qkv[(std::size_t(b) * s.n_new + t) * s.qkv_dim() + s.q_dim() + e];
      ASSERT_EQ(k[i], fp32_to_fp16(rotated)) << "cache element " << i << ", key " << rotated;
      ASSERT_TRUE(halves_close(k[i], k_ref[i]))
          << "cache element " << i << ": " << fp16_to_fp32(k[i]) << ", CPU "
          << fp16_to_fp32(k_ref[i]);
    }
    EXPECT_EQ(test::bits(qkv), test::bits(download<float>(d_qkv2)));
    EXPECT_EQ(k, download<std::uint16_t>(d_k2));
    EXPECT_EQ(v, download<std::uint16_t>(d_v2));
  }
}

// ---- widening ----------------------------------------------------------------------------------

class CudaKvF16Widen : public test::CudaStreamTest {};

TEST_F(CudaKvF16Widen, WidenIsExactForEveryBitPatternAndLeavesTheRestAlone) {
  // A token-major cache of 35 positions read for 33, into a head-major copy with 40 positions.
  // The 2 x 33 x 4 x 256 elements read count through all 65536 bit patterns; the positions past
  // 33 hold +inf, which nothing may copy.
  const int batch = 2, len = 33, heads = 4, head_dim = 256, cache_seq = 35, out_seq = 40;
  const HeadStrides in_s = token_major(cache_seq, heads * head_dim, head_dim);
  const HeadStrides out_s = head_major(heads, out_seq, head_dim);
  std::vector<std::uint16_t> in(std::size_t(batch) * cache_seq * heads * head_dim, 0x7c00);
  std::uint16_t pattern = 0;
  for (int b = 0; b < batch; ++b)
    for (int j = 0; j < len; ++j)
      for (int e = 0; e < heads * head_dim; ++e) in[b * in_s.batch + j * in_s.seq + e] = pattern++;
  std::vector<float> ref(std::size_t(batch) * heads * out_seq * head_dim, -7.0f);
  cpu::widen_kv_f16(ref.data(), out_s, in.data(), in_s, batch, len, heads, head_dim);
  const test::DeviceBuffer<std::uint16_t> d_in(in);
  test::DeviceBuffer<float> d_out(std::vector<float>(ref.size(), -7.0f));
  cuda::widen_kv_f16(d_out.get(), out_s, reinterpret_cast<const __half*>(d_in.get()), in_s, batch,
                     len, heads, head_dim, stream_);
  sync();
  const std::vector<float> out = d_out.download();
  int bad = 0;
  for (std::size_t i = 0; i < out.size() && bad < 10; ++i) {
    const bool ok = std::isnan(ref[i]) ? std::isnan(out[i])
                                       : std::memcmp(&ref[i], &out[i], sizeof(float)) == 0;
    if (!ok) {
      ADD_FAILURE() << "element " << i << ": " << out[i] << ", CPU " << ref[i];
      ++bad;
    }
  }
}

// Host code only: runs without a device.
TEST(CudaKvF16Streamed, TakesHalfRowsAlignedForTheirOwnLoads) {
  alignas(16) static __half cache[64];
  for (const int head_dim : {64, 128, 256}) {
    const int vec = head_dim / 32;  // halves a lane loads at once: 4, 8 or 16 bytes
    const AttentionShape s{1, 1, 10, 4, 2, head_dim, 0, 0, 16};
    const AttentionStrides st = row_major_strides(s);
    EXPECT_TRUE(cuda::attention_streamed_supported_f16(s, st, cache, cache)) << head_dim;
    // A cache one half off the load's alignment, or rows that are.
    EXPECT_FALSE(cuda::attention_streamed_supported_f16(s, st, cache + 1, cache)) << head_dim;
    EXPECT_FALSE(cuda::attention_streamed_supported_f16(s, st, cache, cache + 1)) << head_dim;
    AttentionStrides odd = st;
    odd.kv.seq += 1;
    EXPECT_FALSE(cuda::attention_streamed_supported_f16(s, odd, cache, cache)) << head_dim;
    // Aligned to the load and no more: taken (an fp32 row of head_dim 128 or 256 would need 16
    // bytes; halves need 2 x vec).
    AttentionStrides just = st;
    just.kv.seq += vec;
    EXPECT_TRUE(cuda::attention_streamed_supported_f16(s, just, cache + vec, cache + vec))
        << head_dim;
    if (vec > 2) {
      AttentionStrides half_way = st;
      half_way.kv.seq += vec / 2;
      EXPECT_FALSE(cuda::attention_streamed_supported_f16(s, half_way, cache, cache)) << head_dim;
      EXPECT_FALSE(cuda::attention_streamed_supported_f16(s, st, cache + vec / 2, cache))
          << head_dim;
    }
  }
  for (const int head_dim : {32, 96, 80, 192}) {
    const AttentionShape s{1, 1, 10, 4, 2, head_dim, 0, 0, 16};
    EXPECT_FALSE(cuda::attention_streamed_supported_f16(s, row_major_strides(s), cache, cache))
        << head_dim;
  }
}

}  // namespace
}  // namespace llmbench
