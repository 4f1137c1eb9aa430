// The fixture of the CUDA kernel tests: each test gets its own stream (stream_), and without a
// device every test is skipped.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "kernels/cuda/cuda_check.h"
#include "tests/cuda/device_buffer.h"

namespace llmbench::test {

// Tolerances (atol, rtol) of the fp32 kernels that compute rather than copy, and of attention.
inline constexpr double kAtol = 1e-6, kRtol = 1e-5;
inline constexpr double kAttentionAtol = 1e-5, kAttentionRtol = 1e-4;

// The 16-bit float types of the half-precision kernels' tests.
enum class HalfType { kBf16, kF16 };

class CudaStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda_device_present()) GTEST_SKIP() << "no CUDA device";
    LLMBENCH_CUDA_CHECK(cudaStreamCreate(&stream_));
  }
  void TearDown() override {
    if (stream_ != nullptr) LLMBENCH_CUDA_CHECK_NOTHROW(cudaStreamDestroy(stream_));
  }
  // Waits for the stream and surfaces any fault from its kernels.
  void sync() { LLMBENCH_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

  cudaStream_t stream_ = nullptr;
};

}  // namespace llmbench::test
