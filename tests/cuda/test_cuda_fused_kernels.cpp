// The fused CUDA kernels of --fuse small (add_rmsnorm, rope_kv_write, swiglu_down) against the
// CPU reference (kernels/cpu, the spec: within the tolerances of the unfused kernels' tests) and
// against the unfused CUDA kernels they replace, which do the same arithmetic on the device: there
// bit for bit. Shapes: odd row counts and dims, llama2-7b's (dim 4096, ffn 11008, 32 x 128
// heads), GQA 32/8 and 14/2. Outputs start as NaN, so an element the kernel skips fails; cache
// rows outside the write keep their NaN sentinels. Also the decode GEMV that rounds its fp32 input
// itself (gemv_*_rounding_x, every decode GEMM of up to kGemvRoundsXRowsMax rows, fused or not)
// against the conversion + gemv it replaces. Every test skips (GTEST_SKIP) without a device.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/common/error.h"
#include "kernels/common/half.h"
#include "kernels/cpu/add_rmsnorm.h"
#include "kernels/cpu/rope_kv_write.h"
#include "kernels/cpu/swiglu_down.h"
#include "kernels/cuda/add_rmsnorm.cuh"
#include "kernels/cuda/convert.cuh"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/gemv_half.cuh"
#include "kernels/cuda/kv_cache.cuh"
#include "kernels/cuda/rmsnorm.cuh"
#include "kernels/cuda/rope.cuh"
#include "kernels/cuda/rope_kv_write.cuh"
#include "kernels/cuda/swiglu.cuh"
#include "kernels/cuda/swiglu_down.cuh"
#include "tests/cuda/cuda_stream_test.h"
#include "tests/cuda/device_buffer.h"
#include "tests/kernels/check.h"

namespace llmbench::cuda {
namespace {

using test::all_close;
using test::DeviceBuffer;
using test::random_floats;
using test::kAtol;
using test::kRtol;
using test::nan_floats;
using test::HalfType;

class CudaFusedKernels : public test::CudaStreamTest {};

using test::bits;

// ---- residual add + RMSNorm ------------------------------------------------------------------

TEST_F(CudaFusedKernels, AddRmsnormMatchesTheCpuAndTheUnfusedKernels) {
  const float eps = 1e-5f;
  for (const int dim : {1, 7, 733, 4096}) {
    const std::vector<float> weight = random_floats(dim, 1, 0.5f, 1.5f);
    const DeviceBuffer<float> d_weight(weight);
    for (const int n_rows : {1, 3, 19}) {
      SCOPED_TRACE(::testing::Message() << "n_rows " << n_rows << ", dim " << dim);
      const std::size_t n = static_cast<std::size_t>(n_rows) * dim;
      const std::vector<float> x0 = random_floats(n, 2, -20.0f, 20.0f);
      const std::vector<float> proj = random_floats(n, 3, -5.0f, 5.0f);
      std::vector<float> x_ref = x0, h_ref(n);
      cpu::add_rmsnorm_reference(x_ref.data(), proj.data(), h_ref.data(), weight.data(), n_rows,
                                 dim, eps);
      const DeviceBuffer<float> d_proj(proj);
      // Fused.
      DeviceBuffer<float> d_x(x0), d_h = nan_floats(n);
      add_rmsnorm(d_x.get(), d_proj.get(), d_h.get(), d_weight.get(), n_rows, dim, eps, stream_);
      // Unfused: add_inplace, then rmsnorm.
      DeviceBuffer<float> d_x2(x0), d_h2 = nan_floats(n);
      add_inplace(d_x2.get(), d_proj.get(), n, stream_);
      rmsnorm(d_h2.get(), d_x2.get(), d_weight.get(), n_rows, dim, eps, stream_);
      sync();
      const std::vector<float> x = d_x.download(), h = d_h.download();
      EXPECT_EQ(x, x_ref);  // one float add each: exact
      EXPECT_TRUE(all_close(h, h_ref, kAtol, kRtol));
      EXPECT_EQ(x, d_x2.download());
      EXPECT_EQ(bits(h), bits(d_h2.download()));
    }
  }
}

// ---- RoPE + KV write -------------------------------------------------------------------------

TEST_F(CudaFusedKernels, RopeKvWriteMatchesTheCpuAndTheUnfusedKernels) {
  struct Case {
    int batch, n_new, past_len, n_heads, n_kv_heads, head_dim;
    float theta;
  };
  for (const Case c : {Case{1, 1, 0, 1, 1, 2, 10000.0f}, Case{1, 1, 37, 32, 32, 128, 10000.0f},
                       Case{4, 1, 4000, 32, 8, 128, 500000.0f},
                       Case{3, 7, 0, 14, 2, 64, 1000000.0f}, Case{2, 19, 5, 3, 3, 8, 10000.0f},
                       Case{16, 1, 32700, 4, 2, 6, 10000.0f}}) {
    RopeKvShape s;
    s.batch = c.batch, s.n_new = c.n_new, s.past_len = c.past_len;
    s.cache_seq = c.past_len + c.n_new + 3;
    s.n_heads = c.n_heads, s.n_kv_heads = c.n_kv_heads, s.head_dim = c.head_dim;
    s.theta = c.theta;
    SCOPED_TRACE(::testing::Message() << "batch " << c.batch << ", n_new " << c.n_new
                                      << ", past " << c.past_len << ", heads " << c.n_heads
                                      << "/" << c.n_kv_heads << "x" << c.head_dim);
    std::vector<int32_t> positions(static_cast<std::size_t>(s.rows()));
    for (int r = 0; r < s.rows(); ++r) positions[r] = s.past_len + r % s.n_new;
    const std::vector<float> qkv0 =
        random_floats(static_cast<std::size_t>(s.rows()) * s.qkv_dim(), 4, -2.0f, 2.0f);
    const std::size_t cache_n = static_cast<std::size_t>(s.batch) * s.cache_seq * s.kv_dim();
    // The reference cache starts with the bits nan_floats() fills the device's with (all ones),
    // so that the untouched positions compare equal bit for bit.
    const float sentinel = std::bit_cast<float>(~0u);
    std::vector<float> qkv_ref = qkv0, k_ref(cache_n, sentinel), v_ref(cache_n, sentinel);
    cpu::rope_kv_write_reference(qkv_ref.data(), k_ref.data(), v_ref.data(), positions.data(), s);

    const DeviceBuffer<int32_t> d_positions(positions);
    DeviceBuffer<float> d_qkv(qkv0), d_k = nan_floats(cache_n), d_v = nan_floats(cache_n);
    rope_kv_write(d_qkv.get(), d_k.get(), d_v.get(), d_positions.get(), s, stream_);
    // Unfused: rope_q, rope_k, kv_write_k, kv_write_v.
    DeviceBuffer<float> d_qkv2(qkv0), d_k2 = nan_floats(cache_n), d_v2 = nan_floats(cache_n);
    rope(d_qkv2.get(), s.rows(), s.qkv_dim(), s.n_heads, s.head_dim, d_positions.get(), s.theta,
         stream_);
    rope(d_qkv2.get() + s.q_dim(), s.rows(), s.qkv_dim(), s.n_kv_heads, s.head_dim,
         d_positions.get(), s.theta, stream_);
    kv_cache_write(d_k2.get(), d_qkv2.get() + s.q_dim(), s.qkv_dim(), s.batch, s.n_new,
                   s.past_len, s.cache_seq, s.kv_dim(), stream_);
    kv_cache_write(d_v2.get(), d_qkv2.get() + s.q_dim() + s.kv_dim(), s.qkv_dim(), s.batch,
                   s.n_new, s.past_len, s.cache_seq, s.kv_dim(), stream_);
    sync();
    const std::vector<float> qkv = d_qkv.download(), k = d_k.download(), v = d_v.download();
    EXPECT_TRUE(all_close(qkv, qkv_ref, kAtol, kRtol));
    EXPECT_EQ(bits(v), bits(v_ref));  // a copy: exact, and the sentinels left alone
    // k: the rotated keys within tolerance where written, the sentinels elsewhere.
    for (std::size_t i = 0; i < cache_n; ++i) {
      ASSERT_EQ(std::isnan(k[i]), std::isnan(k_ref[i])) << "cache element " << i;
      if (!std::isnan(k_ref[i])) {
        ASSERT_NEAR(k[i], k_ref[i], kAtol + kRtol * std::fabs(k_ref[i]));
      }
    }
    EXPECT_EQ(bits(qkv), bits(d_qkv2.download()));
    EXPECT_EQ(bits(k), bits(d_k2.download()));
    EXPECT_EQ(bits(v), bits(d_v2.download()));
  }
}

// ---- SwiGLU into down_proj -------------------------------------------------------------------

void check_swiglu_down(HalfType type, cudaStream_t stream) {
  struct Shape {
    int m, dim, ffn_dim;
  };
  const DType dtype = type == HalfType::kBf16 ? DType::kBf16 : DType::kFp16;
  for (const Shape g : {Shape{1, 19, 8}, Shape{2, 733, 64}, Shape{3, 33, 2056},
                        Shape{1, 4096, 11008}, Shape{4, 4096, 11008}, Shape{4, 100, 13824}}) {
    SCOPED_TRACE(::testing::Message() << dtype_name(dtype) << " m " << g.m << ", dim " << g.dim
                                      << ", ffn_dim " << g.ffn_dim);
    ASSERT_TRUE(swiglu_down_supported(g.m, g.ffn_dim));
    std::vector<float> gate_up =
        random_floats(2 * static_cast<std::size_t>(g.m) * g.ffn_dim, 8, -3.0f, 3.0f);
    gate_up[0] = -200.0f;  // silu is -0 there, not NaN
    const std::vector<float> w = random_floats(static_cast<std::size_t>(g.dim) * g.ffn_dim, 9);
    std::vector<std::uint16_t> w_bits(w.size());
    for (std::size_t i = 0; i < w.size(); ++i)
      w_bits[i] = type == HalfType::kBf16 ? fp32_to_bf16(w[i]) : fp32_to_fp16(w[i]);
    std::vector<float> ref(static_cast<std::size_t>(g.m) * g.dim);
    cpu::swiglu_down_reference(ref.data(), gate_up.data(), w_bits.data(), dtype, g.m, g.dim,
                               g.ffn_dim);

    const DeviceBuffer<float> d_gate_up(gate_up);
    const DeviceBuffer<std::uint16_t> d_w(w_bits);
    const std::size_t act_n = static_cast<std::size_t>(g.m) * g.ffn_dim;
    DeviceBuffer<float> d_out = nan_floats(ref.size()), d_out2 = nan_floats(ref.size());
    DeviceBuffer<float> d_act(act_n);
    DeviceBuffer<std::uint16_t> d_act_half(act_n);
    // Unfused: swiglu, the conversion matmul_half makes, gemv.
    swiglu(d_act.get(), d_gate_up.get(), g.m, g.ffn_dim, stream);
    if (type == HalfType::kBf16) {
      const auto* w16 = reinterpret_cast<const __nv_bfloat16*>(d_w.get());
      auto* a16 = reinterpret_cast<__nv_bfloat16*>(d_act_half.get());
      swiglu_down_bf16(d_out.get(), d_gate_up.get(), w16, g.m, g.dim, g.ffn_dim, stream);
      convert_f32_to_bf16(a16, d_act.get(), act_n, stream);
      gemv_bf16(d_out2.get(), a16, w16, g.m, g.dim, g.ffn_dim, g.ffn_dim, stream);
    } else {
      const auto* w16 = reinterpret_cast<const __half*>(d_w.get());
      auto* a16 = reinterpret_cast<__half*>(d_act_half.get());
      swiglu_down_f16(d_out.get(), d_gate_up.get(), w16, g.m, g.dim, g.ffn_dim, stream);
      convert_f32_to_f16(a16, d_act.get(), act_n, stream);
      gemv_f16(d_out2.get(), a16, w16, g.m, g.dim, g.ffn_dim, g.ffn_dim, stream);
    }
    LLMBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
    const std::vector<float> out = d_out.download();
    // Activations up to ~9 in magnitude (silu(3) * 3) against weights in [-1, 1].
    EXPECT_TRUE(all_close(out, ref, 10.0 * (8.0 * g.ffn_dim * FLT_EPSILON + 1e-6), 1e-4));
    EXPECT_EQ(bits(out), bits(d_out2.download()));
  }
}

TEST_F(CudaFusedKernels, SwigluDownBf16MatchesTheReferenceAndTheUnfusedGemv) {
  check_swiglu_down(HalfType::kBf16, stream_);
}

TEST_F(CudaFusedKernels, SwigluDownF16MatchesTheReferenceAndTheUnfusedGemv) {
  check_swiglu_down(HalfType::kF16, stream_);
}

TEST_F(CudaFusedKernels, SwigluDownRefusesShapesItDoesNotTake) {
  EXPECT_FALSE(swiglu_down_supported(kGemvRowsMax + 1, 64));
  EXPECT_FALSE(swiglu_down_supported(1, 7));  // ffn_dim not a multiple of 8
  EXPECT_FALSE(swiglu_down_supported(0, 64));
  EXPECT_FALSE(swiglu_down_supported(4, 1 << 20));  // 8 MiB of activations: no block holds them
  EXPECT_THROW(swiglu_down_f16(nullptr, nullptr, nullptr, 1, 8, 7, stream_), Error);
}

// ---- the GEMV rounding its fp32 input ---------------------------------------------------------

// gemv_*_rounding_x against convert_f32_to_* then gemv_*, bit for bit, at every row count the
// kernel takes (the backend uses 1 and 2): padded x rows (lda > k), n not a multiple of the 8
// rows per block, llama2-7b's k, and x values that round (ties included) or overflow in fp16.
void check_gemv_rounding_x(HalfType type, cudaStream_t stream) {
  struct Shape {
    int m, n, k, lda;
  };
  for (const Shape g :
       {Shape{1, 19, 8, 8}, Shape{2, 733, 64, 72}, Shape{1, 4096, 4096, 4096},
        Shape{2, 100, 11008, 11008}, Shape{3, 33, 24, 40}, Shape{4, 7, 2056, 2056}}) {
    SCOPED_TRACE(::testing::Message() << (type == HalfType::kBf16 ? "bf16" : "fp16") << " m "
                                      << g.m << ", n " << g.n << ", k " << g.k << ", lda "
                                      << g.lda);
    ASSERT_TRUE(gemv_half_supported(g.m, g.k, g.lda));
    const std::size_t x_n = static_cast<std::size_t>(g.m) * g.lda;
    std::vector<float> x = random_floats(x_n, 41, -4.0f, 4.0f);
    x[0] = 1.0f + 0x1p-11f;  // an fp16 tie: rounds to even (1.0)
    // The last row's last value past fp16's largest finite one (inf after rounding); row 0 keeps
    // finite sums.
    if (g.m > 1) x[x_n - 1 - (g.lda - g.k)] = 70000.0f;
    const std::vector<float> w = random_floats(static_cast<std::size_t>(g.n) * g.k, 42);
    const DeviceBuffer<float> d_x(x), d_w32(w);
    DeviceBuffer<float> d_out = nan_floats(static_cast<std::size_t>(g.m) * g.n);
    DeviceBuffer<float> d_out2 = nan_floats(static_cast<std::size_t>(g.m) * g.n);
    if (type == HalfType::kBf16) {
      DeviceBuffer<__nv_bfloat16> d_xh(x_n), d_w(w.size());
      convert_f32_to_bf16(d_w.get(), d_w32.get(), w.size(), stream);
      convert_f32_to_bf16(d_xh.get(), d_x.get(), x_n, stream);
      gemv_bf16(d_out.get(), d_xh.get(), d_w.get(), g.m, g.n, g.k, g.lda, stream);
      gemv_bf16_rounding_x(d_out2.get(), d_x.get(), d_w.get(), g.m, g.n, g.k, g.lda, stream);
      LLMBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));  // before the buffers are freed
    } else {
      DeviceBuffer<__half> d_xh(x_n), d_w(w.size());
      convert_f32_to_f16(d_w.get(), d_w32.get(), w.size(), stream);
      convert_f32_to_f16(d_xh.get(), d_x.get(), x_n, stream);
      gemv_f16(d_out.get(), d_xh.get(), d_w.get(), g.m, g.n, g.k, g.lda, stream);
      gemv_f16_rounding_x(d_out2.get(), d_x.get(), d_w.get(), g.m, g.n, g.k, g.lda, stream);
      LLMBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    EXPECT_EQ(bits(d_out.download()), bits(d_out2.download()));
  }
}

TEST_F(CudaFusedKernels, GemvBf16RoundingXEqualsConvertThenGemvBitForBit) {
  check_gemv_rounding_x(HalfType::kBf16, stream_);
}

TEST_F(CudaFusedKernels, GemvF16RoundingXEqualsConvertThenGemvBitForBit) {
  check_gemv_rounding_x(HalfType::kF16, stream_);
}

TEST_F(CudaFusedKernels, GemvRoundingXRefusesShapesItDoesNotTake) {
  EXPECT_THROW(gemv_f16_rounding_x(nullptr, nullptr, nullptr, kGemvRowsMax + 1, 8, 8, 8, stream_),
               Error);
  EXPECT_THROW(gemv_bf16_rounding_x(nullptr, nullptr, nullptr, 1, 8, 7, 7, stream_), Error);
}

}  // namespace
}  // namespace llmbench::cuda
