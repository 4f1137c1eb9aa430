// Work units (panels of weight rows) shared out over the threads of one OpenMP parallel region
// so that every thread streams forward and none waits idle at the region's end while another
// still has work. Each thread starts on its own contiguous share (as schedule(static) gives it,
// one sequential weight stream per thread); a thread whose share is used up splits the largest
// remaining share and takes its back half, which it then walks forward the same way. Used by
// the decode kernels, whose panels each read their own weight rows and write their own outputs,
// so a panel's result does not depend on which thread computes it (the same bits as static).
//
// Why: on a VM whose vCPUs are shared, one thread is often slowed for part of a matrix; with a
// static split the other thread then waits at the barrier and the memory stream sits idle
// (measured in tinyllama-1.1b fp32 decode: the two threads' end times differed by 15-17% of
// the GEMMs' wall time; docs/case-studies/cpu-decode-vs-llama-cpp.md "Against llama.cpp").
// Deliberately not: a shared counter for every unit (one stream per thread would become
// interleaved panels, and every claim a contended cache line).
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>

namespace llmbench::cpu {

class PanelSchedule {
 public:
  // n_units units over n_shares initial shares (the largest team that will run them; a
  // smaller team is fine: shares nobody starts on are taken by the others).
  PanelSchedule(int n_units, int n_shares)
      : n_shares_(std::max(n_shares, 1)), shares_(new Share[std::size_t(n_shares_)]) {
    for (int s = 0; s < n_shares_; ++s)
      shares_[s].range.store(pack(int(std::int64_t(n_units) * s / n_shares_),
                                  int(std::int64_t(n_units) * (s + 1) / n_shares_)),
                             std::memory_order_relaxed);
  }

  // Called by thread `self` of the region: f(u) for every unit this thread claims, until no
  // share has any left. Every unit is claimed by exactly one thread. A thread numbered past
  // the shares (a team larger than promised) takes none; the others do its part.
  template <class F>
  void run(int self, F&& f) {
    if (self < 0 || self >= n_shares_) return;
    Share& own = shares_[self];
    for (;;) {
      int u;
      while (take_front(own, u)) f(u);
      if (!steal_into(own)) return;
    }
  }

 private:
  // [front, back) of one share in one word, so a claim from either end is one compare-exchange.
  // Relaxed order suffices: the word only decides who owns a unit, and the region's closing
  // barrier orders the units' outputs.
  struct alignas(64) Share {
    std::atomic<std::uint64_t> range{0};
  };
  static std::uint64_t pack(int front, int back) {
    return std::uint64_t(std::uint32_t(front)) | std::uint64_t(std::uint32_t(back)) << 32;
  }
  static int front_of(std::uint64_t r) { return int(std::uint32_t(r)); }
  static int back_of(std::uint64_t r) { return int(std::uint32_t(r >> 32)); }

  static bool take_front(Share& s, int& u) {
    std::uint64_t r = s.range.load(std::memory_order_relaxed);
    while (front_of(r) < back_of(r))
      if (s.range.compare_exchange_weak(r, pack(front_of(r) + 1, back_of(r)),
                                        std::memory_order_relaxed)) {
        u = front_of(r);
        return true;
      }
    return false;
  }

  // Moves the back half (rounded up) of the largest other share into `own` (empty: only its
  // owner refills it, and thieves skip empty shares). False when every share is empty.
  bool steal_into(Share& own) {
    for (;;) {
      Share* victim = nullptr;
      std::uint64_t r = 0;
      int most = 0;
      for (int s = 0; s < n_shares_; ++s) {
        const std::uint64_t v = shares_[s].range.load(std::memory_order_relaxed);
        if (&shares_[s] != &own && back_of(v) - front_of(v) > most) {
          victim = &shares_[s], r = v, most = back_of(v) - front_of(v);
        }
      }
      if (victim == nullptr) return false;
      const int mid = front_of(r) + most / 2;
      if (victim->range.compare_exchange_strong(r, pack(front_of(r), mid),
                                                std::memory_order_relaxed)) {
        own.range.store(pack(mid, back_of(r)), std::memory_order_relaxed);
        return true;
      }
    }
  }

  int n_shares_;
  std::unique_ptr<Share[]> shares_;
};

}  // namespace llmbench::cpu
