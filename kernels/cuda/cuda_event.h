// Move-only RAII CUDA events for timing (nvbench's cuda_timer idea): CudaEvent owns one event;
// CudaEventPair brackets work on a stream and reads the interval between its two events. The
// one way llmbench times device work: the backend's op timer (a pool of pairs), the roofline
// and the CUDA kernel bench all use it. Host code only; every call is checked (cuda_check.h),
// and destruction never throws.
#pragma once
#include <cuda_runtime_api.h>

#include <utility>

#include "kernels/cuda/cuda_check.h"

namespace llmbench::cuda {

class CudaEvent {
 public:
  CudaEvent() { LLMBENCH_CUDA_CHECK(cudaEventCreate(&event_)); }
  ~CudaEvent() {
    if (event_) LLMBENCH_CUDA_CHECK_NOTHROW(cudaEventDestroy(event_));
  }
  CudaEvent(CudaEvent&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}
  CudaEvent& operator=(CudaEvent&& other) noexcept {
    std::swap(event_, other.event_);
    return *this;
  }
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;

  void record(cudaStream_t stream) { LLMBENCH_CUDA_CHECK(cudaEventRecord(event_, stream)); }
  void synchronize() { LLMBENCH_CUDA_CHECK(cudaEventSynchronize(event_)); }
  cudaEvent_t get() const { return event_; }

  // Milliseconds from `from` to `to` (both recorded and complete).
  static float elapsed_ms(const CudaEvent& from, const CudaEvent& to) {
    float ms = 0;
    LLMBENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, from.event_, to.event_));
    return ms;
  }

 private:
  cudaEvent_t event_ = nullptr;
};

class CudaEventPair {
 public:
  void start(cudaStream_t stream) { start_.record(stream); }
  void stop(cudaStream_t stream) { stop_.record(stream); }
  // Waits for the stop event, then returns the interval in milliseconds.
  float elapsed_ms() {
    stop_.synchronize();
    return CudaEvent::elapsed_ms(start_, stop_);
  }
  const CudaEvent& start_event() const { return start_; }

 private:
  CudaEvent start_, stop_;
};

}  // namespace llmbench::cuda
