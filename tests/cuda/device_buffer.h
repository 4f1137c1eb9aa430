// Test helpers for CUDA code: whether a device is present, and DeviceBuffer<T>, an owning,
// move-only device allocation with synchronous upload/download. Not for the engine (its buffers
// are sized once per case and live in the backend); just what the CUDA tests and benches need.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>
#include <vector>

#include "kernels/cuda/cuda_check.h"

namespace llmbench::test {

// True when the CUDA runtime finds at least one device. A missing driver or no device is an
// error from cudaGetDeviceCount; it is cleared and reported as "no device".
inline bool cuda_device_present() {
  static const bool present = [] {
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      return false;
    }
    return count > 0;
  }();
  return present;
}

template <typename T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t n) : size_(n) {
    if (n == 0) return;
    void* data = nullptr;
    LLMBENCH_CUDA_CHECK(cudaMalloc(&data, n * sizeof(T)));
    data_ = static_cast<T*>(data);
  }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }
  ~DeviceBuffer() {
    if (data_ != nullptr) LLMBENCH_CUDA_CHECK_NOTHROW(cudaFree(data_));
  }
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      if (data_ != nullptr) LLMBENCH_CUDA_CHECK_NOTHROW(cudaFree(data_));
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* get() { return data_; }
  const T* get() const { return data_; }
  std::size_t size() const { return size_; }

  // Synchronous copies (they wait for all earlier work on blocking streams to finish).
  void upload(const std::vector<T>& host) {
    if (host.size() != size_) throw Error("DeviceBuffer::upload: size differs from the buffer's");
    if (size_ > 0) {
      LLMBENCH_CUDA_CHECK(
          cudaMemcpy(data_, host.data(), size_ * sizeof(T), cudaMemcpyHostToDevice));
    }
  }
  std::vector<T> download() const {
    std::vector<T> host(size_);
    if (size_ > 0) {
      LLMBENCH_CUDA_CHECK(
          cudaMemcpy(host.data(), data_, size_ * sizeof(T), cudaMemcpyDeviceToHost));
    }
    return host;
  }
  // Every byte set to `byte`: 0xFF makes every float a NaN, so an output element a kernel
  // forgot to write fails the comparison.
  void fill_bytes(unsigned char byte) {
    if (size_ > 0) LLMBENCH_CUDA_CHECK(cudaMemset(data_, byte, size_ * sizeof(T)));
  }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

// A device buffer of n floats, all NaN (every byte 0xFF).
inline DeviceBuffer<float> nan_floats(std::size_t n) {
  DeviceBuffer<float> buffer(n);
  buffer.fill_bytes(0xFF);
  return buffer;
}

}  // namespace llmbench::test
