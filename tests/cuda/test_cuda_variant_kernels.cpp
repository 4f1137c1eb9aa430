// The CUDA kernels behind the engine variants against their CPU references (kernels/cpu, the
// spec), on the same inputs: copy_heads between token-major and head-major layouts, the paged KV
// scatter and gather through a block table whose blocks are in descending order (never
// adjacent), attention over head-major operands, and paged attention through the table, at
// odd and model shapes, block sizes that divide nothing, and contexts beyond one score tile
// (2048 keys). Copies must be exact; attention within 1e-5 + 1e-4 relative, as in
// test_cuda_kernels.cpp. Output buffers start as the same random values on both sides, so an
// element the GPU writes and the CPU leaves alone (or the reverse) fails. Every test skips
// (GTEST_SKIP) when no CUDA device is present.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/copy_heads.h"
#include "kernels/cpu/paged_attention.h"
#include "kernels/cpu/paged_kv.h"
#include "kernels/cuda/attention.cuh"
#include "kernels/cuda/attention_gemm.cuh"
#include "kernels/cuda/copy_heads.cuh"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/gemm.cuh"
#include "kernels/cuda/paged_attention.cuh"
#include "kernels/cuda/paged_kv.cuh"
#include "tests/cuda/cuda_stream_test.h"
#include "tests/cuda/device_buffer.h"
#include "tests/kernels/check.h"

namespace llmbench::cuda {
namespace {

using test::all_close;
using test::DeviceBuffer;
using test::random_floats;
using test::kAttentionAtol;
using test::kAttentionRtol;

class CudaVariantKernels : public test::CudaStreamTest {};

// A block table for `batch` sequences of max_blocks entries, handed out in descending order
// from the top of a pool of batch * max_blocks blocks, interleaved across sequences.
std::vector<std::int32_t> descending_table(int batch, int max_blocks) {
  std::vector<std::int32_t> table(static_cast<std::size_t>(batch) * max_blocks);
  int next = batch * max_blocks - 1;
  for (int k = 0; k < max_blocks; ++k)
    for (int b = 0; b < batch; ++b) table[static_cast<std::size_t>(b) * max_blocks + k] = next--;
  return table;
}

struct Shape {
  int batch, seq, heads, head_dim;
};

TEST_F(CudaVariantKernels, CopyHeadsMatchesTheCpuBothWays) {
  for (const Shape s : {Shape{1, 1, 1, 1}, Shape{2, 7, 4, 64}, Shape{3, 19, 14, 128},
                        Shape{1, 733, 2, 64}}) {
    SCOPED_TRACE(::testing::Message() << s.batch << "x" << s.seq << "x" << s.heads << "x"
                                      << s.head_dim);
    const int row_stride = s.heads * s.head_dim + 3;  // padded rows: the padding stays
    const HeadStrides rows = token_major(s.seq, row_stride, s.head_dim);
    const HeadStrides hm = head_major(s.heads, s.seq, s.head_dim);
    const std::size_t n_rows = static_cast<std::size_t>(s.batch) * s.seq * row_stride;
    const std::size_t n_hm = static_cast<std::size_t>(s.batch) * s.seq * s.heads * s.head_dim;
    const std::vector<float> in = random_floats(n_rows, 1);
    // rows -> head-major
    std::vector<float> ref = random_floats(n_hm, 2);
    DeviceBuffer<float> d_out(ref);
    const DeviceBuffer<float> d_in(in);
    cpu::copy_heads(ref.data(), hm, in.data(), rows, s.batch, s.seq, s.heads, s.head_dim);
    copy_heads(d_out.get(), hm, d_in.get(), rows, s.batch, s.seq, s.heads, s.head_dim, stream_);
    sync();
    EXPECT_TRUE(all_close(d_out.download(), ref, 0.0, 0.0));
    // head-major -> rows
    std::vector<float> back = random_floats(n_rows, 3);
    DeviceBuffer<float> d_back(back);
    cpu::copy_heads(back.data(), rows, ref.data(), hm, s.batch, s.seq, s.heads, s.head_dim);
    copy_heads(d_back.get(), rows, d_out.get(), hm, s.batch, s.seq, s.heads, s.head_dim, stream_);
    sync();
    EXPECT_TRUE(all_close(d_back.download(), back, 0.0, 0.0));
  }
}

TEST_F(CudaVariantKernels, PagedWriteAndGatherMatchTheCpu) {
  struct Case {
    int batch, kv_heads, head_dim, block_size;
  };
  for (const Case c : {Case{1, 1, 1, 1}, Case{3, 2, 64, 5}, Case{4, 8, 128, 16}}) {
    for (const bool src_head_major : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "batch " << c.batch << ", kv heads " << c.kv_heads
                                        << ", head_dim " << c.head_dim << ", block "
                                        << c.block_size << (src_head_major ? ", head-major" : ""));
      const int kv_dim = c.kv_heads * c.head_dim, max_len = 40;
      const PagedKv paged{c.block_size, (max_len + c.block_size - 1) / c.block_size};
      const std::vector<std::int32_t> table = descending_table(c.batch, paged.max_blocks);
      const DeviceBuffer<std::int32_t> d_table(table);
      const std::size_t pool_floats =
          static_cast<std::size_t>(c.batch) * paged.max_blocks * c.block_size * kv_dim;
      std::vector<float> pool = random_floats(pool_floats, 4);
      DeviceBuffer<float> d_pool(pool);
      int past = 0;
      for (const int n_new : {19, 1, 7}) {  // a prefill, a decode step, a chunk
        const int stride = kv_dim * 3;      // like k inside a fused qkv row
        const HeadStrides src_s = src_head_major
                                           ? head_major(c.kv_heads, n_new, c.head_dim)
                                           : token_major(n_new, stride, c.head_dim);
        const std::vector<float> src =
            random_floats(static_cast<std::size_t>(c.batch) * n_new * stride, 5 + past);
        const DeviceBuffer<float> d_src(src);
        cpu::kv_write_paged(pool.data(), table.data(), paged, src.data(), src_s, c.batch, n_new,
                            past, c.kv_heads, c.head_dim);
        kv_write_paged(d_pool.get(), d_table.get(), paged, d_src.get(), src_s, c.batch, n_new,
                       past, c.kv_heads, c.head_dim, stream_);
        past += n_new;
        sync();
        EXPECT_TRUE(all_close(d_pool.download(), pool, 0.0, 0.0)) << "after " << past;
      }
      std::vector<float> gathered =
          random_floats(static_cast<std::size_t>(c.batch) * max_len * kv_dim, 6);
      DeviceBuffer<float> d_gathered(gathered);
      cpu::kv_gather_paged(gathered.data(), pool.data(), table.data(), paged, c.batch, past,
                           kv_dim, max_len);
      kv_gather_paged(d_gathered.get(), d_pool.get(), d_table.get(), paged, c.batch, past, kv_dim,
                      max_len, stream_);
      sync();
      EXPECT_TRUE(all_close(d_gathered.download(), gathered, 0.0, 0.0));
    }
  }
}

struct AttnCase {
  int batch, n_new, past_len, n_heads, n_kv_heads, head_dim;
};

// Includes a decode over 2100 keys: more than one 2048-key score tile.
const AttnCase kAttnCases[] = {{1, 1, 0, 1, 1, 1},      {2, 7, 5, 4, 2, 16},
                               {3, 1, 37, 32, 4, 128},  {2, 19, 0, 14, 2, 64},
                               {1, 1, 2099, 8, 2, 64}};

AttentionShape shape_of(const AttnCase& a) {
  return {a.batch, a.n_new, a.past_len, a.n_heads, a.n_kv_heads, a.head_dim, 0, 0, 0};
}

TEST_F(CudaVariantKernels, AttentionOverHeadMajorOperandsMatchesTheCpu) {
  for (const AttnCase& a : kAttnCases) {
    SCOPED_TRACE(::testing::Message() << "batch " << a.batch << ", n_new " << a.n_new
                                      << ", past " << a.past_len << ", heads " << a.n_heads
                                      << "/" << a.n_kv_heads << ", head_dim " << a.head_dim);
    const AttentionShape s = shape_of(a);
    const int len = a.past_len + a.n_new + 2;  // cache longer than needed
    const AttentionStrides st{head_major(a.n_heads, a.n_new, a.head_dim),
                                   head_major(a.n_kv_heads, len, a.head_dim),
                                   head_major(a.n_heads, a.n_new, a.head_dim)};
    const std::size_t q_floats =
        static_cast<std::size_t>(a.batch) * a.n_heads * a.n_new * a.head_dim;
    const std::size_t kv_floats =
        static_cast<std::size_t>(a.batch) * a.n_kv_heads * len * a.head_dim;
    const std::vector<float> q = random_floats(q_floats, 7), k = random_floats(kv_floats, 8),
                             v = random_floats(kv_floats, 9);
    std::vector<float> ref = random_floats(q_floats, 10);
    DeviceBuffer<float> d_out(ref);
    const DeviceBuffer<float> d_q(q), d_k(k), d_v(v);
    cpu::attention_strided(ref.data(), q.data(), k.data(), v.data(), s, st);
    attention_strided(d_out.get(), d_q.get(), d_k.get(), d_v.get(), s, st, stream_);
    sync();
    EXPECT_TRUE(all_close(d_out.download(), ref, kAttentionAtol, kAttentionRtol));

    // The same operands through the key split (264 blocks wanted) and the GEMM path.
    DeviceBuffer<float> d_split(std::vector<float>(q_floats, 0.0f)),
        d_gemm(std::vector<float>(q_floats, 0.0f));
    const std::size_t split_floats = attention_split_floats(s, 264);
    DeviceBuffer<float> split_scratch(split_floats);
    attention_strided(d_split.get(), d_q.get(), d_k.get(), d_v.get(), s, st, stream_,
                      AttentionSplit{split_scratch.get(), split_floats, 264});
    CublasHandle cublas;
    cublas.set_stream(stream_);
    const std::size_t gemm_bytes = attention_gemm_scratch_bytes(s, 1);  // one pair per chunk
    ASSERT_GT(gemm_bytes, 0u);
    DeviceBuffer<unsigned char> gemm_scratch(gemm_bytes);
    attention_gemm(cublas.get(), d_gemm.get(), d_q.get(), d_k.get(), d_v.get(), s, st,
                   gemm_scratch.get(), gemm_bytes, stream_);
    sync();
    EXPECT_TRUE(all_close(d_split.download(), ref, kAttentionAtol, kAttentionRtol)) << "split";
    EXPECT_TRUE(all_close(d_gemm.download(), ref, kAttentionAtol, kAttentionRtol)) << "gemm";
  }
}

TEST_F(CudaVariantKernels, PagedAttentionMatchesTheCpu) {
  for (const AttnCase& a : kAttnCases) {
    for (const int block_size : {5, 16}) {
      SCOPED_TRACE(::testing::Message() << "batch " << a.batch << ", n_new " << a.n_new
                                        << ", past " << a.past_len << ", heads " << a.n_heads
                                        << "/" << a.n_kv_heads << ", head_dim " << a.head_dim
                                        << ", block " << block_size);
      const AttentionShape s = shape_of(a);
      const int len = a.past_len + a.n_new, kv_dim = a.n_kv_heads * a.head_dim;
      const PagedKv paged{block_size, (len + block_size - 1) / block_size};
      const std::vector<std::int32_t> table = descending_table(a.batch, paged.max_blocks);
      const std::size_t pool_floats =
          static_cast<std::size_t>(a.batch) * paged.max_blocks * block_size * kv_dim;
      const std::vector<float> k_pool = random_floats(pool_floats, 11),
                               v_pool = random_floats(pool_floats, 12);
      // q as rows of a fused qkv buffer, the output as plain rows.
      const int q_dim = a.n_heads * a.head_dim, qkv_dim = q_dim + 2 * kv_dim;
      const HeadStrides q_s = token_major(a.n_new, qkv_dim, a.head_dim);
      const HeadStrides out_s = token_major(a.n_new, q_dim, a.head_dim);
      const std::size_t rows = static_cast<std::size_t>(a.batch) * a.n_new;
      const std::vector<float> q = random_floats(rows * qkv_dim, 13);
      std::vector<float> ref = random_floats(rows * q_dim, 14);
      DeviceBuffer<float> d_out(ref);
      const DeviceBuffer<float> d_q(q), d_k(k_pool), d_v(v_pool);
      const DeviceBuffer<std::int32_t> d_table(table);
      cpu::paged_attention(ref.data(), q.data(), k_pool.data(), v_pool.data(), table.data(),
                           paged, s, q_s, out_s);
      paged_attention(d_out.get(), d_q.get(), d_k.get(), d_v.get(), d_table.get(), paged, s, q_s,
                      out_s, stream_);
      sync();
      EXPECT_TRUE(all_close(d_out.download(), ref, kAttentionAtol, kAttentionRtol));
      const std::size_t split_floats = attention_split_floats(s, 264);
      DeviceBuffer<float> split_scratch(split_floats);
      // Split over keys, aiming at 264 blocks (two per SM of an H100), with either kernel.
      for (const AttentionKernel kernel : {AttentionKernel::kTiled, AttentionKernel::kStreamed}) {
        DeviceBuffer<float> d_split(std::vector<float>(rows * q_dim, 0.0f));
        paged_attention(d_split.get(), d_q.get(), d_k.get(), d_v.get(), d_table.get(), paged, s,
                        q_s, out_s, stream_,
                        AttentionSplit{split_scratch.get(), split_floats, 264}, kernel);
        sync();
        EXPECT_TRUE(all_close(d_split.download(), ref, kAttentionAtol, kAttentionRtol))
            << (kernel == AttentionKernel::kTiled ? "split, tiled" : "split, streamed");
      }
      // Streamed, unsplit.
      DeviceBuffer<float> d_streamed(std::vector<float>(rows * q_dim, 0.0f));
      paged_attention(d_streamed.get(), d_q.get(), d_k.get(), d_v.get(), d_table.get(), paged, s,
                      q_s, out_s, stream_, {}, AttentionKernel::kStreamed);
      sync();
      EXPECT_TRUE(all_close(d_streamed.download(), ref, kAttentionAtol, kAttentionRtol))
          << "streamed";
    }
  }
}

}  // namespace
}  // namespace llmbench::cuda
