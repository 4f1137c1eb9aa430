// Deterministic randomness for the fuzz-style tests (tests/fuzz/, tests/engine/fuzz_*.cpp):
// draws from engine/model/rng.h's counter-based generator, so iteration i mutates the same way on
// every run and a failure names a reproducible iteration. Plus the outcome rule every fuzz
// target shares: success, or llmbench::Error (BadInput included); anything else is a bug.
#pragma once
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "engine/model/rng.h"
#include "kernels/common/error.h"

namespace llmbench_test {

class FuzzRng {
 public:
  FuzzRng(std::uint64_t seed, const char* stream)
      : key_(llmbench::stream_key(seed, llmbench::fnv1a64(stream))) {}
  std::uint64_t next() { return llmbench::stream_u64(key_, index_++); }
  std::uint64_t below(std::uint64_t n) { return n ? next() % n : 0; }
  bool percent(int p) { return below(100) < std::uint64_t(p); }
  template <class T>
  const T& pick(const std::vector<T>& v) { return v[below(v.size())]; }

 private:
  std::uint64_t key_, index_ = 0;
};

// Runs `fn`; "" when it returned or threw llmbench::Error, else what went wrong. `ok` says
// whether it returned.
template <class Fn>
std::string fuzz_outcome(Fn&& fn, bool& ok) {
  ok = false;
  try {
    fn();
    ok = true;
  } catch (const llmbench::Error&) {  // BadInput included: the only acceptable failures
  } catch (const std::exception& e) {
    return std::string("unexpected exception: ") + e.what();
  } catch (...) {
    return "unexpected non-standard exception";
  }
  return "";
}

}  // namespace llmbench_test
