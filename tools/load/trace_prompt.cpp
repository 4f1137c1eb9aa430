// Trace replay's prompts (see trace_prompt.h).
#include "tools/load/trace_prompt.h"

#include <algorithm>
#include <random>

namespace llmbench {

namespace {

constexpr std::int32_t kIdMin = 16, kIdMax = 255;

void append_block(std::vector<std::int32_t>& out, std::uint64_t key, std::size_t n) {
  std::mt19937_64 rng(key);
  for (std::size_t i = 0; i < n; ++i)
    out.push_back(kIdMin + std::int32_t(rng() % std::uint64_t(kIdMax - kIdMin + 1)));
}

// Distinct streams for hash blocks and for a request's own tail.
std::uint64_t mix(std::uint64_t seed, std::uint64_t x, std::uint64_t salt) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ull ^ (x + salt) * 0xBF58476D1CE4E5B9ull;
  z ^= z >> 31;
  return z * 0x94D049BB133111EBull;
}

}  // namespace

std::vector<std::int32_t> trace_prompt_ids(const std::vector<std::int64_t>& hash_ids,
                                           int input_length, int block_size,
                                           std::size_t request_index, std::uint64_t seed) {
  std::vector<std::int32_t> ids;
  const std::size_t want = std::size_t(input_length);
  ids.reserve(want);
  for (std::int64_t h : hash_ids) {
    if (ids.size() >= want) break;
    append_block(ids, mix(seed, std::uint64_t(h), 1), std::min<std::size_t>(std::size_t(block_size), want - ids.size()));
  }
  if (ids.size() < want) append_block(ids, mix(seed, request_index, 2), want - ids.size());
  return ids;
}

}  // namespace llmbench
