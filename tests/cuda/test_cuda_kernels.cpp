// Every CUDA op (kernels/cuda) against its CPU reference (kernels/cpu, the spec) on the same
// inputs: odd sizes (1, 3, 7, 19, 733) and model shapes (head_dim 64 and 128, GQA 32/4 and 14/2,
// batch 1 and 4, past_len 0 and 37, contexts up to 32768 keys). Copies must be exact; fp32 math
// within atol + rtol * |ref| (1e-6 + 1e-5 relative; attention 1e-5 + 1e-4); bf16/fp16 GEMMs
// against the reference on the same rounded inputs, with a tolerance scaled by k. NaN and Inf
// always fail, and a failure names the worst element (tests/kernels/check.h). Output buffers
// start as NaN or as random values the reference leaves alone, so a skipped element fails too.
// Every test skips (GTEST_SKIP) when no CUDA device is present.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <random>
#include <utility>
#include <vector>

#include "kernels/common/error.h"
#include "kernels/common/half.h"
#include "kernels/cpu/argmax.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/embedding.h"
#include "kernels/cpu/kv_cache.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/read_sum.h"
#include "kernels/cpu/rmsnorm.h"
#include "kernels/cpu/rope.h"
#include "kernels/cpu/swiglu.h"
#include "kernels/cuda/argmax.cuh"
#include "kernels/cuda/attention.cuh"
#include "kernels/cuda/attention_gemm.cuh"
#include "kernels/cuda/convert.cuh"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/embedding.cuh"
#include "kernels/cuda/gemm.cuh"
#include "kernels/cuda/gemv_half.cuh"
#include "kernels/cuda/kv_cache.cuh"
#include "kernels/cuda/read_sum.cuh"
#include "kernels/cuda/rmsnorm.cuh"
#include "kernels/cuda/rope.cuh"
#include "kernels/cuda/swiglu.cuh"
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
using test::kAttentionAtol;
using test::kAttentionRtol;
using test::nan_floats;
using test::HalfType;

constexpr int kOddSizes[] = {1, 3, 7, 19, 733};
constexpr float kInf = INFINITY;

class CudaKernels : public test::CudaStreamTest {};

// n ints uniform in [lo, hi), from a fixed seed.
std::vector<int32_t> random_ints(std::size_t n, unsigned seed, int lo, int hi) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> dist(lo, hi - 1);
  std::vector<int32_t> v(n);
  for (int32_t& x : v) x = dist(rng);
  return v;
}

// ---- copies: embedding, gather_rows, kv_cache_write (exact) ---------------------------------

TEST_F(CudaKernels, EmbeddingCopiesTheTokensRows) {
  const int vocab = 1000;
  for (const int dim : {1, 7, 64, 733, 4096}) {
    const std::vector<float> table = random_floats(static_cast<std::size_t>(vocab) * dim, 1);
    const DeviceBuffer<float> d_table(table);
    for (const int n_tokens : kOddSizes) {
      SCOPED_TRACE(::testing::Message() << "n_tokens " << n_tokens << ", dim " << dim);
      const std::vector<int32_t> tokens = random_ints(n_tokens, 2, 0, vocab);
      std::vector<float> ref(static_cast<std::size_t>(n_tokens) * dim);
      cpu::embedding(ref.data(), table.data(), tokens.data(), n_tokens, dim);
      const DeviceBuffer<int32_t> d_tokens(tokens);
      DeviceBuffer<float> d_out = nan_floats(ref.size());
      embedding(d_out.get(), d_table.get(), d_tokens.get(), n_tokens, dim, stream_);
      sync();
      EXPECT_TRUE(all_close(d_out.download(), ref, 0.0, 0.0));
    }
  }
}

TEST_F(CudaKernels, GatherRowsCopiesTheChosenRows) {
  const int n_src = 37;
  for (const int dim : {1, 19, 896}) {
    const std::vector<float> x = random_floats(static_cast<std::size_t>(n_src) * dim, 3);
    const DeviceBuffer<float> d_x(x);
    for (const int n_rows : kOddSizes) {
      SCOPED_TRACE(::testing::Message() << "n_rows " << n_rows << ", dim " << dim);
      const std::vector<int32_t> rows = random_ints(n_rows, 4, 0, n_src);  // with repeats
      std::vector<float> ref(static_cast<std::size_t>(n_rows) * dim);
      cpu::gather_rows(ref.data(), x.data(), rows.data(), n_rows, dim);
      const DeviceBuffer<int32_t> d_rows(rows);
      DeviceBuffer<float> d_out = nan_floats(ref.size());
      gather_rows(d_out.get(), d_x.get(), d_rows.get(), n_rows, dim, stream_);
      sync();
      EXPECT_TRUE(all_close(d_out.download(), ref, 0.0, 0.0));
    }
  }
}

TEST_F(CudaKernels, KvCacheWritePlacesRowsAndLeavesTheRestAlone) {
  for (const int batch : {1, 4}) {
    for (const int n_new : {1, 7, 19}) {
      for (const int past_len : {0, 37}) {
        for (const int kv_dim : {7, 256, 512}) {
          SCOPED_TRACE(::testing::Message() << "batch " << batch << ", n_new " << n_new
                                            << ", past_len " << past_len << ", kv_dim " << kv_dim);
          const int src_stride = 3 * kv_dim + 1;  // rows of a fused qkv buffer, plus padding
          const int cache_seq = past_len + n_new + 5;
          const std::vector<float> src =
              random_floats(static_cast<std::size_t>(batch) * n_new * src_stride, 5);
          std::vector<float> ref =
              random_floats(static_cast<std::size_t>(batch) * cache_seq * kv_dim, 6);
          DeviceBuffer<float> d_cache(ref);  // the same old contents on both sides
          cpu::kv_cache_write(ref.data(), src.data(), src_stride, batch, n_new, past_len,
                              cache_seq, kv_dim);
          const DeviceBuffer<float> d_src(src);
          kv_cache_write(d_cache.get(), d_src.get(), src_stride, batch, n_new, past_len,
                         cache_seq, kv_dim, stream_);
          sync();
          EXPECT_TRUE(all_close(d_cache.download(), ref, 0.0, 0.0));
        }
      }
    }
  }
}

// ---- elementwise: add_inplace, add_bias_rows (exact: one add per element) --------------------

TEST_F(CudaKernels, AddInplaceAddsEveryElement) {
  // The last size exceeds one pass of the capped grid, so the grid-stride loop runs twice.
  for (const std::size_t n : {std::size_t{1}, std::size_t{3}, std::size_t{7}, std::size_t{19},
                              std::size_t{733}, (std::size_t{1} << 24) + 5}) {
    SCOPED_TRACE(::testing::Message() << "n " << n);
    std::vector<float> ref = random_floats(n, 7);
    const std::vector<float> y = random_floats(n, 8);
    DeviceBuffer<float> d_x(ref);
    const DeviceBuffer<float> d_y(y);
    cpu::add_inplace(ref.data(), y.data(), n);
    add_inplace(d_x.get(), d_y.get(), n, stream_);
    sync();
    EXPECT_TRUE(all_close(d_x.download(), ref, 0.0, 0.0));
  }
}

// The device read test: its per-block partial sums add up to the reference sum (the value is
// only a sink for the loads, so the tolerance is float rounding over n terms). Odd sizes leave a
// tail after the float4 loads; the last size makes the capped grid loop.
TEST_F(CudaKernels, ReadSumPartialsAddUpToTheReferenceSum) {
  for (const std::int64_t n : {std::int64_t{1}, std::int64_t{3}, std::int64_t{7}, std::int64_t{19},
                               std::int64_t{733}, (std::int64_t{1} << 24) + 5}) {
    SCOPED_TRACE(::testing::Message() << "n " << n);
    const std::vector<float> x = random_floats(std::size_t(n), 11, 0.0f, 1.0f);
    const DeviceBuffer<float> d_x(x);
    const int blocks = read_sum_blocks(n);
    ASSERT_GE(blocks, 1);
    ASSERT_LE(blocks, kReadSumMaxBlocks);
    DeviceBuffer<float> d_partial{std::size_t(blocks)};
    read_sum_partial(d_partial.get(), d_x.get(), n, stream_);
    sync();
    double total = 0;
    for (float p : d_partial.download()) total += p;
    const double ref = cpu::read_sum_reference(x.data(), n);
    EXPECT_NEAR(total, ref, 1e-6 * double(n) + 1e-6) << "blocks " << blocks;
  }
}

TEST_F(CudaKernels, AddBiasRowsAddsToTheFirstNOfEachRow) {
  for (const int n_rows : kOddSizes) {
    for (const int n : {1, 7, 896}) {
      SCOPED_TRACE(::testing::Message() << "n_rows " << n_rows << ", n " << n);
      const int stride = n + 5;  // the tail of each row must not change
      std::vector<float> ref = random_floats(static_cast<std::size_t>(n_rows) * stride, 9);
      const std::vector<float> bias = random_floats(n, 10);
      DeviceBuffer<float> d_x(ref);
      const DeviceBuffer<float> d_bias(bias);
      cpu::add_bias_rows(ref.data(), n_rows, stride, bias.data(), n);
      add_bias_rows(d_x.get(), n_rows, stride, d_bias.get(), n, stream_);
      sync();
      EXPECT_TRUE(all_close(d_x.download(), ref, 0.0, 0.0));
    }
  }
}

// ---- RMSNorm -----------------------------------------------------------------------------------

TEST_F(CudaKernels, RmsnormMatchesTheCpu) {
  const float eps = 1e-5f;
  for (const int dim : {1, 7, 64, 733, 4096}) {
    const std::vector<float> weight = random_floats(dim, 11, 0.5f, 1.5f);
    const DeviceBuffer<float> d_weight(weight);
    for (const int n_rows : kOddSizes) {
      SCOPED_TRACE(::testing::Message() << "n_rows " << n_rows << ", dim " << dim);
      const std::vector<float> x = random_floats(static_cast<std::size_t>(n_rows) * dim, 12,
                                                 -3.0f, 3.0f);
      std::vector<float> ref(x.size());
      cpu::rmsnorm(ref.data(), x.data(), weight.data(), n_rows, dim, eps);
      const DeviceBuffer<float> d_x(x);
      DeviceBuffer<float> d_out = nan_floats(x.size());
      rmsnorm(d_out.get(), d_x.get(), d_weight.get(), n_rows, dim, eps, stream_);
      sync();
      EXPECT_TRUE(all_close(d_out.download(), ref, kAtol, kRtol));
    }
  }
}

TEST_F(CudaKernels, RmsnormInPlace) {
  const int n_rows = 19, dim = 2048;
  const float eps = 1e-6f;
  const std::vector<float> weight = random_floats(dim, 13, 0.5f, 1.5f);
  std::vector<float> ref = random_floats(static_cast<std::size_t>(n_rows) * dim, 14, -50.0f, 50.0f);
  DeviceBuffer<float> d_x(ref);
  const DeviceBuffer<float> d_weight(weight);
  cpu::rmsnorm(ref.data(), ref.data(), weight.data(), n_rows, dim, eps);
  rmsnorm(d_x.get(), d_x.get(), d_weight.get(), n_rows, dim, eps, stream_);
  sync();
  EXPECT_TRUE(all_close(d_x.download(), ref, kAtol, kRtol));
}

// ---- RoPE --------------------------------------------------------------------------------------

TEST_F(CudaKernels, RopeMatchesTheCpuAndLeavesRowTailsAlone) {
  struct Heads {
    int n_heads, head_dim;
    float theta;
  };
  for (const Heads c : {Heads{32, 64, 10000.0f}, Heads{14, 128, 1000000.0f},
                        Heads{2, 128, 500000.0f}, Heads{4, 6, 10000.0f}}) {
    for (const int n_rows : kOddSizes) {
      SCOPED_TRACE(::testing::Message() << "n_rows " << n_rows << ", n_heads " << c.n_heads
                                        << ", head_dim " << c.head_dim << ", theta " << c.theta);
      const int stride = c.n_heads * c.head_dim + 5;
      std::vector<float> ref = random_floats(static_cast<std::size_t>(n_rows) * stride, 15);
      const std::vector<int32_t> positions = random_ints(n_rows, 16, 0, 32768);
      DeviceBuffer<float> d_x(ref);
      const DeviceBuffer<int32_t> d_positions(positions);
      cpu::rope(ref.data(), n_rows, stride, c.n_heads, c.head_dim, positions.data(), c.theta);
      rope(d_x.get(), n_rows, stride, c.n_heads, c.head_dim, d_positions.get(), c.theta, stream_);
      sync();
      EXPECT_TRUE(all_close(d_x.download(), ref, kAtol, kRtol));
    }
  }
}

// ---- SwiGLU ------------------------------------------------------------------------------------

TEST_F(CudaKernels, SwigluMatchesTheCpu) {
  for (const int ffn_dim : {1, 7, 733, 5632}) {
    for (const int n_rows : kOddSizes) {
      SCOPED_TRACE(::testing::Message() << "n_rows " << n_rows << ", ffn_dim " << ffn_dim);
      std::vector<float> gate_up =
          random_floats(2 * static_cast<std::size_t>(n_rows) * ffn_dim, 17, -12.0f, 12.0f);
      gate_up[0] = -200.0f;  // exp(200) overflows: silu is -0, not NaN
      if (ffn_dim > 1) gate_up[1] = 200.0f;
      std::vector<float> ref(static_cast<std::size_t>(n_rows) * ffn_dim);
      cpu::swiglu_reference(ref.data(), gate_up.data(), n_rows, ffn_dim);
      const DeviceBuffer<float> d_gate_up(gate_up);
      DeviceBuffer<float> d_out = nan_floats(ref.size());
      swiglu(d_out.get(), d_gate_up.get(), n_rows, ffn_dim, stream_);
      sync();
      EXPECT_TRUE(all_close(d_out.download(), ref, kAtol, kRtol));
    }
  }
}

// ---- attention ---------------------------------------------------------------------------------

// Runs cuda::attention and cpu::attention on the same random q and cache (q scaled by q_scale;
// k_cache replaced by `k` when given) and compares the whole output buffer, including the
// padding between output rows, which both must leave alone.
// Which implementation attention_matches_cpu runs: the kernel, the kernel split over keys
// (aiming at target_blocks), or the GEMM path (scores of a chunk within score_budget bytes).
// `kernel`: which attention kernel the first two run (the GEMM path has none).
struct AttentionPath {
  enum Kind { kKernel, kSplit, kGemm } kind = kKernel;
  int target_blocks = 264;
  std::size_t score_budget = std::size_t{256} << 20;
  AttentionKernel kernel = AttentionKernel::kTiled;
};

constexpr AttentionKernel kBothKernels[] = {AttentionKernel::kTiled, AttentionKernel::kStreamed};

const char* kernel_name(AttentionKernel k) {
  return k == AttentionKernel::kTiled ? "tiled" : "streamed";
}

::testing::AssertionResult attention_matches_cpu(const AttentionShape& s, cudaStream_t stream,
                                                 unsigned seed, float q_scale = 1.0f,
                                                 const std::vector<float>* k = nullptr,
                                                 AttentionPath path = {}) {
  const std::size_t rows = static_cast<std::size_t>(s.batch) * s.n_new;
  const std::size_t cache =
      static_cast<std::size_t>(s.batch) * s.cache_seq * s.n_kv_heads * s.head_dim;
  const std::vector<float> q = random_floats(rows * s.q_stride, seed, -q_scale, q_scale);
  const std::vector<float> k_cache = k != nullptr ? *k : random_floats(cache, seed + 1);
  const std::vector<float> v_cache = random_floats(cache, seed + 2);
  std::vector<float> ref = random_floats(rows * s.out_stride, seed + 3);
  DeviceBuffer<float> d_out(ref);
  cpu::attention(ref.data(), q.data(), k_cache.data(), v_cache.data(), s);
  const DeviceBuffer<float> d_q(q), d_k(k_cache), d_v(v_cache);
  if (path.kind == AttentionPath::kKernel) {
    attention(d_out.get(), d_q.get(), d_k.get(), d_v.get(), s, stream, {}, path.kernel);
  } else if (path.kind == AttentionPath::kSplit) {
    const std::size_t floats = attention_split_floats(s, path.target_blocks);
    DeviceBuffer<float> scratch(floats);
    attention(d_out.get(), d_q.get(), d_k.get(), d_v.get(), s, stream,
              AttentionSplit{scratch.get(), floats, path.target_blocks}, path.kernel);
    LLMBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  } else {
    CublasHandle cublas;
    cublas.set_stream(stream);
    const std::size_t bytes = attention_gemm_scratch_bytes(s, path.score_budget);
    if (bytes == 0) return ::testing::AssertionFailure() << "attention_gemm refused the shape";
    DeviceBuffer<unsigned char> scratch(bytes);
    attention_gemm(cublas.get(), d_out.get(), d_q.get(), d_k.get(), d_v.get(), s,
                   row_major_strides(s), scratch.get(), bytes, stream);
    LLMBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  LLMBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  return all_close(d_out.download(), ref, kAttentionAtol, kAttentionRtol);
}

// A shape with q rows laid out like a fused qkv buffer and padded output rows and cache.
AttentionShape make_shape(int batch, int n_new, int past_len, int n_heads, int n_kv_heads,
                          int head_dim) {
  return AttentionShape{.batch = batch,
                        .n_new = n_new,
                        .past_len = past_len,
                        .n_heads = n_heads,
                        .n_kv_heads = n_kv_heads,
                        .head_dim = head_dim,
                        .q_stride = (n_heads + 2 * n_kv_heads) * head_dim,
                        .out_stride = n_heads * head_dim + 5,
                        .cache_seq = past_len + n_new + 3};
}

TEST_F(CudaKernels, AttentionMatchesTheCpuForPrefillAndDecodeShapes) {
  struct Heads {
    int n_heads, n_kv_heads;
  };
  // head_dim 96 and 32: the streamed kernel cannot take them and runs the tiled one.
  for (const AttentionKernel kernel : kBothKernels) {
    for (const Heads g : {Heads{32, 4}, Heads{14, 2}}) {
      for (const int head_dim : {64, 128, 256, 96, 32}) {
        for (const int batch : {1, 4}) {
          for (const int past_len : {0, 37}) {
            for (const int n_new : {1, 3, 7, 19}) {
              SCOPED_TRACE(::testing::Message()
                           << kernel_name(kernel) << ", heads " << g.n_heads << "/"
                           << g.n_kv_heads << ", head_dim " << head_dim << ", batch " << batch
                           << ", past_len " << past_len << ", n_new " << n_new);
              const AttentionShape s =
                  make_shape(batch, n_new, past_len, g.n_heads, g.n_kv_heads, head_dim);
              AttentionPath path;
              path.kernel = kernel;
              EXPECT_TRUE(attention_matches_cpu(s, stream_, 20, 1.0f, nullptr, path));
            }
          }
        }
      }
    }
  }
}

TEST_F(CudaKernels, AttentionPrefillOf733Tokens) {
  EXPECT_TRUE(attention_matches_cpu(make_shape(1, 733, 0, 14, 2, 64), stream_, 21));
  EXPECT_TRUE(attention_matches_cpu(make_shape(2, 733, 37, 4, 4, 128), stream_, 22));
}

TEST_F(CudaKernels, AttentionOverLongContextsCrossesScoreTiles) {
  // Up to 32768 keys: 16 tiles of scores (tiled), 1024 chunks per warp (streamed). q scaled up
  // so the softmax is far from uniform and the running maximum moves between tiles.
  for (const AttentionKernel kernel : kBothKernels) {
    SCOPED_TRACE(kernel_name(kernel));
    AttentionPath path;
    path.kernel = kernel;
    EXPECT_TRUE(attention_matches_cpu(make_shape(2, 2, 32766, 4, 2, 128), stream_, 23, 4.0f,
                                      nullptr, path));
    EXPECT_TRUE(attention_matches_cpu(make_shape(1, 1, 4999, 32, 4, 64), stream_, 24, 4.0f,
                                      nullptr, path));
    EXPECT_TRUE(attention_matches_cpu(make_shape(1, 1, 3001, 8, 2, 256), stream_, 26, 4.0f,
                                      nullptr, path));
  }
}

TEST_F(CudaKernels, AttentionRescalesWhenEachTileRaisesTheMaximum) {
  // One head, keys k_j = c_j q / |q|^2 * sqrt(d): score_j = c_j exactly in exact arithmetic.
  // Rising c_j puts a new maximum in every tile; falling c_j keeps it in the first.
  const int head_dim = 64, n_keys = 5001;
  using K = AttentionKernel;
  for (const auto& [rising, kernel] : {std::pair{true, K::kTiled}, std::pair{false, K::kTiled},
                                      std::pair{true, K::kStreamed},
                                      std::pair{false, K::kStreamed}}) {
    SCOPED_TRACE(::testing::Message() << (rising ? "rising scores, " : "falling scores, ")
                                      << kernel_name(kernel));
    AttentionShape s = make_shape(1, 1, n_keys - 1, 1, 1, head_dim);
    s.q_stride = head_dim;
    const std::vector<float> q = random_floats(head_dim, 25);  // what attention_matches_cpu draws
    double q_norm2 = 0.0;
    for (const float x : q) q_norm2 += static_cast<double>(x) * x;
    std::vector<float> k(static_cast<std::size_t>(s.cache_seq) * head_dim, 0.0f);
    for (int j = 0; j < n_keys; ++j) {
      const double c = 12.0 * (rising ? j : n_keys - 1 - j) / n_keys;
      for (int i = 0; i < head_dim; ++i)
        k[static_cast<std::size_t>(j) * head_dim + i] =
            static_cast<float>(c * q[i] / q_norm2 * std::sqrt(double{head_dim}));
    }
    AttentionPath path;
    path.kernel = kernel;
    EXPECT_TRUE(attention_matches_cpu(s, stream_, 25, 1.0f, &k, path));
  }
}

TEST_F(CudaKernels, AttentionSplitOverKeysMatchesTheCpu) {
  for (const AttentionKernel kernel : kBothKernels) {
    SCOPED_TRACE(kernel_name(kernel));
    AttentionPath split{AttentionPath::kSplit};
    split.kernel = kernel;
    // Decode at batch 1 (32 queries for 264 blocks: 32-key splits), long contexts, GQA, a split
    // count that leaves the last split short, queries whose later splits are empty, and
    // (streamed) splits shorter than a warp's chunks, so that some warps have no keys.
    EXPECT_TRUE(attention_matches_cpu(make_shape(1, 1, 255, 32, 32, 128), stream_, 40, 1.0f,
                                      nullptr, split));
    EXPECT_TRUE(attention_matches_cpu(make_shape(1, 1, 4999, 32, 4, 64), stream_, 41, 4.0f,
                                      nullptr, split));
    EXPECT_TRUE(attention_matches_cpu(make_shape(2, 3, 100, 4, 2, 128), stream_, 42, 1.0f,
                                      nullptr, split));
    EXPECT_TRUE(attention_matches_cpu(make_shape(1, 1, 70, 1, 1, 64), stream_, 43, 1.0f,
                                      nullptr, split));
    EXPECT_TRUE(attention_matches_cpu(make_shape(1, 40, 0, 1, 1, 64), stream_, 44, 1.0f,
                                      nullptr, split));
    EXPECT_TRUE(attention_matches_cpu(make_shape(1, 1, 0, 8, 8, 64), stream_, 45, 1.0f, nullptr,
                                      split));
    EXPECT_TRUE(attention_matches_cpu(make_shape(1, 1, 1000, 4, 4, 256), stream_, 47, 4.0f,
                                      nullptr, split));
    // An odd target: 7 blocks for 2 queries.
    AttentionPath odd{AttentionPath::kSplit, 7};
    odd.kernel = kernel;
    EXPECT_TRUE(attention_matches_cpu(make_shape(1, 1, 2100, 2, 1, 128), stream_, 46, 4.0f,
                                      nullptr, odd));
  }
  // Enough queries to fill the target: no split, no scratch.
  EXPECT_EQ(attention_split_floats(make_shape(16, 1, 100, 32, 32, 128), 264), 0u);
}

TEST_F(CudaKernels, AttentionGemmMatchesTheCpuForPrefillShapes) {
  const AttentionPath gemm{AttentionPath::kGemm};
  EXPECT_TRUE(attention_matches_cpu(make_shape(1, 128, 0, 32, 32, 128), stream_, 50, 1.0f,
                                    nullptr, gemm));
  EXPECT_TRUE(attention_matches_cpu(make_shape(2, 200, 37, 8, 2, 64), stream_, 51, 4.0f,
                                    nullptr, gemm));
  EXPECT_TRUE(attention_matches_cpu(make_shape(1, 733, 0, 14, 2, 64), stream_, 52, 1.0f,
                                    nullptr, gemm));
  EXPECT_TRUE(attention_matches_cpu(make_shape(3, 33, 5, 6, 3, 32), stream_, 53, 1.0f, nullptr,
                                    gemm));
  // A budget of one byte: one (sequence, head) pair per chunk, 8 chunks.
  EXPECT_TRUE(attention_matches_cpu(make_shape(2, 50, 7, 4, 2, 64), stream_, 54, 1.0f, nullptr,
                                    AttentionPath{AttentionPath::kGemm, 0, 1}));
}

TEST_F(CudaKernels, AttentionRejectsUnsupportedShapes) {
  AttentionShape s = make_shape(1, 1, 0, 2, 2, kAttentionMaxHeadDim * 2);
  EXPECT_THROW(attention(nullptr, nullptr, nullptr, nullptr, s, stream_), Error);
  s = make_shape(1, 1, 0, 6, 4, 64);  // 4 kv heads do not divide 6 query heads
  EXPECT_THROW(attention(nullptr, nullptr, nullptr, nullptr, s, stream_), Error);
}

// Host code only: runs without a device.
TEST(AttentionStreamed, TakesHeadDims64To256WithRowsAlignedForItsVectorLoads) {
  alignas(16) static float cache[64];
  for (const int head_dim : {64, 128, 256}) {
    const AttentionShape s = make_shape(1, 1, 10, 4, 2, head_dim);
    const AttentionStrides st = row_major_strides(s);
    EXPECT_TRUE(attention_streamed_supported(s, st, cache, cache)) << head_dim;
    // A cache one float off the vector loads' alignment, or rows that are.
    EXPECT_FALSE(attention_streamed_supported(s, st, cache + 1, cache)) << head_dim;
    EXPECT_FALSE(attention_streamed_supported(s, st, cache, cache + 1)) << head_dim;
    AttentionStrides odd = st;
    odd.kv.seq += 1;
    EXPECT_FALSE(attention_streamed_supported(s, odd, cache, cache)) << head_dim;
  }
  // head_dim 64 loads float2: 8-byte alignment is enough.
  const AttentionShape s64 = make_shape(1, 1, 10, 4, 2, 64);
  AttentionStrides st64 = row_major_strides(s64);
  st64.kv.seq += 2;
  EXPECT_TRUE(attention_streamed_supported(s64, st64, cache + 2, cache + 2));
  for (const int head_dim : {32, 96, 80, 192}) {
    const AttentionShape s = make_shape(1, 1, 10, 4, 2, head_dim);
    EXPECT_FALSE(attention_streamed_supported(s, row_major_strides(s), cache, cache)) << head_dim;
  }
}

// ---- argmax ------------------------------------------------------------------------------------

TEST_F(CudaKernels, ArgmaxMatchesTheCpuWithTiesNansAndInfinities) {
  for (const int n_cols : {1, 7, 733, 32000, 151936}) {
    for (const int n_rows : {1, 3, 7, 19}) {
      SCOPED_TRACE(::testing::Message() << "n_rows " << n_rows << ", n_cols " << n_cols);
      // Integer values in a narrow range: the maximum repeats, so ties are common.
      const std::vector<int32_t> ints =
          random_ints(static_cast<std::size_t>(n_rows) * n_cols, 26, -500, 500);
      std::vector<float> x(ints.begin(), ints.end());
      std::mt19937 rng(27);
      auto at = [&](int r) -> float& {
        return x[static_cast<std::size_t>(r) * n_cols + rng() % n_cols];
      };
      if (n_rows > 1) at(1) = NAN, at(1) = NAN, at(1) = kInf;  // the first NaN wins
      if (n_rows > 2) at(2) = kInf, at(2) = kInf;              // the first +inf wins
      if (n_rows > 3) {
        for (int j = 0; j < n_cols; ++j) x[3 * static_cast<std::size_t>(n_cols) + j] = -kInf;
      }
      if (n_rows > 4) {
        for (int j = 0; j < n_cols; ++j) x[4 * static_cast<std::size_t>(n_cols) + j] = 2.5f;
      }
      std::vector<int32_t> ref(n_rows, -1);
      cpu::argmax_rows_reference(ref.data(), x.data(), n_rows, n_cols);
      const DeviceBuffer<float> d_x(x);
      DeviceBuffer<int32_t> d_out(n_rows);
      d_out.fill_bytes(0xFF);  // -1
      argmax_rows(d_out.get(), d_x.get(), n_rows, n_cols, stream_);
      sync();
      EXPECT_EQ(d_out.download(), ref);
    }
  }
}

TEST_F(CudaKernels, ArgmaxOfEmptyRowsIsZero) {
  DeviceBuffer<int32_t> d_out(3);
  d_out.fill_bytes(0xFF);
  argmax_rows(d_out.get(), nullptr, 3, 0, stream_);
  sync();
  EXPECT_EQ(d_out.download(), (std::vector<int32_t>{0, 0, 0}));
}

// ---- conversions: bit-exact against kernels/common/half.h ----------------------------------------------

// Finite values, the edges of both formats, and their rounding ties.
std::vector<float> conversion_inputs() {
  std::vector<float> x = random_floats(100000, 28, -70000.0f, 70000.0f);
  const std::vector<float> small = random_floats(100000, 29, -1e-3f, 1e-3f);
  x.insert(x.end(), small.begin(), small.end());
  for (const float v : {0.0f, -0.0f, 1.0f, -1.0f, 65504.0f, 65519.0f, 65520.0f, -65520.0f,
                        6.1035156e-5f, 5.9604645e-8f, 2.9802322e-8f, 2.9802326e-8f, 1e-10f,
                        3.3895314e38f, FLT_MAX, -FLT_MAX, FLT_MIN, kInf, -kInf, 1.00390625f,
                        1.01171875f, 1.0009765625f, 1.0029296875f})
    x.push_back(v);
  return x;
}

template <typename Half>
std::vector<std::uint16_t> bits_of(const std::vector<Half>& h) {
  std::vector<std::uint16_t> bits(h.size());
  static_assert(sizeof(Half) == sizeof(std::uint16_t));
  std::memcpy(bits.data(), h.data(), bits.size() * sizeof(std::uint16_t));
  return bits;
}

TEST_F(CudaKernels, ConvertFp32ToBf16AndFp16RoundsLikeTheHost) {
  const std::vector<float> x = conversion_inputs();
  const DeviceBuffer<float> d_x(x);
  DeviceBuffer<__nv_bfloat16> d_bf16(x.size());
  DeviceBuffer<__half> d_f16(x.size());
  convert_f32_to_bf16(d_bf16.get(), d_x.get(), x.size(), stream_);
  convert_f32_to_f16(d_f16.get(), d_x.get(), x.size(), stream_);
  sync();
  const std::vector<std::uint16_t> bf16 = bits_of(d_bf16.download());
  const std::vector<std::uint16_t> f16 = bits_of(d_f16.download());
  int bad = 0;
  for (std::size_t i = 0; i < x.size() && bad < 10; ++i) {
    if (bf16[i] != fp32_to_bf16(x[i]) || f16[i] != fp32_to_fp16(x[i])) {
      ADD_FAILURE() << "x = " << x[i] << ": bf16 " << bf16[i] << " (host " << fp32_to_bf16(x[i])
                    << "), fp16 " << f16[i] << " (host " << fp32_to_fp16(x[i]) << ")";
      ++bad;
    }
  }
  // NaN stays NaN (the payload may differ).
  const DeviceBuffer<float> d_nan(std::vector<float>{NAN});
  convert_f32_to_bf16(d_bf16.get(), d_nan.get(), 1, stream_);
  convert_f32_to_f16(d_f16.get(), d_nan.get(), 1, stream_);
  sync();
  EXPECT_TRUE(std::isnan(bf16_to_fp32(bits_of(d_bf16.download())[0])));
  EXPECT_TRUE(std::isnan(fp16_to_fp32(bits_of(d_f16.download())[0])));
}

TEST_F(CudaKernels, ConvertBf16AndFp16ToFp32IsExactForEveryBitPattern) {
  std::vector<std::uint16_t> all(65536);
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::uint16_t>(i);
  const DeviceBuffer<std::uint16_t> d_bits(all);
  DeviceBuffer<float> d_from_bf16(all.size()), d_from_f16(all.size());
  convert_bf16_to_f32(d_from_bf16.get(), reinterpret_cast<const __nv_bfloat16*>(d_bits.get()),
                      all.size(), stream_);
  convert_f16_to_f32(d_from_f16.get(), reinterpret_cast<const __half*>(d_bits.get()), all.size(),
                     stream_);
  sync();
  const std::vector<float> from_bf16 = d_from_bf16.download(), from_f16 = d_from_f16.download();
  int bad = 0;
  for (std::size_t i = 0; i < all.size() && bad < 10; ++i) {
    const float want_bf16 = bf16_to_fp32(all[i]), want_f16 = fp16_to_fp32(all[i]);
    const bool ok_bf16 = std::isnan(want_bf16) ? std::isnan(from_bf16[i])
                                               : std::memcmp(&want_bf16, &from_bf16[i], 4) == 0;
    const bool ok_f16 = std::isnan(want_f16) ? std::isnan(from_f16[i])
                                             : std::memcmp(&want_f16, &from_f16[i], 4) == 0;
    if (!ok_bf16 || !ok_f16) {
      ADD_FAILURE() << "bits " << i << ": bf16 -> " << from_bf16[i] << " (host " << want_bf16
                    << "), fp16 -> " << from_f16[i] << " (host " << want_f16 << ")";
      ++bad;
    }
  }
}

// ---- GEMMs against matmul_reference ------------------------------------------------------------

struct GemmShape {
  int m, n, k, lda;
};

constexpr GemmShape kGemmShapes[] = {
    {1, 19, 7, 7},        {3, 733, 64, 64},    {7, 2048, 733, 733}, {19, 733, 733, 733},
    {733, 64, 128, 128},  {1, 4096, 4096, 4096}, {16, 4096, 4096, 4096},
    {5, 33, 20, 29},  // x rows padded (lda > k)
};

// Tolerance for a k-term fp32 dot product of values in [-1, 1]: the reference is a double sum
// rounded once; fp32 accumulation errs by a few ulp per partial sum, far below k * FLT_EPSILON.
double gemm_atol(int k, double factor) { return factor * k * FLT_EPSILON + 1e-6; }

TEST_F(CudaKernels, GemmF32MatchesTheReference) {
  CublasHandle cublas;
  cublas.set_stream(stream_);
  for (const GemmShape g : kGemmShapes) {
    SCOPED_TRACE(::testing::Message() << "m " << g.m << ", n " << g.n << ", k " << g.k << ", lda "
                                      << g.lda);
    const std::vector<float> x = random_floats(static_cast<std::size_t>(g.m) * g.lda, 30);
    const std::vector<float> w = random_floats(static_cast<std::size_t>(g.n) * g.k, 31);
    std::vector<float> ref(static_cast<std::size_t>(g.m) * g.n);
    cpu::matmul_reference(ref.data(), x.data(), w.data(), g.m, g.n, g.k, g.lda);
    const DeviceBuffer<float> d_x(x), d_w(w);
    DeviceBuffer<float> d_out = nan_floats(ref.size());
    gemm_f32(cublas.get(), d_out.get(), d_x.get(), d_w.get(), g.m, g.n, g.k, g.lda);
    sync();
    EXPECT_TRUE(all_close(d_out.download(), ref, gemm_atol(g.k, 1.0), kRtol));
  }
}

TEST_F(CudaKernels, GemmWithKZeroWritesZeros) {
  CublasHandle cublas;
  cublas.set_stream(stream_);
  DeviceBuffer<float> d_out = nan_floats(6);
  gemm_f32(cublas.get(), d_out.get(), nullptr, nullptr, 2, 3, 0, 0);
  sync();
  EXPECT_EQ(d_out.download(), std::vector<float>(6, 0.0f));
}

// bf16 / fp16: x and w are narrowed on the device (convert.cuh) and on the host (kernels/common/half.h,
// bit-identical: see above); the reference multiplies the narrowed values, so the only difference
// left is fp32 accumulation on tensor cores, whose alignment of partial sums may truncate
// (hence a tolerance a few times that of gemm_f32).

// Decode shapes for gemv_half: m <= kGemvRowsMax, k and lda multiples of 8, the Llama
// projections' k (4096, 11008), padded x rows, and n not a multiple of the 8 rows per block.
constexpr GemmShape kGemvShapes[] = {
    {1, 19, 8, 8},          {2, 733, 64, 64},       {3, 4096, 4096, 4096},
    {4, 100, 11008, 11008}, {1, 32000, 256, 256},   {4, 33, 24, 40},
    {1, 7, 2056, 2056},
};

// gemv: run gemv_bf16 / gemv_f16 over kGemvShapes instead of the cuBLAS GEMMs over kGemmShapes.
void check_half_gemm(HalfType type, cudaStream_t stream, bool gemv = false) {
  CublasHandle cublas;
  cublas.set_stream(stream);
  const auto shapes = gemv ? std::vector<GemmShape>(std::begin(kGemvShapes), std::end(kGemvShapes))
                           : std::vector<GemmShape>(std::begin(kGemmShapes), std::end(kGemmShapes));
  for (const GemmShape g : shapes) {
    if (gemv) {
      ASSERT_TRUE(gemv_half_supported(g.m, g.k, g.lda));
    }
    SCOPED_TRACE(::testing::Message() << (type == HalfType::kBf16 ? "bf16" : "fp16") << " m "
                                      << g.m << ", n " << g.n << ", k " << g.k << ", lda "
                                      << g.lda);
    std::vector<float> x = random_floats(static_cast<std::size_t>(g.m) * g.lda, 32);
    std::vector<float> w = random_floats(static_cast<std::size_t>(g.n) * g.k, 33);
    const DeviceBuffer<float> d_x32(x), d_w32(w);
    auto narrow = [type](float v) {
      return type == HalfType::kBf16 ? bf16_to_fp32(fp32_to_bf16(v))
                                     : fp16_to_fp32(fp32_to_fp16(v));
    };
    for (float& v : x) v = narrow(v);
    for (float& v : w) v = narrow(v);
    std::vector<float> ref(static_cast<std::size_t>(g.m) * g.n);
    cpu::matmul_reference(ref.data(), x.data(), w.data(), g.m, g.n, g.k, g.lda);

    DeviceBuffer<float> d_out = nan_floats(ref.size());
    if (type == HalfType::kBf16) {
      DeviceBuffer<__nv_bfloat16> d_x(x.size()), d_w(w.size());
      convert_f32_to_bf16(d_x.get(), d_x32.get(), x.size(), stream);
      convert_f32_to_bf16(d_w.get(), d_w32.get(), w.size(), stream);
      if (gemv)
        gemv_bf16(d_out.get(), d_x.get(), d_w.get(), g.m, g.n, g.k, g.lda, stream);
      else
        gemm_bf16(cublas.get(), d_out.get(), d_x.get(), d_w.get(), g.m, g.n, g.k, g.lda);
      LLMBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));  // before d_x and d_w are freed
    } else {
      DeviceBuffer<__half> d_x(x.size()), d_w(w.size());
      convert_f32_to_f16(d_x.get(), d_x32.get(), x.size(), stream);
      convert_f32_to_f16(d_w.get(), d_w32.get(), w.size(), stream);
      if (gemv)
        gemv_f16(d_out.get(), d_x.get(), d_w.get(), g.m, g.n, g.k, g.lda, stream);
      else
        gemm_f16(cublas.get(), d_out.get(), d_x.get(), d_w.get(), g.m, g.n, g.k, g.lda);
      LLMBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    EXPECT_TRUE(all_close(d_out.download(), ref, gemm_atol(g.k, 8.0), 1e-4));
  }
}

TEST_F(CudaKernels, GemmBf16MatchesTheReferenceOnRoundedInputs) {
  check_half_gemm(HalfType::kBf16, stream_);
}

TEST_F(CudaKernels, GemmF16MatchesTheReferenceOnRoundedInputs) {
  check_half_gemm(HalfType::kF16, stream_);
}

TEST_F(CudaKernels, GemvBf16MatchesTheReferenceOnRoundedInputs) {
  check_half_gemm(HalfType::kBf16, stream_, /*gemv=*/true);
}

TEST_F(CudaKernels, GemvF16MatchesTheReferenceOnRoundedInputs) {
  check_half_gemm(HalfType::kF16, stream_, /*gemv=*/true);
}

TEST_F(CudaKernels, GemvRefusesShapesItDoesNotTake) {
  EXPECT_FALSE(gemv_half_supported(kGemvRowsMax + 1, 64, 64));
  EXPECT_FALSE(gemv_half_supported(1, 7, 7));    // k not a multiple of 8
  EXPECT_FALSE(gemv_half_supported(2, 64, 68));  // lda not a multiple of 8
  EXPECT_FALSE(gemv_half_supported(0, 64, 64));
  EXPECT_THROW(gemv_f16(nullptr, nullptr, nullptr, 1, 8, 7, 7, stream_), Error);
}

}  // namespace
}  // namespace llmbench::cuda
