// What the trace-import fuzz targets share around fuzz_outcome (fuzz_rng.h): the promise every
// imported slice keeps (a duration >= 0 whose end fits in int64 ns), and the per-mutation tally
// of inputs refused cleanly or read, printed and checked at the end.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <utility>

#include "tools/store/trace_nesting.h"

namespace llmbench_test {

inline void expect_valid_slices(const llmbench::ReadTrace& t, int iter) {
  for (const auto& s : t.trace.slices) {
    ASSERT_GE(s.dur, 0) << "iteration " << iter;
    std::int64_t end;
    ASSERT_FALSE(__builtin_add_overflow(s.ts, s.dur, &end)) << "iteration " << iter;
  }
}

// Per mutation kind: inputs refused cleanly (first), inputs read (second).
template <class Kind>
class FuzzTally {
 public:
  void add(int iter, Kind kind, const char* name, const std::string& problem, bool ok) {
    if (!problem.empty()) ADD_FAILURE() << "iteration " << iter << " (" << name << "): " << problem;
    ++(ok ? counts_[kind].second : counts_[kind].first);
  }
  // Prints the tally; every kind must have been drawn at least once.
  template <std::size_t N>
  void report(const char* const (&names)[N]) {
    for (std::size_t k = 0; k < N; ++k) {
      const auto [failed, read] = counts_[Kind(k)];
      std::printf("%-12s %5d failed cleanly, %5d read\n", names[k], failed, read);
      EXPECT_GT(failed + read, 0) << names[k];
    }
  }

 private:
  std::map<Kind, std::pair<int, int>> counts_;
};

}  // namespace llmbench_test
