// The interrupt flag (see interrupt.h).
#include "engine/bench/interrupt.h"

#include <atomic>

namespace llmbench {

namespace {
// Lock-free, so setting it from a signal handler is safe.
std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free);
}  // namespace

void request_interrupt() noexcept { g_interrupted.store(true, std::memory_order_relaxed); }
bool interrupt_requested() noexcept { return g_interrupted.load(std::memory_order_relaxed); }
void clear_interrupt() noexcept { g_interrupted.store(false, std::memory_order_relaxed); }

void throw_if_interrupted() {
  if (interrupt_requested()) throw Interrupted();
}

}  // namespace llmbench
