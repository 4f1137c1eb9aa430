// Shared by the coverage-guided harnesses (scripts/libfuzzer.sh): the fuzzer's bytes cut into
// the pieces a peer would send them in. The first byte seeds the cut points, so the fuzzer
// explores the splits as it explores the bytes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace llmbench_fuzz {

struct Split {
  std::uint8_t seed = 0;           // for harness-specific choices (chat or not, limits)
  std::vector<std::string_view> pieces;
};

inline Split split_input(const std::uint8_t* data, std::size_t size) {
  Split s;
  if (size == 0) return s;
  s.seed = data[0];
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  std::uint32_t x = 0x9E3779B9u ^ s.seed;
  while (!rest.empty()) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;  // xorshift32
    // Mostly small pieces (byte-at-a-time reads, split CR LF), sometimes the rest at once.
    const std::size_t n = (x & 7) == 0 ? rest.size() : 1 + (x >> 8) % 17;
    s.pieces.push_back(rest.substr(0, n));
    rest.remove_prefix(std::min(n, rest.size()));
  }
  return s;
}

}  // namespace llmbench_fuzz
