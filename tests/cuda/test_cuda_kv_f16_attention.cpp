// Attention over the fp16 KV cache on CUDA (--kv-cache-dtype fp16) against the CPU reference
// (cpu::attention_f16_strided: the visible positions widened, then the fp32 attention), within
// the CUDA attention tests' tolerance (1e-5 + 1e-4 relative), through CudaBackend's
// attention_f16 and attention_f16_at with both --decode-attention kernels: decode at 1 to 4096
// keys (split over keys at small batch, unsplit at batch 16), GQA, head_dim 64, 128 and 256 (the
// streamed kernel's) and 96 and 32 (tiled only), short prefill through the kernels, prefill of 32
// and more queries through cuBLAS, and the captured-step form with its grid sized for the
// longest context. The kernels read halves and widen them exactly, so decode must also equal the
// fp32 kernels over the widened cache bit for bit. Also attention_gemm_f16 itself at a budget of
// one byte (one sequence widened at a time) over token-major and head-major caches. Output rows
// are padded and start random: the padding must stay. Every test skips without a device.
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/common/error.h"
#include "kernels/common/layout.h"
#include "kernels/cpu/kv_f16.h"
#include "kernels/cuda/attention_f16.cuh"
#include "kernels/cuda/gemm.cuh"
#include "tests/cuda/cuda_stream_test.h"
#include "tests/cuda/device_buffer.h"
#include "tests/cuda/kv_f16_test.h"
#include "tests/kernels/check.h"

namespace llmbench {
namespace {

using test::all_close;
using test::bits;
using test::kAttentionAtol;
using test::kAttentionRtol;
using test::random_floats;
using test::random_halves;
using test::widened;

constexpr DecodeAttention kBothDecodeKernels[] = {DecodeAttention::kTiled,
                                                  DecodeAttention::kStreamed};

const char* decode_kernel_name(DecodeAttention k) {
  return k == DecodeAttention::kTiled ? "tiled" : "streamed";
}

// q rows laid out like the fused qkv buffer, output rows padded by 5 floats, a cache of
// cache_seq positions (3 past the keys when 0).
AttentionShape f16_shape(int batch, int n_new, int past_len, int n_heads, int n_kv_heads,
                         int head_dim, int cache_seq = 0) {
  return AttentionShape{batch,
                        n_new,
                        past_len,
                        n_heads,
                        n_kv_heads,
                        head_dim,
                        (n_heads + 2 * n_kv_heads) * head_dim,
                        n_heads * head_dim + 5,
                        cache_seq > 0 ? cache_seq : past_len + n_new + 3};
}

// One attention call's inputs: q in [-q_scale, q_scale), caches of halves rounded from [-1, 1),
// and the output buffer's initial (random) contents.
struct F16AttentionCall {
  AttentionShape s;
  AttentionStrides strides;
  std::vector<float> q, out0;
  std::vector<std::uint16_t> k, v;
};

F16AttentionCall f16_call(const AttentionShape& s, unsigned seed, float q_scale,
                          const AttentionStrides& strides) {
  const std::size_t rows = std::size_t(s.batch) * s.n_new;
  const std::size_t cache = std::size_t(s.batch) * s.cache_seq * s.n_kv_heads * s.head_dim;
  return {s,
          strides,
          random_floats(rows * s.q_stride, seed, -q_scale, q_scale),
          random_floats(rows * s.out_stride, seed + 3),
          random_halves(cache, seed + 1),
          random_halves(cache, seed + 2)};
}
F16AttentionCall f16_call(const AttentionShape& s, unsigned seed, float q_scale) {
  return f16_call(s, seed, q_scale, row_major_strides(s));
}

std::vector<float> cpu_attention_f16(const F16AttentionCall& c) {
  std::vector<float> out = c.out0;
  cpu::attention_f16_strided(out.data(), c.q.data(), c.k.data(), c.v.data(), c.s, c.strides);
  return out;
}

class CudaKvF16Attention : public test::CudaKvF16Test {
 protected:
  // CudaBackend::attention_f16.
  std::vector<float> run(const F16AttentionCall& c, DecodeAttention kernel) {
    const Buffer q = upload(c.q), k = upload(c.k), v = upload(c.v), out = upload(c.out0);
    be_->attention_f16(out.f32(), q.f32(), k.as<std::uint16_t>(), v.as<std::uint16_t>(), c.s,
                       c.strides, kernel);
    return download<float>(out);
  }
  // CudaBackend::attention (fp32) over the widened caches.
  std::vector<float> run_widened(const F16AttentionCall& c, DecodeAttention kernel) {
    const Buffer q = upload(c.q), k = upload(widened(c.k)), v = upload(widened(c.v));
    const Buffer out = upload(c.out0);
    be_->attention(out.f32(), q.f32(), k.f32(), v.f32(), c.s, c.strides, kernel);
    return download<float>(out);
  }
  // CudaBackend::attention_f16_at with positions past_len + t in device memory, the grid sized
  // for max_keys.
  std::vector<float> run_at(const F16AttentionCall& c, int max_keys, DecodeAttention kernel) {
    std::vector<std::int32_t> positions;
    for (int b = 0; b < c.s.batch; ++b)
      for (int t = 0; t < c.s.n_new; ++t) positions.push_back(c.s.past_len + t);
    const Buffer q = upload(c.q), k = upload(c.k), v = upload(c.v), out = upload(c.out0);
    const Buffer pos = upload(positions);
    be_->attention_f16_at(out.f32(), q.f32(), k.as<std::uint16_t>(), v.as<std::uint16_t>(), c.s,
                          c.strides, pos.as<std::int32_t>(), max_keys, kernel);
    return download<float>(out);
  }
};

TEST_F(CudaKvF16Attention, DecodeMatchesTheCpuAndTheFp32KernelsOverTheWidenedCache) {
  struct Heads {
    int n_heads, n_kv_heads, head_dim;
  };
  for (const DecodeAttention kernel : kBothDecodeKernels) {
    for (const Heads h : {Heads{32, 4, 128}, Heads{8, 2, 64}, Heads{4, 2, 256}, Heads{6, 2, 96}}) {
      for (const int batch : {1, 3}) {
        for (const int past_len : {0, 37, 1000, 4095}) {
          SCOPED_TRACE(::testing::Message()
                       << decode_kernel_name(kernel) << ", heads " << h.n_heads << "/"
                       << h.n_kv_heads << "x" << h.head_dim << ", batch " << batch
                       << ", past_len " << past_len);
          const F16AttentionCall c = f16_call(
              f16_shape(batch, 1, past_len, h.n_heads, h.n_kv_heads, h.head_dim), 60, 4.0f);
          const std::vector<float> got = run(c, kernel);
          EXPECT_TRUE(all_close(got, cpu_attention_f16(c), kAttentionAtol, kAttentionRtol));
          EXPECT_EQ(bits(got), bits(run_widened(c, kernel)));
        }
      }
    }
  }
}

TEST_F(CudaKvF16Attention, ShortPrefillAndUnsplitDecodeMatchTheCpu) {
  // Up to 31 new tokens go through the kernels; batch 16 x 32 heads needs no split.
  for (const DecodeAttention kernel : kBothDecodeKernels) {
    for (const AttentionShape s :
         {f16_shape(2, 7, 37, 32, 4, 128), f16_shape(16, 1, 1000, 32, 8, 128),
          f16_shape(1, 19, 0, 14, 2, 64), f16_shape(3, 31, 100, 8, 2, 64),
          f16_shape(2, 3, 10, 4, 4, 32)}) {
      SCOPED_TRACE(::testing::Message() << decode_kernel_name(kernel) << ", batch " << s.batch
                                        << ", n_new " << s.n_new << ", past_len " << s.past_len
                                        << ", head_dim " << s.head_dim);
      const F16AttentionCall c = f16_call(s, 61, 4.0f);
      const std::vector<float> got = run(c, kernel);
      EXPECT_TRUE(all_close(got, cpu_attention_f16(c), kAttentionAtol, kAttentionRtol));
      EXPECT_EQ(bits(got), bits(run_widened(c, kernel)));
    }
  }
}

TEST_F(CudaKvF16Attention, PrefillGoesThroughCublasWhicheverKernelIsNamed) {
  for (const AttentionShape s :
       {f16_shape(1, 32, 0, 32, 32, 128), f16_shape(2, 100, 37, 8, 2, 64),
        f16_shape(1, 733, 0, 14, 2, 64), f16_shape(3, 33, 5, 6, 3, 32),
        f16_shape(1, 200, 4000, 8, 2, 128)}) {
    SCOPED_TRACE(::testing::Message() << "batch " << s.batch << ", n_new " << s.n_new
                                      << ", past_len " << s.past_len << ", heads " << s.n_heads
                                      << "/" << s.n_kv_heads << "x" << s.head_dim);
    const F16AttentionCall c = f16_call(s, 62, 1.0f);
    const std::vector<float> tiled = run(c, DecodeAttention::kTiled);
    EXPECT_TRUE(all_close(tiled, cpu_attention_f16(c), kAttentionAtol, kAttentionRtol));
    EXPECT_EQ(bits(tiled), bits(run(c, DecodeAttention::kStreamed)));  // the same GEMMs
  }
}

TEST_F(CudaKvF16Attention, AttentionAtMatchesTheCpuWithTheGridSizedForTheLongestContext) {
  const int cache_seq = 4096;
  for (const DecodeAttention kernel : kBothDecodeKernels) {
    for (const int batch : {1, 3}) {
      for (const int past_len : {0, 31, 255, 1000, 4095}) {
        SCOPED_TRACE(::testing::Message() << decode_kernel_name(kernel) << ", batch " << batch
                                          << ", past_len " << past_len);
        const F16AttentionCall c =
            f16_call(f16_shape(batch, 1, past_len, 32, 4, 128, cache_seq), 63, 4.0f);
        EXPECT_TRUE(all_close(run_at(c, cache_seq, kernel), cpu_attention_f16(c),
                              kAttentionAtol, kAttentionRtol));
        // With max_keys = this step's keys the launch is the by-value one's: bit for bit.
        EXPECT_EQ(bits(run_at(c, past_len + 1, kernel)), bits(run(c, kernel)));
      }
    }
    // head_dim 64, and three new tokens per sequence (the _at form never goes to cuBLAS).
    for (const AttentionShape s : {f16_shape(1, 1, 2047, 8, 2, 64, cache_seq),
                                   f16_shape(2, 3, 500, 8, 2, 64, cache_seq)}) {
      SCOPED_TRACE(::testing::Message() << decode_kernel_name(kernel) << ", n_new " << s.n_new
                                        << ", past_len " << s.past_len);
      const F16AttentionCall c = f16_call(s, 64, 4.0f);
      EXPECT_TRUE(all_close(run_at(c, cache_seq, kernel), cpu_attention_f16(c), kAttentionAtol,
                            kAttentionRtol));
    }
  }
}

// ---- attention_gemm_f16 itself -----------------------------------------------------------------

class CudaKvF16Gemm : public test::CudaStreamTest {};

TEST_F(CudaKvF16Gemm, WidensOneSequenceAtATimeWithinABudgetOfOneByte) {
  const AttentionShape s = f16_shape(3, 50, 7, 4, 2, 64);
  const std::size_t budget = 1, big = std::size_t{256} << 20;
  ASSERT_LT(cuda::attention_gemm_f16_scratch_bytes(s, budget),
            cuda::attention_gemm_f16_scratch_bytes(s, big));
  AttentionStrides head_major_kv = row_major_strides(s);
  head_major_kv.kv = head_major(s.n_kv_heads, s.cache_seq, s.head_dim);
  for (const AttentionStrides& strides : {row_major_strides(s), head_major_kv}) {
    SCOPED_TRACE(strides.kv.seq == s.head_dim ? "head-major cache" : "token-major cache");
    const F16AttentionCall c = f16_call(s, 65, 4.0f, strides);
    const test::DeviceBuffer<float> d_q(c.q);
    const test::DeviceBuffer<std::uint16_t> d_k(c.k), d_v(c.v);
    test::DeviceBuffer<float> d_out(c.out0);
    const std::size_t bytes = cuda::attention_gemm_f16_scratch_bytes(s, budget);
    test::DeviceBuffer<unsigned char> scratch(bytes);
    cuda::CublasHandle cublas;
    cublas.set_stream(stream_);
    const auto* k = reinterpret_cast<const __half*>(d_k.get());
    const auto* v = reinterpret_cast<const __half*>(d_v.get());
    cuda::attention_gemm_f16(cublas.get(), d_out.get(), d_q.get(), k, v, s, strides, budget,
                             scratch.get(), bytes, stream_);
    sync();
    EXPECT_TRUE(all_close(d_out.download(), cpu_attention_f16(c), kAttentionAtol, kAttentionRtol));
    EXPECT_THROW(cuda::attention_gemm_f16(cublas.get(), d_out.get(), d_q.get(), k, v, s, strides,
                                          budget, scratch.get(), bytes - 1, stream_),
                 Error);
  }
}

}  // namespace
}  // namespace llmbench
