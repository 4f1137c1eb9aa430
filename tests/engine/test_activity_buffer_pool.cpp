// The CUPTI op timer's activity buffers on synthetic buffers (no GPU needed): requests get
// distinct, aligned, zeroed buffers without allocating; a request with none free is answered
// with nothing and counted; a completed buffer reaches the consumer with its bytes, comes back
// zeroed and is handed out again; foreign, repeated and failing hand-backs are counted and never
// crash; many threads requesting and completing at once lose nothing.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "engine/model/activity_buffer_pool.h"
#include "kernels/common/error.h"

namespace llmbench {

namespace {

bool all_zero(const std::uint8_t* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (p[i] != 0) return false;
  return true;
}

}  // namespace

TEST(ActivityBufferPool, RequestsGetDistinctZeroedBuffersUntilNoneIsFree) {
  ActivityBufferPool pool(64, 4, [](std::uint8_t*, std::size_t) {});
  std::set<std::uint8_t*> seen;
  for (int i = 0; i < 4; ++i) {
    std::size_t size = 1;
    std::uint8_t* b = pool.request(size);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(size, 64u);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b) % ActivityBufferPool::kAlign, 0u);
    EXPECT_TRUE(all_zero(b, 64));
    seen.insert(b);
  }
  EXPECT_EQ(seen.size(), 4u);
  std::size_t size = 1;
  EXPECT_EQ(pool.request(size), nullptr) << "the pool never allocates a fifth buffer";
  EXPECT_EQ(size, 0u);
  const ActivityBufferStats s = pool.stats();
  EXPECT_EQ(s.buffers, 4u);
  EXPECT_EQ(s.buffer_bytes, 64u);
  EXPECT_EQ(s.requests, 5u);
  EXPECT_EQ(s.exhausted, 1u);
  EXPECT_EQ(s.max_in_use, 4u);
  EXPECT_EQ(s.completed, 0u);
}

TEST(ActivityBufferPool, ACompletedBufferIsConsumedZeroedAndHandedOutAgain) {
  std::vector<std::uint8_t> got;
  ActivityBufferPool pool(64, 1, [&](std::uint8_t* data, std::size_t valid) {
    got.assign(data, data + valid);
  });
  std::size_t size = 0;
  std::uint8_t* b = pool.request(size);
  ASSERT_NE(b, nullptr);
  for (int i = 0; i < 64; ++i) b[i] = std::uint8_t(i + 1);  // records past valid_bytes too
  pool.complete(b, 24);
  pool.drain();
  ASSERT_EQ(got.size(), 24u) << "the consumer sees the valid bytes only";
  for (int i = 0; i < 24; ++i) EXPECT_EQ(got[std::size_t(i)], i + 1);
  std::uint8_t* again = pool.request(size);
  EXPECT_EQ(again, b) << "the one buffer is free again once consumed";
  EXPECT_TRUE(all_zero(again, 64)) << "zeroed again, the whole buffer";
  const ActivityBufferStats s = pool.stats();
  EXPECT_EQ(s.completed, 1u);
  EXPECT_EQ(s.consumed, 1u);
  EXPECT_EQ(s.valid_bytes, 24u);
  EXPECT_EQ(s.exhausted, 0u);
}

TEST(ActivityBufferPool, ForeignRepeatedAndFailingHandBacksAreCountedNotFatal) {
  int calls = 0;
  ActivityBufferPool pool(32, 2, [&](std::uint8_t*, std::size_t) {
    if (++calls == 1) throw std::runtime_error("a parser that fails");
  });
  std::uint8_t local[32] = {};
  pool.complete(nullptr, 0);
  pool.complete(local, 8);
  std::size_t size = 0;
  std::uint8_t* b = pool.request(size);
  ASSERT_NE(b, nullptr);
  pool.complete(b, 8);
  pool.complete(b, 8);  // twice: the second is not a buffer that is out
  pool.drain();
  std::uint8_t* c = pool.request(size);
  ASSERT_NE(c, nullptr);
  pool.complete(c, 0);  // an empty buffer: freed, nothing to parse
  pool.drain();
  const ActivityBufferStats s = pool.stats();
  EXPECT_EQ(s.foreign, 3u);
  EXPECT_EQ(s.completed, 2u);
  EXPECT_EQ(s.consumed, 2u);
  EXPECT_EQ(s.consume_failures, 1u);
  EXPECT_EQ(calls, 1) << "an empty buffer is not parsed";
  std::uint8_t* x = pool.request(size);
  std::uint8_t* y = pool.request(size);
  EXPECT_NE(x, nullptr);
  EXPECT_NE(y, nullptr) << "a buffer whose parse failed comes back to the pool";
}

TEST(ActivityBufferPool, WhatIsQueuedAtDestructionIsConsumed) {
  std::atomic<int> consumed{0};
  {
    ActivityBufferPool pool(16, 3, [&](std::uint8_t*, std::size_t) { ++consumed; });
    std::size_t size = 0;
    for (int i = 0; i < 3; ++i) pool.complete(pool.request(size), 16);
  }
  EXPECT_EQ(consumed.load(), 3);
}

TEST(ActivityBufferPool, SizesOutOfRangeAreRefused) {
  auto none = [](std::uint8_t*, std::size_t) {};
  EXPECT_THROW(ActivityBufferPool(64, 0, none), Error);
  EXPECT_THROW(ActivityBufferPool(64, ActivityBufferPool::kMaxBuffers + 1, none), Error);
  EXPECT_THROW(ActivityBufferPool(0, 2, none), Error);
  EXPECT_THROW(ActivityBufferPool(12, 2, none), Error);
  ActivityBufferPool full(8, ActivityBufferPool::kMaxBuffers, none);
  std::size_t size = 0;
  for (std::size_t i = 0; i < ActivityBufferPool::kMaxBuffers; ++i)
    EXPECT_NE(full.request(size), nullptr) << i;
  EXPECT_EQ(full.request(size), nullptr);
}

// Threads stand in for CUPTI: several launching threads request and fill buffers while others
// (CUPTI's own) hand them back; each filled buffer carries its producer's tag and its complement,
// so a buffer handed to two producers at once, or consumed twice, or mixed, would show.
TEST(ActivityBufferPool, ManyThreadsRequestAndCompleteWithoutLossOrSharing) {
  constexpr int kThreads = 6;
  constexpr int kRounds = 3000;
  std::mutex mu;
  std::multiset<std::uint64_t> consumed_tags;
  std::atomic<int> torn{0};
  ActivityBufferPool pool(64, 4, [&](std::uint8_t* data, std::size_t valid) {
    std::uint64_t tag = 0, check = 0;
    std::memcpy(&tag, data, 8);
    std::memcpy(&check, data + 8, 8);
    if (valid != 16 || check != ~tag) ++torn;
    std::lock_guard<std::mutex> lock(mu);
    consumed_tags.insert(tag);
  });
  std::atomic<std::uint64_t> produced{0}, refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        std::size_t size = 0;
        std::uint8_t* b = pool.request(size);
        if (b == nullptr) {
          ++refused;
          std::this_thread::yield();
          continue;
        }
        if (!all_zero(b, size)) ++torn;
        const std::uint64_t tag = (std::uint64_t(t) << 32) | std::uint64_t(r);
        const std::uint64_t check = ~tag;
        std::memcpy(b, &tag, 8);
        std::memcpy(b + 8, &check, 8);
        pool.complete(b, 16);
        ++produced;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  pool.drain();
  const ActivityBufferStats s = pool.stats();
  EXPECT_EQ(torn.load(), 0);
  EXPECT_EQ(s.requests, std::uint64_t(kThreads) * kRounds);
  EXPECT_EQ(s.exhausted, refused.load()) << "every refusal counted";
  EXPECT_EQ(s.completed, produced.load());
  EXPECT_EQ(s.consumed, produced.load());
  EXPECT_EQ(s.foreign, 0u);
  EXPECT_EQ(s.valid_bytes, 16 * produced.load());
  EXPECT_LE(s.max_in_use, 4u);
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(consumed_tags.size(), produced.load());
  EXPECT_EQ(std::set<std::uint64_t>(consumed_tags.begin(), consumed_tags.end()).size(),
            produced.load())
      << "each filled buffer consumed exactly once";
}

}  // namespace llmbench
