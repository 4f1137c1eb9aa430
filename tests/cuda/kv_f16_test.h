// The fixture and helpers of the fp16 KV cache's CUDA tests (test_cuda_kv_f16.cpp,
// test_cuda_kv_f16_attention.cpp, test_cuda_ragged_f16.cpp): a CudaBackend per test with
// --sync-check (a fault is blamed on the op that made it), buffers moved through that backend
// (stream-ordered with its ops), caches of random halves, and write sources full of rounding
// cases. Without a device every test of the fixture is skipped.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <vector>

#include "engine/model/cuda_backend.h"
#include "kernels/common/half.h"
#include "tests/cuda/device_buffer.h"
#include "tests/kernels/check.h"

namespace llmbench::test {

// n halves (binary16 bits): floats uniform in [lo, hi) from a fixed seed, rounded to nearest even.
inline std::vector<std::uint16_t> random_halves(std::size_t n, unsigned seed, float lo = -1.0f,
                                                float hi = 1.0f) {
  const std::vector<float> f = random_floats(n, seed, lo, hi);
  std::vector<std::uint16_t> h(n);
  for (std::size_t i = 0; i < n; ++i) h[i] = fp32_to_fp16(f[i]);
  return h;
}

// Each half widened to fp32 (exact).
inline std::vector<float> widened(const std::vector<std::uint16_t>& h) {
  std::vector<float> f(h.size());
  for (std::size_t i = 0; i < h.size(); ++i) f[i] = fp16_to_fp32(h[i]);
  return f;
}

// Sources with the values rounding must get right in the first row (ties to even either way,
// the largest half, overflow to inf, the subnormal range and its ties to zero), then a spread
// from 1e-7 to 7e4 in magnitude.
inline std::vector<float> rounding_sources(std::size_t n, unsigned seed) {
  std::vector<float> src = random_floats(n, seed, -2.0f, 2.0f);
  for (std::size_t i = 0; i < n; i += 7) src[i] *= 3.5e4f;
  for (std::size_t i = 3; i < n; i += 11) src[i] *= 1e-6f;
  const float specials[] = {0.0f,          -0.0f,           1.0f + 0x1p-11f, 1.0f + 0x3p-11f,
                            -1.0f - 0x1p-11f, 65504.0f,     65519.0f,        65520.0f,
                            -65520.0f,     INFINITY,        -INFINITY,       0x1p-25f,
                            0x3p-26f,      0x1p-24f,        -0x1p-24f,       6.1e-5f,
                            0x1.ffcp-15f,  1e-8f};
  for (std::size_t i = 0; i < std::size(specials) && i < n; ++i) src[i] = specials[i];
  return src;
}

class CudaKvF16Test : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda_device_present()) GTEST_SKIP() << "no CUDA device";
    be_ = std::make_unique<CudaBackend>(0, /*sync_check=*/true);
  }

  // A backend buffer holding `host`.
  template <class T>
  Buffer upload(const std::vector<T>& host) {
    Buffer b = be_->alloc(host.size() * sizeof(T));
    be_->to_device(b.data(), host.data(), host.size() * sizeof(T));
    return b;
  }
  // The whole of a buffer upload() made (waits for the backend's stream).
  template <class T>
  std::vector<T> download(const Buffer& b) {
    std::vector<T> host(b.bytes() / sizeof(T));
    be_->to_host(host.data(), b.data(), host.size() * sizeof(T));
    return host;
  }

  std::unique_ptr<CudaBackend> be_;
};

}  // namespace llmbench::test
