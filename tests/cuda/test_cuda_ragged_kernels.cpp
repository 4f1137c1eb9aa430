// The ragged (continuous-batching) CUDA ops against their CPU references
// (kernels/cpu/ragged_attention.h, the spec): rows of several sequences at their own positions,
// a scrambled block table, head_dim 64 and 128, GQA, and a row whose context crosses the
// kernel's 2048-key score tile. The write must be exact; attention within 1e-5 + 1e-4 relative.
// Skipped (GTEST_SKIP) when no CUDA device is present.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kernels/cpu/ragged_attention.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/ragged_attention.cuh"
#include "tests/cuda/cuda_stream_test.h"
#include "tests/cuda/device_buffer.h"
#include "tests/kernels/check.h"

namespace llmbench::cuda {
namespace {

using test::DeviceBuffer;

class CudaRagged : public test::CudaStreamTest {};

void check(cudaStream_t stream, int n_heads, int n_kv_heads, int head_dim, int block_size) {
  const int n_seqs = 3, max_len = 3000, kv_dim = n_kv_heads * head_dim;
  const PagedKv paged{block_size, (max_len + block_size - 1) / block_size};
  const int n_blocks = n_seqs * paged.max_blocks;
  std::vector<std::int32_t> table(static_cast<std::size_t>(n_blocks));
  for (int i = 0; i < n_blocks; ++i) table[i] = int((std::int64_t(i) * 7 + 3) % n_blocks);
  const std::size_t pool_floats = std::size_t(n_blocks) * block_size * kv_dim;
  std::vector<float> k_pool = test::random_floats(pool_floats, 1);
  std::vector<float> v_pool = test::random_floats(pool_floats, 2);
  // A decode row deep in a long context (crosses a score tile), a prompt chunk, a first row.
  std::vector<std::int32_t> seq = {1, 0, 0, 0, 2, 0, 0};
  std::vector<std::int32_t> pos = {2999, 40, 41, 42, 0, 43, 44};
  const int rows = int(seq.size()), q_dim = n_heads * head_dim, stride = q_dim + 5;
  const std::vector<float> q = test::random_floats(std::size_t(rows) * stride, 3);
  const std::vector<float> src = test::random_floats(std::size_t(rows) * stride, 4);

  // The write: new k rows into both pools, then compare the whole pools.
  std::vector<float> k_ref = k_pool;
  cpu::kv_write_ragged(k_ref.data(), table.data(), paged, src.data(), stride, seq.data(),
                       pos.data(), rows, kv_dim);
  DeviceBuffer<float> d_k(k_pool), d_v(v_pool), d_q(q), d_src(src);
  DeviceBuffer<std::int32_t> d_table(table), d_seq(seq), d_pos(pos);
  kv_write_ragged(d_k.get(), d_table.get(), paged, d_src.get(), stride, d_seq.get(), d_pos.get(),
                  rows, kv_dim, stream);
  LLMBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  EXPECT_EQ(d_k.download(), k_ref);

  // The attention over the written pools.
  std::vector<float> out_ref(std::size_t(rows) * stride, -7.0f);
  cpu::ragged_paged_attention(out_ref.data(), stride, q.data(), stride, k_ref.data(),
                              v_pool.data(), table.data(), paged, seq.data(), pos.data(), rows,
                              n_heads, n_kv_heads, head_dim);
  DeviceBuffer<float> d_out(out_ref.size());
  d_out.upload(std::vector<float>(out_ref.size(), -7.0f));
  ragged_paged_attention(d_out.get(), stride, d_q.get(), stride, d_k.get(), d_v.get(),
                         d_table.get(), paged, d_seq.get(), d_pos.get(), rows, n_heads,
                         n_kv_heads, head_dim, stream);
  LLMBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  EXPECT_TRUE(test::all_close(d_out.download(), out_ref, 1e-5, 1e-4));
}

TEST_F(CudaRagged, MatchesTheCpuHeadDim64) { check(stream_, 8, 2, 64, 16); }
TEST_F(CudaRagged, MatchesTheCpuHeadDim128OddBlocks) { check(stream_, 14, 2, 128, 7); }

}  // namespace
}  // namespace llmbench::cuda
