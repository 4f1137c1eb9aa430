// The activity buffers of the CUPTI op timer (cupti_timer.h), without CUPTI, so they are tested
// on machines with no GPU. CUPTI asks for a buffer (bufferRequested) on the thread that launches
// work when that thread's buffer fills, and hands filled buffers back (bufferCompleted). Both
// answers must be quick: on an H200 (docs/gpu-validation.md, 2026-11-26) a buffer allocated on
// request, zeroed by CUPTI and parsed in the completion callback stalled a llama2-7b decode step
// by up to 4 ms at every hand-over. Here: a fixed set of buffers allocated, zeroed and touched up
// front; request() takes a free one without a lock or an allocation; complete() only queues the
// filled buffer; one consumer thread parses each queued buffer (the caller's function), zeroes
// it again and returns it to the free set. Not here: what a buffer's records mean
// (cupti_timer.cpp) or which op they belong to (activity_attribution.h).
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace llmbench {

// What the pool did since it was made.
struct ActivityBufferStats {
  std::size_t buffers = 0;        // buffers in the pool
  std::size_t buffer_bytes = 0;   // bytes each
  std::uint64_t requests = 0;     // request() calls
  std::uint64_t exhausted = 0;    // request() calls answered with no buffer (none was free)
  std::uint64_t completed = 0;    // buffers handed back with complete()
  std::uint64_t consumed = 0;     // buffers the consumer parsed and freed again
  std::uint64_t foreign = 0;      // complete() of a pointer that is not one of the pool's
  std::uint64_t valid_bytes = 0;  // record bytes handed back, summed
  std::uint64_t consume_failures = 0;  // buffers whose Consume threw (the buffer is freed anyway)
  std::size_t max_in_use = 0;     // most buffers out of the free set at once
};

class ActivityBufferPool {
 public:
  // Called on the consumer thread with each completed buffer's first `valid_bytes`.
  using Consume = std::function<void(std::uint8_t* data, std::size_t valid_bytes)>;

  static constexpr std::size_t kMaxBuffers = 64;  // the free set is one 64-bit word
  static constexpr std::size_t kAlign = 8;        // CUPTI's alignment of activity buffers

  // Allocates `buffers` (1..kMaxBuffers) buffers of `buffer_bytes` (a multiple of kAlign),
  // zeroed (every page touched now, not on first use), and starts the consumer thread.
  // llmbench::Error when the sizes are out of range or the memory is not there.
  ActivityBufferPool(std::size_t buffer_bytes, std::size_t buffers, Consume consume);
  // Consumes every completed buffer, then stops the consumer and frees the buffers.
  ~ActivityBufferPool();
  ActivityBufferPool(const ActivityBufferPool&) = delete;
  ActivityBufferPool& operator=(const ActivityBufferPool&) = delete;

  // A free, zeroed buffer and its size; nullptr and 0 when none is free (counted in
  // exhausted(); CUPTI then drops records and says so). Never allocates, locks or waits:
  // any thread, at any time.
  std::uint8_t* request(std::size_t& size);
  // Queues a filled buffer for the consumer (one short lock, no parsing, no allocation). A
  // pointer the pool did not hand out is counted in foreign and left alone.
  void complete(std::uint8_t* buffer, std::size_t valid_bytes);
  // Waits until every buffer completed before the call has been consumed.
  void drain();

  ActivityBufferStats stats() const;

 private:
  void consume_loop();
  int index_of(const std::uint8_t* buffer) const;

  std::size_t buffer_bytes_;
  std::vector<std::uint8_t*> buffers_;
  Consume consume_;
  std::atomic<std::uint64_t> free_{0};  // bit i set: buffers_[i] is free
  std::atomic<std::uint64_t> out_{0};   // bit i set: buffers_[i] handed out, not completed yet
  std::atomic<std::uint64_t> requests_{0}, exhausted_{0}, foreign_{0};
  std::atomic<std::size_t> max_in_use_{0};

  mutable std::mutex mu_;
  std::condition_variable wake_, drained_;
  std::vector<std::pair<int, std::size_t>> queue_;  // (buffer, valid bytes); capacity: buffers
  std::uint64_t completed_ = 0, consumed_ = 0, valid_bytes_ = 0, consume_failures_ = 0;
  bool stop_ = false;
  std::thread consumer_;
};

}  // namespace llmbench
