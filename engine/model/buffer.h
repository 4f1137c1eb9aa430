// Buffer: one allocation owned by a backend (host memory on the CPU backend, device memory on
// CUDA). Move-only RAII; the backend supplies the deleter (a std::function, so a stream-ordered
// free can carry its stream). Not a tensor: no shape, no dtype.
#pragma once
#include <cstddef>
#include <functional>
#include <utility>

namespace llmbench {

class Buffer {
 public:
  using Deleter = std::function<void(void*)>;

  Buffer() = default;
  Buffer(void* ptr, std::size_t bytes, Deleter deleter)
      : ptr_(ptr), bytes_(bytes), deleter_(std::move(deleter)) {}
  Buffer(Buffer&& o) noexcept { *this = std::move(o); }
  Buffer& operator=(Buffer&& o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
      deleter_ = std::exchange(o.deleter_, nullptr);
    }
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { reset(); }

  void reset() {
    if (ptr_ && deleter_) deleter_(ptr_);
    ptr_ = nullptr;
    bytes_ = 0;
  }

  void* data() const { return ptr_; }
  template <class T>
  T* as() const { return static_cast<T*>(ptr_); }
  float* f32() const { return as<float>(); }
  std::size_t bytes() const { return bytes_; }
  bool empty() const { return ptr_ == nullptr; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
  Deleter deleter_ = nullptr;
};

}  // namespace llmbench
