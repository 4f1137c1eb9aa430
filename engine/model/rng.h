// The counter-based random numbers behind synthetic weights and prompts.
// Counter-based (value = f(seed, stream, index)) so that any element can be generated
// independently: in parallel, in any order, and by an independent reimplementation
// (tests/reference/llama_ref.py reads exported weights, but docs/weights.md documents this
// procedure so anyone can rebuild them).
#pragma once
#include <cstdint>
#include <string_view>

namespace llmbench {

// SplitMix64's finaliser: a bijective 64-bit mix.
constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// FNV-1a over the bytes of a name (tensor names select independent streams).
constexpr std::uint64_t fnv1a64(std::string_view s) {
  std::uint64_t h = 0xCBF29CE484222325ULL;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001B3ULL;
  return h;
}

// The stream key of (seed, name).
constexpr std::uint64_t stream_key(std::uint64_t seed, std::uint64_t name_hash) {
  return mix64(seed ^ name_hash);
}

// The index-th 64-bit value of a stream.
constexpr std::uint64_t stream_u64(std::uint64_t key, std::uint64_t index) {
  return mix64(key + (index + 1) * 0x9E3779B97F4A7C15ULL);
}

// Uniform in (0, 1): the top 24 bits, centred in their bucket; exact in float.
constexpr float stream_uniform(std::uint64_t key, std::uint64_t index) {
  return (float((stream_u64(key, index) >> 40)) + 0.5f) * (1.0f / 16777216.0f);
}

}  // namespace llmbench
