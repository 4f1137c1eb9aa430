// The kernels a captured decode step (--cuda-graphs) launches with the step's length in device
// memory: kv_cache_write_at and attention_strided_at against their by-value forms and the CPU
// reference, including a split grid sized for a longer context than the step has (empty splits
// exit), one launch reused at growing lengths the way a graph replays it, and the launch inside
// a real stream capture replayed after the positions were updated in place. Skips without a
// device.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/common/layout.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/kv_cache.h"
#include "kernels/cuda/attention.cuh"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/kv_cache.cuh"
#include "tests/cuda/cuda_stream_test.h"
#include "tests/cuda/decode_step_check.h"
#include "tests/cuda/device_buffer.h"
#include "tests/kernels/check.h"

namespace llmbench::cuda {
namespace {

using test::all_close;
using test::decode_positions;
using test::decode_shape;
using test::DeviceBuffer;
using test::random_floats;
using test::kAttentionAtol;
using test::kAttentionRtol;

constexpr int kTargetBlocks = 264;  // two blocks per SM of an H100/H200

class CudaGraphKernels : public test::CudaStreamTest {};

bool bytes_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST_F(CudaGraphKernels, KvCacheWriteAtEqualsTheByValueWrite) {
  for (const int batch : {1, 4}) {
    for (const int n_new : {1, 7}) {
      const int kv_dim = 256, src_stride = 3 * kv_dim + 1, past_len = 37;
      const int cache_seq = past_len + n_new + 5;
      const std::vector<float> src =
          random_floats(std::size_t(batch) * n_new * src_stride, 5);
      std::vector<float> ref = random_floats(std::size_t(batch) * cache_seq * kv_dim, 6);
      DeviceBuffer<float> d_cache(ref);
      cpu::kv_cache_write(ref.data(), src.data(), src_stride, batch, n_new, past_len, cache_seq,
                          kv_dim);
      const DeviceBuffer<float> d_src(src);
      const DeviceBuffer<std::int32_t> d_pos(decode_positions(batch, n_new, past_len));
      kv_cache_write_at(d_cache.get(), d_src.get(), src_stride, batch, n_new, d_pos.get(),
                        cache_seq, kv_dim, stream_);
      sync();
      EXPECT_TRUE(all_close(d_cache.download(), ref, 0.0, 0.0)) << batch << " x " << n_new;
    }
  }
}

// attention_strided_at over one cache at `past_len`, with the grid sized for max_keys.
std::vector<float> attention_at_on_device(const AttentionShape& s, const std::vector<float>& q,
                                          const DeviceBuffer<float>& k,
                                          const DeviceBuffer<float>& v, int max_keys,
                                          cudaStream_t stream,
                                          AttentionKernel kernel = AttentionKernel::kTiled) {
  const std::size_t floats = attention_split_floats(s, kTargetBlocks);
  DeviceBuffer<float> scratch(floats), d_out(std::size_t(s.batch) * s.n_new * s.out_stride);
  const DeviceBuffer<float> d_q(q);
  const DeviceBuffer<std::int32_t> d_pos(decode_positions(s.batch, s.n_new, s.past_len));
  attention_strided_at(d_out.get(), d_q.get(), k.get(), v.get(), s, row_major_strides(s),
                       d_pos.get(), max_keys, stream,
                       AttentionSplit{scratch.get(), floats, kTargetBlocks}, kernel);
  LLMBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  return d_out.download();
}

TEST_F(CudaGraphKernels, AttentionAtMatchesTheCpuWithTheGridSizedForTheLongestContext) {
  const int cache_seq = 4096;
  for (const AttentionKernel kernel : {AttentionKernel::kTiled, AttentionKernel::kStreamed}) {
    for (const int batch : {1, 3, 16}) {
      for (const int past_len : {0, 1, 31, 32, 255, 1000, 4095}) {
        SCOPED_TRACE(::testing::Message()
                     << (kernel == AttentionKernel::kTiled ? "tiled" : "streamed") << ", batch "
                     << batch << ", past_len " << past_len);
        const AttentionShape s = decode_shape(batch, 1, past_len, 32, 4, 128, cache_seq);
        const std::size_t cache = std::size_t(batch) * cache_seq * 4 * 128;
        const std::vector<float> q = random_floats(std::size_t(batch) * s.q_stride, 50, -4, 4);
        const std::vector<float> k = random_floats(cache, 51), v = random_floats(cache, 52);
        std::vector<float> ref(std::size_t(batch) * s.out_stride);
        cpu::attention(ref.data(), q.data(), k.data(), v.data(), s);
        const DeviceBuffer<float> d_k(k), d_v(v);
        EXPECT_TRUE(all_close(attention_at_on_device(s, q, d_k, d_v, cache_seq, stream_, kernel),
                              ref, kAttentionAtol, kAttentionRtol));
        // With max_keys = this step's keys the launch is the by-value one's: bit for bit.
        const std::size_t floats = attention_split_floats(s, kTargetBlocks);
        DeviceBuffer<float> scratch(floats), d_out(ref.size());
        const DeviceBuffer<float> d_q(q);
        attention(d_out.get(), d_q.get(), d_k.get(), d_v.get(), s, stream_,
                  AttentionSplit{scratch.get(), floats, kTargetBlocks}, kernel);
        sync();
        EXPECT_TRUE(bytes_equal(
            attention_at_on_device(s, q, d_k, d_v, past_len + 1, stream_, kernel),
            d_out.download()));
      }
    }
  }
}

TEST_F(CudaGraphKernels, OneCapturedLaunchReplaysAtEveryLengthItsPositionsSay) {
  for (const AttentionKernel kernel : {AttentionKernel::kTiled, AttentionKernel::kStreamed}) {
    SCOPED_TRACE(kernel == AttentionKernel::kTiled ? "tiled" : "streamed");
    // The decode attention of one sequence, captured once at length 10 and replayed at lengths
    // 10..200 with only the positions rewritten in place: each replay equals the CPU at its own
    // length.
    const int cache_seq = 256, batch = 2;
    const AttentionShape s0 = decode_shape(batch, 1, 9, 8, 2, 64, cache_seq);
    const std::size_t cache = std::size_t(batch) * cache_seq * 2 * 64;
    const std::vector<float> q = random_floats(std::size_t(batch) * s0.q_stride, 60, -4, 4);
    const std::vector<float> k = random_floats(cache, 61), v = random_floats(cache, 62);
    const DeviceBuffer<float> d_q(q), d_k(k), d_v(v);
    DeviceBuffer<std::int32_t> d_pos(decode_positions(batch, 1, 9));
    DeviceBuffer<float> d_out(std::size_t(batch) * s0.out_stride);
    const std::size_t floats = attention_split_floats(s0, kTargetBlocks);
    DeviceBuffer<float> scratch(floats);

    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    LLMBENCH_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    attention_strided_at(d_out.get(), d_q.get(), d_k.get(), d_v.get(), s0, row_major_strides(s0),
                         d_pos.get(), cache_seq, stream_,
                         AttentionSplit{scratch.get(), floats, kTargetBlocks}, kernel);
    LLMBENCH_CUDA_CHECK(cudaStreamEndCapture(stream_, &graph));
    LLMBENCH_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    for (const int past_len : {9, 10, 63, 64, 199}) {
      SCOPED_TRACE(::testing::Message() << "past_len " << past_len);
      const std::vector<std::int32_t> pos = decode_positions(batch, 1, past_len);
      LLMBENCH_CUDA_CHECK(cudaMemcpyAsync(d_pos.get(), pos.data(), pos.size() * 4,
                                          cudaMemcpyHostToDevice, stream_));
      LLMBENCH_CUDA_CHECK(cudaGraphLaunch(exec, stream_));
      sync();
      AttentionShape s = s0;
      s.past_len = past_len;
      std::vector<float> ref(std::size_t(batch) * s.out_stride);
      cpu::attention(ref.data(), q.data(), k.data(), v.data(), s);
      EXPECT_TRUE(all_close(d_out.download(), ref, kAttentionAtol, kAttentionRtol));
    }
    LLMBENCH_CUDA_CHECK(cudaGraphExecDestroy(exec));
    LLMBENCH_CUDA_CHECK(cudaGraphDestroy(graph));
  }
}

}  // namespace
}  // namespace llmbench::cuda
