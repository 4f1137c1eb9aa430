// The fused small ops (--fuse small) against the unfused references they replace: residual add +
// RMSNorm, RoPE on q and k with the KV-cache write, and SwiGLU into the down projection. Each
// fused CPU function does the same arithmetic as the unfused pair, so the comparisons are bit for
// bit (EXPECT_EQ on the float vectors); shapes are odd (1, 3, 7, 19 rows; dims 1, 7, 733) and
// real (dim 4096, head_dim 128 with GQA 32/8, head_dim 64 with 14/2, theta up to 1e6, positions
// up to 32768). Cache rows the write must not touch start as NaN sentinels and are checked.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/common/error.h"
#include "kernels/common/half.h"
#include "kernels/cpu/add_rmsnorm.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/kv_cache.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/matmul_half.h"
#include "kernels/cpu/rmsnorm.h"
#include "kernels/cpu/rope.h"
#include "kernels/cpu/rope_kv_write.h"
#include "kernels/cpu/swiglu.h"
#include "kernels/cpu/swiglu_down.h"
#include "tests/kernels/check.h"

namespace llmbench::cpu {
namespace {

using test::random_floats;

using test::bits;

// ---- residual add + RMSNorm ------------------------------------------------------------------

TEST(FusedOps, AddRmsnormEqualsTheAddThenTheNorm) {
  const float eps = 1e-5f;
  for (const int dim : {1, 7, 733, 4096}) {
    const std::vector<float> weight = random_floats(dim, 1, 0.5f, 1.5f);
    for (const int n_rows : {1, 3, 19}) {
      SCOPED_TRACE(::testing::Message() << "n_rows " << n_rows << ", dim " << dim);
      const std::size_t n = static_cast<std::size_t>(n_rows) * dim;
      const std::vector<float> x0 = random_floats(n, 2, -20.0f, 20.0f);
      const std::vector<float> proj = random_floats(n, 3, -5.0f, 5.0f);
      // Unfused: the engine's two ops.
      std::vector<float> x_ref = x0, h_ref(n);
      add_inplace(x_ref.data(), proj.data(), n);
      rmsnorm(h_ref.data(), x_ref.data(), weight.data(), n_rows, dim, eps);
      // The spec and the fused loop.
      std::vector<float> x_spec = x0, h_spec(n, NAN), x_fused = x0, h_fused(n, NAN);
      add_rmsnorm_reference(x_spec.data(), proj.data(), h_spec.data(), weight.data(), n_rows, dim,
                            eps);
      add_rmsnorm(x_fused.data(), proj.data(), h_fused.data(), weight.data(), n_rows, dim, eps);
      EXPECT_EQ(x_spec, x_ref);
      EXPECT_EQ(h_spec, h_ref);
      EXPECT_EQ(x_fused, x_ref);
      EXPECT_EQ(h_fused, h_ref);
    }
  }
}

TEST(FusedOps, AddRmsnormOfAHandComputedRow) {
  // x + proj = (3, 4): mean of squares 12.5, so h = (3, 4) / sqrt(12.5) * (1, 2).
  std::vector<float> x = {1.0f, 1.0f}, h(2);
  const std::vector<float> proj = {2.0f, 3.0f}, weight = {1.0f, 2.0f};
  add_rmsnorm(x.data(), proj.data(), h.data(), weight.data(), 1, 2, 0.0f);
  EXPECT_EQ(x, (std::vector<float>{3.0f, 4.0f}));
  EXPECT_NEAR(h[0], 3.0 / std::sqrt(12.5), 1e-6);
  EXPECT_NEAR(h[1], 8.0 / std::sqrt(12.5), 1e-6);
}

// ---- RoPE + KV write -------------------------------------------------------------------------

struct RopeKvCase {
  int batch, n_new, past_len, n_heads, n_kv_heads, head_dim;
  float theta;
};

// Positions past_len + t for every sequence, as the Session makes them.
std::vector<int32_t> session_positions(const RopeKvShape& s) {
  std::vector<int32_t> p(static_cast<std::size_t>(s.rows()));
  for (int r = 0; r < s.rows(); ++r) p[r] = s.past_len + r % s.n_new;
  return p;
}

TEST(FusedOps, RopeKvWriteEqualsTheRopesThenTheWrites) {
  for (const RopeKvCase c : {RopeKvCase{1, 1, 0, 1, 1, 2, 10000.0f},
                             RopeKvCase{1, 1, 37, 32, 8, 128, 500000.0f},
                             RopeKvCase{3, 7, 0, 14, 2, 64, 1000000.0f},
                             RopeKvCase{4, 1, 32760, 4, 2, 6, 10000.0f},
                             RopeKvCase{2, 19, 5, 3, 3, 8, 10000.0f}}) {
    RopeKvShape s;
    s.batch = c.batch, s.n_new = c.n_new, s.past_len = c.past_len;
    s.cache_seq = c.past_len + c.n_new + 3;  // rows past the new ones stay untouched
    s.n_heads = c.n_heads, s.n_kv_heads = c.n_kv_heads, s.head_dim = c.head_dim;
    s.theta = c.theta;
    SCOPED_TRACE(::testing::Message() << "batch " << c.batch << ", n_new " << c.n_new
                                      << ", past " << c.past_len << ", heads " << c.n_heads
                                      << "/" << c.n_kv_heads << "x" << c.head_dim);
    const std::vector<int32_t> positions = session_positions(s);
    const std::vector<float> qkv0 =
        random_floats(static_cast<std::size_t>(s.rows()) * s.qkv_dim(), 4, -2.0f, 2.0f);
    const std::size_t cache_n = static_cast<std::size_t>(s.batch) * s.cache_seq * s.kv_dim();

    // Unfused: the engine's four ops (rope_q, rope_k, kv_write_k, kv_write_v).
    std::vector<float> qkv_ref = qkv0, k_ref(cache_n, NAN), v_ref(cache_n, NAN);
    rope(qkv_ref.data(), s.rows(), s.qkv_dim(), s.n_heads, s.head_dim, positions.data(), s.theta);
    rope(qkv_ref.data() + s.q_dim(), s.rows(), s.qkv_dim(), s.n_kv_heads, s.head_dim,
         positions.data(), s.theta);
    kv_cache_write(k_ref.data(), qkv_ref.data() + s.q_dim(), s.qkv_dim(), s.batch, s.n_new,
                   s.past_len, s.cache_seq, s.kv_dim());
    kv_cache_write(v_ref.data(), qkv_ref.data() + s.q_dim() + s.kv_dim(), s.qkv_dim(), s.batch,
                   s.n_new, s.past_len, s.cache_seq, s.kv_dim());

    for (const bool fused : {false, true}) {
      SCOPED_TRACE(fused ? "rope_kv_write" : "rope_kv_write_reference");
      std::vector<float> qkv = qkv0, k(cache_n, NAN), v(cache_n, NAN);
      (fused ? rope_kv_write : rope_kv_write_reference)(qkv.data(), k.data(), v.data(),
                                                        positions.data(), s);
      EXPECT_EQ(qkv, qkv_ref);
      EXPECT_EQ(bits(k), bits(k_ref));  // the NaN sentinels too: nothing else written
      EXPECT_EQ(bits(v), bits(v_ref));
    }
    // The write really happened and RoPE really rotated (not the identity everywhere).
    EXPECT_FALSE(std::isnan(k_ref[static_cast<std::size_t>(s.past_len) * s.kv_dim()]));
    if (c.past_len > 0) {
      EXPECT_NE(qkv_ref, qkv0);
    }
  }
}

// ---- SwiGLU into down_proj -------------------------------------------------------------------

TEST(FusedOps, SwigluDownReferenceEqualsSwigluThenTheMatmul) {
  for (const DType dtype : {DType::kFp32, DType::kBf16, DType::kFp16}) {
    for (const int n_rows : {1, 3, 7}) {
      for (const auto& [dim, ffn_dim] : {std::pair{1, 1}, std::pair{19, 7}, std::pair{64, 733}}) {
        SCOPED_TRACE(::testing::Message() << dtype_name(dtype) << " n_rows " << n_rows << ", dim "
                                          << dim << ", ffn_dim " << ffn_dim);
        std::vector<float> gate_up =
            random_floats(2 * static_cast<std::size_t>(n_rows) * ffn_dim, 5, -12.0f, 12.0f);
        gate_up[0] = -200.0f;  // silu is -0 there, not NaN
        const std::vector<float> w = random_floats(static_cast<std::size_t>(dim) * ffn_dim, 6);
        std::vector<std::uint16_t> w_half(w.size());
        for (std::size_t i = 0; i < w.size(); ++i)
          w_half[i] = dtype == DType::kBf16 ? fp32_to_bf16(w[i]) : fp32_to_fp16(w[i]);
        const void* w_any = dtype == DType::kFp32 ? static_cast<const void*>(w.data())
                                                  : static_cast<const void*>(w_half.data());

        std::vector<float> act(static_cast<std::size_t>(n_rows) * ffn_dim);
        std::vector<float> ref(static_cast<std::size_t>(n_rows) * dim);
        swiglu_reference(act.data(), gate_up.data(), n_rows, ffn_dim);
        if (dtype == DType::kFp32)
          matmul_reference(ref.data(), act.data(), w.data(), n_rows, dim, ffn_dim, ffn_dim);
        else
          matmul_half_reference(ref.data(), act.data(), w_half.data(), dtype, n_rows, dim,
                                ffn_dim, ffn_dim);
        std::vector<float> out(ref.size(), NAN);
        swiglu_down_reference(out.data(), gate_up.data(), w_any, dtype, n_rows, dim, ffn_dim);
        EXPECT_EQ(out, ref);
      }
    }
  }
}

TEST(FusedOps, SwigluDownWithIdentityWeightsIsSwiglu) {
  const int n_rows = 3, ffn_dim = 5;
  const std::vector<float> gate_up = random_floats(2 * n_rows * ffn_dim, 7, -4.0f, 4.0f);
  std::vector<float> eye(ffn_dim * ffn_dim, 0.0f);
  for (int i = 0; i < ffn_dim; ++i) eye[i * ffn_dim + i] = 1.0f;
  std::vector<float> act(n_rows * ffn_dim), out(n_rows * ffn_dim);
  swiglu_reference(act.data(), gate_up.data(), n_rows, ffn_dim);
  swiglu_down_reference(out.data(), gate_up.data(), eye.data(), DType::kFp32, n_rows, ffn_dim,
                        ffn_dim);
  EXPECT_EQ(out, act);
  // And by hand: silu(0) * u = 0, silu(g) * 1 = g / (1 + e^-g).
  const std::vector<float> one_row = {0.0f, 2.0f, 7.0f, 1.0f};  // gate (0, 2) | up (7, 1)
  std::vector<float> two(2, NAN);
  const std::vector<float> eye2 = {1.0f, 0.0f, 0.0f, 1.0f};
  swiglu_down_reference(two.data(), one_row.data(), eye2.data(), DType::kFp32, 1, 2, 2);
  EXPECT_EQ(two[0], 0.0f);
  EXPECT_NEAR(two[1], 2.0 / (1.0 + std::exp(-2.0)), 1e-6);
}

TEST(FusedOps, SwigluDownRefusesQuantisedWeights) {
  float out = 0, gate_up[2] = {1, 1}, w = 1;
  EXPECT_THROW(swiglu_down_reference(&out, gate_up, &w, DType::kInt8, 1, 1, 1), Error);
}

}  // namespace
}  // namespace llmbench::cpu
