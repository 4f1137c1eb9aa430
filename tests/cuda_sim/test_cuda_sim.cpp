// cuda_sim itself (tests/cuda_sim/cuda_sim.h): the built-in variables, barriers, each shuffle
// against its definition, shared memory poisoned per block, the launch limits, and the errors a
// GPU would turn into a hang (a barrier some threads never reach, a shuffle naming an exited
// lane). The kernels here are written against cuda_sim directly; kernels/cuda's go through
// translate_cu.py and are tested by the tests/cuda files this target also runs.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cuda/device_common.cuh"
#include "tests/cuda_sim/cuda_sim.h"

namespace {

using cuda_sim::launch;

TEST(CudaSim, EveryThreadSeesItsOwnIndicesAndTheLaunchShape) {
  const dim3 grid(3, 2), block(8, 4);
  std::vector<int> seen(3 * 2 * 8 * 4, -1);
  auto kernel = [](int* out) {
    const int block_id = blockIdx.x + blockIdx.y * gridDim.x;
    const int thread_id = threadIdx.x + threadIdx.y * blockDim.x;
    out[block_id * blockDim.x * blockDim.y + thread_id] = block_id * 1000 + thread_id;
  };
  launch(kernel, grid, block)(seen.data());
  for (int b = 0; b < 6; ++b)
    for (int t = 0; t < 32; ++t) EXPECT_EQ(seen[b * 32 + t], b * 1000 + t);
}

TEST(CudaSim, BlockSumWaitsAtItsBarriersAcrossWarps) {
  // kernels/cuda/device_common.cuh's block_sum: shuffles within each warp, then shared memory
  // between warps behind __syncthreads.
  std::vector<float> out(96 * 2, 0.0f);
  auto kernel = [](float* o) {
    auto& scratch = cuda_sim::shared<float[32], 1>();
    const float v = float(threadIdx.x + 1 + 1000 * blockIdx.x);
    o[blockIdx.x * blockDim.x + threadIdx.x] = llmbench::cuda::detail::block_sum(v, scratch);
  };
  launch(kernel, 2, 96)(out.data());
  for (int i = 0; i < 96; ++i) {
    EXPECT_EQ(out[i], 96.0f * 97.0f / 2.0f);
    EXPECT_EQ(out[96 + i], 96.0f * 97.0f / 2.0f + 96000.0f);
  }
}

TEST(CudaSim, ShufflesReadTheLaneTheirDefinitionNames) {
  std::vector<int> out(4 * 64, 0);
  auto kernel = [](int* o) {
    const int lane = threadIdx.x % 32, v = 100 * int(threadIdx.x);
    o[threadIdx.x] = __shfl_xor_sync(0xffffffffu, v, 5);
    o[64 + threadIdx.x] = __shfl_down_sync(0xffffffffu, v, 3);
    o[128 + threadIdx.x] = __shfl_up_sync(0xffffffffu, v, 2, 16);
    o[192 + threadIdx.x] = __shfl_sync(0xffffffffu, v, lane * 7 + 1);
  };
  launch(kernel, 1, 64)(out.data());
  for (int t = 0; t < 64; ++t) {
    const int lane = t % 32, warp = t / 32 * 32;
    EXPECT_EQ(out[t], 100 * (warp + (lane ^ 5)));
    EXPECT_EQ(out[64 + t], 100 * (lane + 3 < 32 ? t + 3 : t));        // past the end: own value
    EXPECT_EQ(out[128 + t], 100 * (lane % 16 >= 2 ? t - 2 : t));       // within 16-lane segments
    EXPECT_EQ(out[192 + t], 100 * (warp + (lane * 7 + 1) % 32));
  }
}

TEST(CudaSim, ShuffleCarriesDoublesAndHalfWarpMasks) {
  std::vector<double> out(32, 0.0);
  auto kernel = [](double* o) {
    const unsigned lane = threadIdx.x;
    const unsigned mask = lane < 16 ? 0x0000ffffu : 0xffff0000u;
    o[lane] = __shfl_xor_sync(mask, 0.5 + lane, 1);
  };
  launch(kernel, 1, 32)(out.data());
  for (int t = 0; t < 32; ++t) EXPECT_EQ(out[t], 0.5 + (t ^ 1));
}

TEST(CudaSim, SharedMemoryStartsEveryBlockPoisoned) {
  std::vector<float> out(4, 0.0f);
  auto kernel = [](float* o) {
    auto& s = cuda_sim::shared<float[4], 2>();
    o[blockIdx.x * 2] = s[threadIdx.x];  // read before any write: NaN in every block
    __syncthreads();
    s[threadIdx.x] = 1.0f;
    o[blockIdx.x * 2 + 1] = s[threadIdx.x];
  };
  launch(kernel, 2, 1)(out.data());
  EXPECT_TRUE(std::isnan(out[0]));
  EXPECT_EQ(out[1], 1.0f);
  EXPECT_TRUE(std::isnan(out[2]));  // the first block's write does not survive into the second
  EXPECT_EQ(out[3], 1.0f);
}

TEST(CudaSim, DynamicSharedMemoryIsTheLaunchsBytes) {
  std::vector<int> out(64, 0);
  auto kernel = [](int* o) {
    int* table = cuda_sim::dynamic_shared<int>();
    table[threadIdx.x] = int(threadIdx.x) * 3;
    __syncthreads();
    o[threadIdx.x] = table[63 - threadIdx.x];
  };
  launch(kernel, 1, 64, 64 * sizeof(int))(out.data());
  for (int t = 0; t < 64; ++t) EXPECT_EQ(out[t], (63 - t) * 3);
  EXPECT_THROW(launch(kernel, 1, 64)(out.data()), std::runtime_error);  // no bytes given
}

TEST(CudaSim, ALaunchOutsideCudasLimitsIsRefused) {
  auto kernel = [] {};
  EXPECT_THROW(launch(kernel, 1, 1025)(), std::runtime_error);
  EXPECT_THROW(launch(kernel, 0, 32)(), std::runtime_error);
  EXPECT_THROW(launch(kernel, dim3(1, 65536), 32)(), std::runtime_error);
  EXPECT_THROW(launch(kernel, 1, 32, 228 * 1024)(), std::runtime_error);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(CudaSim, ABarrierHalfAWarpNeverReachesIsReported) {
  // Lanes 0-15 wait at __syncthreads while lanes 16-31 shuffle with the whole warp: on a GPU a
  // hang or garbage; here an error naming a thread and where it waits.
  auto kernel = [](int* o) {
    if (threadIdx.x < 16) {
      __syncthreads();
    } else {
      o[threadIdx.x] = __shfl_xor_sync(0xffffffffu, int(threadIdx.x), 1);
    }
  };
  std::vector<int> out(32, 0);
  const std::string error = error_of([&] { launch(kernel, 1, 32)(out.data()); });
  EXPECT_NE(error.find("thread 0 is named by warp 0's shuffle but is at __syncthreads"),
            std::string::npos)
      << error;
}

TEST(CudaSim, AShuffleNamingAnExitedLaneIsReported) {
  auto kernel = [](int* o) {
    if (threadIdx.x == 31) return;
    o[threadIdx.x] = __shfl_xor_sync(0xffffffffu, 1, 1);
  };
  std::vector<int> out(32, 0);
  const std::string error = error_of([&] { launch(kernel, 1, 32)(out.data()); });
  EXPECT_NE(error.find("thread 31 is named by warp 0's shuffle but is exited"), std::string::npos)
      << error;
}

TEST(CudaSim, ThreadsThatExitEarlyDoNotHoldTheBarrierBack) {
  // What CUDA does for threads that have exited (the kernels' bounds checks before a
  // block-wide reduction rely on no such thing, but it must not deadlock the simulator).
  std::vector<int> out(64, 0);
  auto kernel = [](int* o) {
    if (threadIdx.x >= 40) return;
    __syncthreads();
    o[threadIdx.x] = 1;
  };
  launch(kernel, 1, 64)(out.data());
  for (int t = 0; t < 64; ++t) EXPECT_EQ(out[t], t < 40 ? 1 : 0);
}

TEST(CudaSim, WhatAThreadThrowsReachesTheLauncher) {
  auto kernel = [] {
    if (threadIdx.x == 7) throw std::runtime_error("thread 7 failed");
    __syncthreads();
  };
  EXPECT_EQ(error_of([&] { launch(kernel, 1, 32)(); }), "thread 7 failed");
  // The simulator is usable again after a failed launch.
  std::vector<int> out(1, 0);
  launch([](int* o) { o[0] = 5; }, 1, 1)(out.data());
  EXPECT_EQ(out[0], 5);
}

TEST(CudaSim, CublasSgemmBatchedIsColumnMajorBlas) {
  // A 2x3 (lda 2) transposed times B 2x2: C = A^T B, 3x2, ld 4 (rows 3 of C's column untouched).
  const float a[] = {1, 2, 3, 4, 5, 6};  // columns (1,2), (3,4), (5,6)
  const float b[] = {1, 0, 2, 1};        // columns (1,0), (2,1)
  float c[8];
  for (float& x : c) x = NAN;
  const float* as[] = {a};
  const float* bs[] = {b};
  float* cs[] = {c};
  cublasHandle_t h = nullptr;
  ASSERT_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
  const float one = 1.0f, zero = 0.0f;
  ASSERT_EQ(cublasSgemmBatched(h, CUBLAS_OP_T, CUBLAS_OP_N, 3, 2, 2, &one, as, 2, bs, 2, &zero,
                               cs, 4, 1),
            CUBLAS_STATUS_SUCCESS);
  // A^T = [[1,2],[3,4],[5,6]]; times [[1,2],[0,1]] = [[1,4],[3,10],[5,16]].
  EXPECT_EQ(c[0], 1.0f);
  EXPECT_EQ(c[1], 3.0f);
  EXPECT_EQ(c[2], 5.0f);
  EXPECT_TRUE(std::isnan(c[3]));
  EXPECT_EQ(c[4], 4.0f);
  EXPECT_EQ(c[5], 10.0f);
  EXPECT_EQ(c[6], 16.0f);
  EXPECT_EQ(cublasSgemmBatched(h, CUBLAS_OP_T, CUBLAS_OP_N, 3, 2, 2, &one, as, 1, bs, 2, &zero,
                               cs, 4, 1),
            CUBLAS_STATUS_INVALID_VALUE);  // lda below k
  cublasDestroy(h);
}

}  // namespace
