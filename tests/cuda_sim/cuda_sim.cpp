// cuda_sim's scheduler (cuda_sim.h): a block's threads as fibers on the calling thread, switched
// only where a kernel waits for other threads (__syncthreads, warp shuffles). A waiting thread
// passes control straight to the next runnable thread of its block, and the last thread to arrive
// at a barrier or a shuffle completes it and goes on, so a scheduler pass happens only when the
// block's threads have all stopped once. The switch is a few instructions of its own
// (cuda_sim_switch below: the callee-saved registers and the stack pointer; the floating-point
// control state is shared, and no kernel changes it), not swapcontext, which enters the kernel
// twice a switch to save the signal mask: the kernel tests wait millions of times.
#include "tests/cuda_sim/cuda_sim.h"
#include "tests/cuda_sim/cuda_sim_counters.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

// This file is compiled without instrumentation (CUDA_SIM_ANNOTATE_ASAN; tests/cuda_sim/
// cuda_sim.cmake) but calls AddressSanitizer's interface directly: its ASAN_* macros would be
// no-ops here.
#if defined(__SANITIZE_ADDRESS__) || defined(CUDA_SIM_ANNOTATE_ASAN)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define CUDA_SIM_ASAN 1
#else
#define CUDA_SIM_ASAN 0
#endif

#if !defined(__x86_64__)
#error "cuda_sim's fiber switch is written for x86-64"
#endif

// Saves the callee-saved state on the current stack, stores the stack pointer in *save_sp and
// continues on load_sp's stack where it was saved (or where make_fiber_stack set it up).
extern "C" void cuda_sim_switch(void** save_sp, void* load_sp);
asm(R"(
  .text
  .globl cuda_sim_switch
  .type cuda_sim_switch, @function
cuda_sim_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size cuda_sim_switch, .-cuda_sim_switch
)");

namespace cuda_sim {
namespace {

constexpr int kWarp = 32;
constexpr std::size_t kStackBytes = 256 * 1024;

enum class Wait { kRunnable, kBarrier, kShuffle, kDone };

struct Fiber {
  void* sp = nullptr;  // where cuda_sim_switch left this fiber's stack
  char* stack = nullptr;
  uint3 tid{};
  Wait wait = Wait::kRunnable;
  // A pending shuffle.
  unsigned mask = 0;
  std::uint64_t bits = 0, result = 0;
  ShuffleKind kind = ShuffleKind::kXor;
  int arg = 0, width = kWarp;
};

struct BlockRun {
  std::vector<Fiber> fibers;
  std::vector<int> at_shuffle;  // per warp, lanes waiting at a shuffle
  int live = 0;                 // threads that have not exited
  int at_barrier = 0;           // threads waiting at __syncthreads
  void* scheduler_sp = nullptr;
  const std::function<void()>* body = nullptr;
  uint3 bid{};
  dim3 block, grid;
  std::exception_ptr error;
  const void* scheduler_stack = nullptr;
  std::size_t scheduler_stack_size = 0;
  bool scheduler_stack_known = false;
};

// The launch in progress and the fiber running in it. Plain globals, not thread_local (whose
// accesses from a static library cost a call each): launches take g_launch_mutex, so one runs at
// a time in the process.
std::mutex g_launch_mutex;
std::uint64_t g_grids_run = 0;  // guarded by g_launch_mutex
BlockRun* g_run = nullptr;
Fiber* g_fiber = nullptr;
std::vector<unsigned char>* g_dynamic = nullptr;
thread_local int t_last_error = 0;

// Stacks for up to 1024 fibers, mapped once (pages are committed as fibers touch them).
char* stack_pool() {
  static char* pool = [] {
    void* p = mmap(nullptr, kStackBytes * 1024, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("cuda_sim: cannot map fiber stacks");
    return static_cast<char*>(p);
  }();
  return pool;
}

struct SharedBuffer {
  void* p;
  std::size_t bytes;
};
std::vector<SharedBuffer>& shared_buffers() {
  static std::vector<SharedBuffer> buffers;
  return buffers;
}

Fiber& current() {
  if (g_fiber == nullptr)
    throw std::logic_error("cuda_sim: a device built-in was used outside a kernel");
  return *g_fiber;
}

// Control passes to fiber `to` (nullptr: the scheduler), the current stack pointer saved in
// *save (`dying`: the current fiber has exited and is never resumed), with AddressSanitizer told
// which stack becomes live.
void switch_stack(void** save, bool dying, Fiber* to) {
  BlockRun& run = *g_run;
  void* load = to != nullptr ? to->sp : run.scheduler_sp;
  g_fiber = to;
#if CUDA_SIM_ASAN
  const void* bottom = to != nullptr ? to->stack : run.scheduler_stack;
  const std::size_t size = to != nullptr ? kStackBytes : run.scheduler_stack_size;
  void* fake = nullptr;
  __sanitizer_start_switch_fiber(dying ? nullptr : &fake, bottom, size);
  cuda_sim_switch(save, load);
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#else
  (void)dying;
  cuda_sim_switch(save, load);
#endif
}

// `f` waits (nullptr: has exited): the next runnable thread after it in the block runs, or, when
// there is none, the scheduler.
void pass_on(Fiber* f, int index) {
  BlockRun& run = *g_run;
  void* unused = nullptr;
  void** save = f != nullptr ? &f->sp : &unused;
  const int n = static_cast<int>(run.fibers.size());
  for (int k = index + 1; k < n; ++k)
    if (run.fibers[k].wait == Wait::kRunnable)
      return switch_stack(save, f == nullptr, &run.fibers[k]);
  switch_stack(save, f == nullptr, nullptr);
}

int index_of(const Fiber& f) { return static_cast<int>(&f - g_run->fibers.data()); }

// Every thread waiting at __syncthreads goes on, if every live thread is there.
bool release_barrier(BlockRun& run) {
  if (run.at_barrier == 0 || run.at_barrier != run.live) return false;
  for (Fiber& f : run.fibers)
    if (f.wait == Wait::kBarrier) f.wait = Wait::kRunnable;
  run.at_barrier = 0;
  return true;
}

// Where a fiber starts (cuda_sim_switch returns into it): runs one thread of the kernel, then
// passes control on for good.
void fiber_main() {
  BlockRun& run = *g_run;
#if CUDA_SIM_ASAN
  // The first fiber of a launch starts from the scheduler: learn its stack.
  const void* from_bottom = nullptr;
  std::size_t from_size = 0;
  __sanitizer_finish_switch_fiber(nullptr, &from_bottom, &from_size);
  if (!run.scheduler_stack_known) {
    run.scheduler_stack = from_bottom, run.scheduler_stack_size = from_size;
    run.scheduler_stack_known = true;
  }
#endif
  Fiber& f = *g_fiber;
  try {
    (*run.body)();
  } catch (...) {
    if (!run.error) run.error = std::current_exception();
  }
  f.wait = Wait::kDone;
  --run.live;
  release_barrier(run);  // the threads still waiting no longer wait for this one
  pass_on(nullptr, index_of(f));
  std::abort();  // never resumed
}

// A fresh stack whose first cuda_sim_switch "returns" into fiber_main: from the top, a zero
// return address (fiber_main never returns), fiber_main's address and six zero registers;
// fiber_main starts with the stack aligned as after a call. Under AddressSanitizer the top of
// the stack's shadow is cleared first: fiber_main, which never returns, leaves its frame's
// redzones poisoned for the next fiber on this stack (deeper frames clear theirs as they return;
// after a failed launch, run_grid clears them all).
void* make_fiber_stack(char* stack) {
#if CUDA_SIM_ASAN
  __asan_unpoison_memory_region(stack + kStackBytes - 4096, 4096);
#endif
  auto top = reinterpret_cast<std::uintptr_t>(stack + kStackBytes) & ~std::uintptr_t{15};
  auto* sp = reinterpret_cast<std::uint64_t*>(top);
  *--sp = 0;
  *--sp = reinterpret_cast<std::uint64_t>(&fiber_main);
  for (int i = 0; i < 6; ++i) *--sp = 0;
  return sp;
}

std::string where(const BlockRun& run) {
  return "block (" + std::to_string(run.bid.x) + "," + std::to_string(run.bid.y) + "," +
         std::to_string(run.bid.z) + ")";
}

std::string describe(const Fiber& f) {
  switch (f.wait) {
    case Wait::kRunnable: return "running";
    case Wait::kBarrier: return "at __syncthreads";
    case Wait::kShuffle: return "at a shuffle";
    case Wait::kDone: return "exited";
  }
  return "?";
}

// The lane a shuffle of `f` (lane `lane`) reads, or its own when the source is out of range.
int source_lane(const Fiber& f, int lane) {
  const int width = f.width, base = lane / width * width, rel = lane - base;
  switch (f.kind) {
    case ShuffleKind::kIdx: return base + (f.arg % width + width) % width;
    case ShuffleKind::kUp: return rel - f.arg >= 0 ? lane - f.arg : lane;
    case ShuffleKind::kDown: return rel + f.arg < width ? lane + f.arg : lane;
    case ShuffleKind::kXor: return (rel ^ f.arg) < width ? base + (rel ^ f.arg) : lane;
  }
  return lane;
}

// Completes each shuffle of warp `w` whose mask's lanes have all arrived (lanes with different
// masks shuffle separately). Throws when a lane a mask names cannot arrive: it has exited, or
// (`stuck`: nothing in the block can move) it waits elsewhere.
bool release_warp(BlockRun& run, int w, bool stuck) {
  const int n = static_cast<int>(run.fibers.size());
  const int first = w * kWarp, last = std::min(n, first + kWarp);
  unsigned examined = 0;
  bool released = false;
  for (int leader = first; leader < last; ++leader) {
    const Fiber& lf = run.fibers[leader];
    if (lf.wait != Wait::kShuffle || (examined >> (leader - first) & 1u)) continue;
    const unsigned mask = lf.mask;
    examined |= mask | 1u << (leader - first);
    bool complete = true;
    for (int lane = 0; lane < kWarp; ++lane) {
      if (!(mask >> lane & 1u)) continue;
      const int i = first + lane;
      if (i >= last)
        throw std::runtime_error("cuda_sim: " + where(run) + ": shuffle mask names lane " +
                                 std::to_string(lane) + " of warp " + std::to_string(w) +
                                 ", past the block's last thread");
      const Fiber& f = run.fibers[i];
      if (f.wait == Wait::kShuffle && f.mask != mask)
        throw std::runtime_error("cuda_sim: " + where(run) + ": warp " + std::to_string(w) +
                                 " shuffles with different masks naming the same lanes");
      if (f.wait == Wait::kDone || (stuck && f.wait != Wait::kShuffle))
        throw std::runtime_error("cuda_sim: " + where(run) + ": thread " + std::to_string(i) +
                                 " is named by warp " + std::to_string(w) + "'s shuffle but is " +
                                 describe(f));
      complete &= f.wait == Wait::kShuffle;
    }
    if (!complete) continue;
    for (int lane = 0; lane < kWarp; ++lane) {
      if (!(mask >> lane & 1u)) continue;
      Fiber& f = run.fibers[first + lane];
      const int src = source_lane(f, lane);
      f.result = (mask >> src & 1u) ? run.fibers[first + src].bits : f.bits;
    }
    for (int lane = 0; lane < kWarp; ++lane)
      if (mask >> lane & 1u) {
        run.fibers[first + lane].wait = Wait::kRunnable;
        --run.at_shuffle[w];
      }
    released = true;
  }
  return released;
}

void run_block(BlockRun& run) {
  for (const SharedBuffer& b : shared_buffers()) std::memset(b.p, 0xFF, b.bytes);
  if (g_dynamic != nullptr) std::fill(g_dynamic->begin(), g_dynamic->end(), 0xFF);
  const unsigned n = run.block.x * run.block.y * run.block.z;
  const int warps = static_cast<int>((n + kWarp - 1) / kWarp);
  char* stacks = stack_pool();
  run.fibers.assign(n, Fiber{});
  run.at_shuffle.assign(warps, 0);
  run.live = static_cast<int>(n);
  run.at_barrier = 0;
  for (unsigned i = 0; i < n; ++i) {
    Fiber& f = run.fibers[i];
    f.tid = {i % run.block.x, i / run.block.x % run.block.y, i / (run.block.x * run.block.y)};
    f.stack = stacks + static_cast<std::size_t>(i) * kStackBytes;
    f.sp = make_fiber_stack(f.stack);
  }
  for (;;) {
    // A pass: each runnable thread runs until it waits (then hands on to the next) or exits.
    for (Fiber& f : run.fibers)
      if (f.wait == Wait::kRunnable) {
        switch_stack(&run.scheduler_sp, false, &f);
        g_fiber = nullptr;
      }
    if (run.error) return;
    if (run.live == 0) return;
    bool runnable = false;
    for (const Fiber& f : run.fibers) runnable |= f.wait == Wait::kRunnable;
    if (runnable) continue;
    bool released = release_barrier(run);
    for (int w = 0; w < warps; ++w) released |= release_warp(run, w, false);
    if (released) continue;
    // Nothing can move: name the culprits.
    for (int w = 0; w < warps; ++w) release_warp(run, w, true);
    std::string states;
    for (unsigned i = 0; i < n && states.size() < 400; ++i)
      if (i == 0 || run.fibers[i].wait != run.fibers[i - 1].wait)
        states += " thread " + std::to_string(i) + "+ " + describe(run.fibers[i]) + ";";
    throw std::runtime_error("cuda_sim: " + where(run) + " deadlocked (a __syncthreads some "
                             "threads never reach):" + states);
  }
}

}  // namespace

uint3 thread_idx() { return current().tid; }
uint3 block_idx() {
  current();
  return g_run->bid;
}
dim3 block_dim() {
  current();
  return g_run->block;
}
dim3 grid_dim() {
  current();
  return g_run->grid;
}

void sync_threads() {
  Fiber& f = current();
  BlockRun& run = *g_run;
  f.wait = Wait::kBarrier;
  ++run.at_barrier;
  if (release_barrier(run)) return;  // the last to arrive: everyone goes on, this thread first
  pass_on(&f, index_of(f));
}

std::uint64_t shuffle(unsigned mask, std::uint64_t bits, ShuffleKind kind, int arg, int width) {
  Fiber& f = current();
  BlockRun& run = *g_run;
  if (width <= 0 || width > kWarp || (width & (width - 1)) != 0)
    throw std::runtime_error("cuda_sim: shuffle width " + std::to_string(width) +
                             " is not a power of two up to 32");
  const int index = index_of(f), lane = index % kWarp, w = index / kWarp;
  if (!(mask >> lane & 1u))
    throw std::runtime_error("cuda_sim: thread " + std::to_string(index) +
                             " shuffles with a mask that does not name its own lane");
  f.mask = mask, f.bits = bits, f.kind = kind, f.arg = arg, f.width = width;
  f.wait = Wait::kShuffle;
  ++run.at_shuffle[w];
  // The last lane of the mask to arrive completes the exchange and goes on.
  if (run.at_shuffle[w] >= __builtin_popcount(mask) && release_warp(run, w, false) &&
      f.wait == Wait::kRunnable)
    return f.result;
  pass_on(&f, index);
  return f.result;
}

void register_shared(void* p, std::size_t bytes) {
  shared_buffers().push_back({p, bytes});
  std::memset(p, 0xFF, bytes);
}

void* dynamic_shared_bytes() {
  current();
  if (g_dynamic == nullptr || g_dynamic->empty())
    throw std::runtime_error("cuda_sim: extern __shared__ memory used by a launch that gave none");
  return g_dynamic->data();
}

void set_last_error(int error) { t_last_error = error; }
int take_last_error() {
  const int e = t_last_error;
  t_last_error = 0;
  return e;
}
int peek_last_error() { return t_last_error; }

std::uint64_t grids_run() {
  const std::lock_guard<std::mutex> lock(g_launch_mutex);
  return g_grids_run;
}

void run_grid(dim3 grid, dim3 block, std::size_t dynamic_smem,
              const std::function<void()>& thread) {
  if (g_fiber != nullptr) throw std::logic_error("cuda_sim: a kernel launched a kernel");
  const unsigned long long threads =
      static_cast<unsigned long long>(block.x) * block.y * block.z;
  auto refuse = [](const std::string& why) {
    set_last_error(cudaErrorInvalidConfiguration);
    throw std::runtime_error("cuda_sim: launch refused: " + why);
  };
  if (threads == 0 || threads > 1024 || block.z > 64)
    refuse("block of " + std::to_string(threads) + " threads");
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.y > 65535 || grid.z > 65535)
    refuse("grid (" + std::to_string(grid.x) + "," + std::to_string(grid.y) + "," +
           std::to_string(grid.z) + ")");
  if (dynamic_smem > static_cast<std::size_t>(kSimSharedOptin))
    refuse(std::to_string(dynamic_smem) + " bytes of dynamic shared memory");
  const std::lock_guard<std::mutex> lock(g_launch_mutex);
  ++g_grids_run;
  std::vector<unsigned char> dynamic(dynamic_smem);
  BlockRun run;
  run.body = &thread;
  run.block = block;
  run.grid = grid;
  g_run = &run;
  g_dynamic = &dynamic;
  try {
    // The last block first (cuda_sim.h, execution model).
    for (unsigned z = grid.z; z-- > 0;)
      for (unsigned y = grid.y; y-- > 0;)
        for (unsigned x = grid.x; x-- > 0;) {
          run.bid = {x, y, z};
          run_block(run);
          if (run.error) std::rethrow_exception(run.error);
        }
  } catch (...) {
    g_run = nullptr;
    g_fiber = nullptr;
    g_dynamic = nullptr;
#if CUDA_SIM_ASAN
    // Threads left suspended by the failure never unwind: clear what their frames poisoned.
    __asan_unpoison_memory_region(stack_pool(), kStackBytes * threads);
#endif
    throw;
  }
  g_run = nullptr;
  g_dynamic = nullptr;
}

}  // namespace cuda_sim
