// ActivityBufferPool (see activity_buffer_pool.h).
#include "engine/model/activity_buffer_pool.h"

#include <bit>
#include <cstdlib>
#include <cstring>
#include <string>

#include "kernels/common/error.h"

namespace llmbench {

ActivityBufferPool::ActivityBufferPool(std::size_t buffer_bytes, std::size_t buffers,
                                       Consume consume)
    : buffer_bytes_(buffer_bytes), consume_(std::move(consume)) {
  if (buffers < 1 || buffers > kMaxBuffers)
    throw Error("activity buffer pool: " + std::to_string(buffers) + " buffers; 1 to " +
                std::to_string(kMaxBuffers) + " are possible");
  if (buffer_bytes == 0 || buffer_bytes % kAlign != 0)
    throw Error("activity buffer pool: buffers of " + std::to_string(buffer_bytes) +
                " bytes; a positive multiple of " + std::to_string(kAlign) + " is needed");
  buffers_.reserve(buffers);
  for (std::size_t i = 0; i < buffers; ++i) {
    auto* b = static_cast<std::uint8_t*>(std::aligned_alloc(kAlign, buffer_bytes));
    if (b == nullptr) {
      for (std::uint8_t* a : buffers_) std::free(a);
      throw Error("activity buffer pool: cannot allocate " + std::to_string(buffers) +
                  " buffers of " + std::to_string(buffer_bytes) + " bytes");
    }
    // Zeroed here, so CUPTI need not zero it on the launching thread, and every page is
    // faulted in now rather than while a traced step writes its first records.
    std::memset(b, 0, buffer_bytes);
    buffers_.push_back(b);
  }
  queue_.reserve(buffers);
  free_.store(buffers == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << buffers) - 1,
              std::memory_order_release);
  consumer_ = std::thread([this] { consume_loop(); });
}

ActivityBufferPool::~ActivityBufferPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  consumer_.join();
  for (std::uint8_t* b : buffers_) std::free(b);
}

std::uint8_t* ActivityBufferPool::request(std::size_t& size) {
  requests_.fetch_add(1, std::memory_order_relaxed);
  std::uint64_t f = free_.load(std::memory_order_acquire);
  while (f != 0) {
    const int i = std::countr_zero(f);
    const std::uint64_t bit = std::uint64_t{1} << i;
    if (free_.compare_exchange_weak(f, f & ~bit, std::memory_order_acq_rel,
                                    std::memory_order_acquire)) {
      out_.fetch_or(bit, std::memory_order_relaxed);
      const std::size_t in_use = buffers_.size() - std::size_t(std::popcount(f & ~bit));
      std::size_t seen = max_in_use_.load(std::memory_order_relaxed);
      while (in_use > seen &&
             !max_in_use_.compare_exchange_weak(seen, in_use, std::memory_order_relaxed)) {
      }
      size = buffer_bytes_;
      return buffers_[std::size_t(i)];
    }
  }
  exhausted_.fetch_add(1, std::memory_order_relaxed);
  size = 0;
  return nullptr;
}

int ActivityBufferPool::index_of(const std::uint8_t* buffer) const {
  for (std::size_t i = 0; i < buffers_.size(); ++i)
    if (buffers_[i] == buffer) return int(i);
  return -1;
}

void ActivityBufferPool::complete(std::uint8_t* buffer, std::size_t valid_bytes) {
  const int i = index_of(buffer);
  // Only a buffer that is out may come back, once: the queue never holds more than the pool.
  const std::uint64_t bit = i < 0 ? 0 : std::uint64_t{1} << i;
  if (i < 0 || (out_.fetch_and(~bit, std::memory_order_acq_rel) & bit) == 0) {
    foreign_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.emplace_back(i, valid_bytes > buffer_bytes_ ? buffer_bytes_ : valid_bytes);
    ++completed_;
  }
  wake_.notify_one();
}

void ActivityBufferPool::consume_loop() {
  std::vector<std::pair<int, std::size_t>> batch;
  batch.reserve(buffers_.size());
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and nothing left
    batch.swap(queue_);          // both keep their capacity: nothing is allocated
    lock.unlock();
    std::uint64_t bytes = 0, failures = 0;
    for (const auto& [i, valid] : batch) {
      std::uint8_t* b = buffers_[std::size_t(i)];
      try {
        if (valid > 0) consume_(b, valid);
      } catch (...) {  // counted; a thread of CUPTI's client must not end the process
        ++failures;
      }
      std::memset(b, 0, buffer_bytes_);  // CUPTI is told it gets zeroed buffers
      bytes += valid;
      free_.fetch_or(std::uint64_t{1} << i, std::memory_order_release);
    }
    lock.lock();
    consumed_ += batch.size();
    valid_bytes_ += bytes;
    consume_failures_ += failures;
    batch.clear();
    drained_.notify_all();
  }
}

void ActivityBufferPool::drain() {
  std::unique_lock<std::mutex> lock(mu_);
  const std::uint64_t target = completed_;
  drained_.wait(lock, [&] { return consumed_ >= target; });
}

ActivityBufferStats ActivityBufferPool::stats() const {
  ActivityBufferStats s;
  s.buffers = buffers_.size();
  s.buffer_bytes = buffer_bytes_;
  s.requests = requests_.load(std::memory_order_relaxed);
  s.exhausted = exhausted_.load(std::memory_order_relaxed);
  s.foreign = foreign_.load(std::memory_order_relaxed);
  s.max_in_use = max_in_use_.load(std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(mu_);
  s.completed = completed_;
  s.consumed = consumed_;
  s.valid_bytes = valid_bytes_;
  s.consume_failures = consume_failures_;
  return s;
}

}  // namespace llmbench
