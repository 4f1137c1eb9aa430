// A split decode attention launch merging its own splits (AttentionSplit::arrivals: the last
// block of a query to finish combines its partials) against the same launch followed by the
// combine kernel: bit for bit, for both kernels, with empty splits, GQA, an odd block target and
// a grid sized for more keys than the step has; the counters back at zero after every launch, so
// a second launch (and every replay of a captured one) merges again. Skips without a device.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kernels/common/layout.h"
#include "kernels/cpu/attention.h"
#include "kernels/cuda/attention.cuh"
#include "kernels/cuda/cuda_check.h"
#include "tests/cuda/cuda_stream_test.h"
#include "tests/cuda/decode_step_check.h"
#include "tests/cuda/device_buffer.h"
#include "tests/kernels/check.h"

namespace llmbench::cuda {
namespace {

using test::all_close;
using test::bits;
using test::decode_positions;
using test::decode_shape;
using test::DeviceBuffer;
using test::random_floats;
using test::kAttentionAtol;
using test::kAttentionRtol;

class CudaSplitMerge : public test::CudaStreamTest {};

struct MergeCase {
  int batch, past_len, n_heads, n_kv_heads, head_dim;
  int target_blocks;  // 264: two blocks per SM of an H100/H200
  int max_keys;       // the grid's keys (the _at form); past_len + 1 is the by-value launch's
};

AttentionShape merge_shape(const MergeCase& c) {
  return decode_shape(c.batch, 1, c.past_len, c.n_heads, c.n_kv_heads, c.head_dim, c.max_keys);
}

TEST_F(CudaSplitMerge, SplitBlocksMergingThemselvesEqualTheCombineKernelBitForBit) {
  const MergeCase cases[] = {
      {1, 255, 32, 32, 128, 264, 256},    // llama2-7b at batch 1: 8 splits of 32 keys
      {1, 1998, 32, 4, 64, 264, 1999},    // GQA, a long context
      {1, 2099, 2, 1, 128, 7, 2100},      // an odd target: 7 blocks for 2 queries
      {3, 31, 8, 2, 64, 264, 4096},       // a grid for 4096 keys at 32: most splits empty
      {2, 999, 4, 4, 256, 264, 1000},     // head_dim 256
  };
  for (const AttentionKernel kernel : {AttentionKernel::kTiled, AttentionKernel::kStreamed}) {
    for (const MergeCase& c : cases) {
      SCOPED_TRACE(::testing::Message()
                   << (kernel == AttentionKernel::kTiled ? "tiled" : "streamed") << ", batch "
                   << c.batch << ", past_len " << c.past_len << ", heads " << c.n_heads << "/"
                   << c.n_kv_heads << " x " << c.head_dim << ", target " << c.target_blocks
                   << ", max_keys " << c.max_keys);
      const AttentionShape s = merge_shape(c);
      const std::size_t queries = static_cast<std::size_t>(c.batch) * c.n_heads;
      const std::size_t cache =
          static_cast<std::size_t>(c.batch) * c.max_keys * c.n_kv_heads * c.head_dim;
      const std::vector<float> q = random_floats(queries * c.head_dim, 70, -4, 4);
      const std::vector<float> k = random_floats(cache, 71), v = random_floats(cache, 72);
      const DeviceBuffer<float> d_q(q), d_k(k), d_v(v);
      const DeviceBuffer<std::int32_t> d_pos(decode_positions(c.batch, 1, c.past_len));
      const std::size_t floats = attention_split_floats(s, c.target_blocks);
      ASSERT_GT(floats, 0u) << "the case must split";
      DeviceBuffer<float> scratch(floats);
      DeviceBuffer<unsigned> arrivals(std::vector<unsigned>(queries, 0u));
      auto run = [&](bool merge_in_kernel) {
        DeviceBuffer<float> d_out = test::nan_floats(queries * c.head_dim);
        AttentionSplit split{scratch.get(), floats, c.target_blocks};
        if (merge_in_kernel) split.arrivals = arrivals.get(), split.arrival_slots = queries;
        attention_strided_at(d_out.get(), d_q.get(), d_k.get(), d_v.get(), s,
                             row_major_strides(s), d_pos.get(), c.max_keys, stream_, split,
                             kernel);
        sync();
        return d_out.download();
      };
      const std::vector<float> combined = run(false);
      std::vector<float> ref(combined.size());
      cpu::attention(ref.data(), q.data(), k.data(), v.data(), s);
      EXPECT_TRUE(all_close(combined, ref, kAttentionAtol, kAttentionRtol));
      for (int launch = 0; launch < 2; ++launch) {  // the second finds the counters re-armed
        SCOPED_TRACE(::testing::Message() << "merged launch " << launch);
        EXPECT_EQ(bits(run(true)), bits(combined));
        EXPECT_EQ(arrivals.download(), std::vector<unsigned>(queries, 0u));
      }
    }
  }
}

TEST_F(CudaSplitMerge, TooFewCountersFallBackToTheCombineKernel) {
  // arrival_slots below the queries: the launch must not touch the counters.
  const MergeCase c{1, 255, 32, 32, 128, 264, 256};
  const AttentionShape s = merge_shape(c);
  const std::size_t queries = 32, cache = std::size_t{256} * 32 * 128;
  const DeviceBuffer<float> d_q(random_floats(queries * 128, 73, -4, 4));
  const DeviceBuffer<float> d_k(random_floats(cache, 74)), d_v(random_floats(cache, 75));
  const std::size_t floats = attention_split_floats(s, c.target_blocks);
  DeviceBuffer<float> scratch(floats), d_out(queries * 128);
  DeviceBuffer<unsigned> arrivals(std::vector<unsigned>(queries, 7u));
  AttentionSplit split{scratch.get(), floats, c.target_blocks, arrivals.get(), queries - 1};
  attention(d_out.get(), d_q.get(), d_k.get(), d_v.get(), s, stream_, split,
            AttentionKernel::kTiled);
  sync();
  EXPECT_EQ(arrivals.download(), std::vector<unsigned>(queries, 7u));
}

TEST_F(CudaSplitMerge, ACapturedLaunchMergesItselfAtEveryReplay) {
  for (const AttentionKernel kernel : {AttentionKernel::kTiled, AttentionKernel::kStreamed}) {
    SCOPED_TRACE(kernel == AttentionKernel::kTiled ? "tiled" : "streamed");
    const MergeCase c{2, 9, 8, 2, 64, 264, 256};
    const AttentionShape s0 = merge_shape(c);
    const std::size_t queries = 16;
    const std::size_t cache = std::size_t{2} * 256 * 2 * 64;
    const std::vector<float> q = random_floats(queries * 64, 76, -4, 4);
    const std::vector<float> k = random_floats(cache, 77), v = random_floats(cache, 78);
    const DeviceBuffer<float> d_q(q), d_k(k), d_v(v);
    DeviceBuffer<std::int32_t> d_pos(decode_positions(2, 1, 9));
    DeviceBuffer<float> d_out(queries * 64);
    const std::size_t floats = attention_split_floats(s0, c.target_blocks);
    DeviceBuffer<float> scratch(floats);
    DeviceBuffer<unsigned> arrivals(std::vector<unsigned>(queries, 0u));
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    LLMBENCH_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    attention_strided_at(d_out.get(), d_q.get(), d_k.get(), d_v.get(), s0, row_major_strides(s0),
                         d_pos.get(), c.max_keys, stream_,
                         AttentionSplit{scratch.get(), floats, c.target_blocks, arrivals.get(),
                                        queries},
                         kernel);
    LLMBENCH_CUDA_CHECK(cudaStreamEndCapture(stream_, &graph));
    LLMBENCH_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    for (const int past_len : {9, 10, 63, 64, 199}) {
      SCOPED_TRACE(::testing::Message() << "past_len " << past_len);
      const std::vector<std::int32_t> pos = decode_positions(2, 1, past_len);
      LLMBENCH_CUDA_CHECK(cudaMemcpyAsync(d_pos.get(), pos.data(), pos.size() * 4,
                                          cudaMemcpyHostToDevice, stream_));
      LLMBENCH_CUDA_CHECK(cudaGraphLaunch(exec, stream_));
      sync();
      AttentionShape s = s0;
      s.past_len = past_len;
      std::vector<float> ref(queries * 64);
      cpu::attention(ref.data(), q.data(), k.data(), v.data(), s);
      EXPECT_TRUE(all_close(d_out.download(), ref, kAttentionAtol, kAttentionRtol));
      EXPECT_EQ(arrivals.download(), std::vector<unsigned>(queries, 0u));
    }
    LLMBENCH_CUDA_CHECK(cudaGraphExecDestroy(exec));
    LLMBENCH_CUDA_CHECK(cudaGraphDestroy(graph));
  }
}

}  // namespace
}  // namespace llmbench::cuda
