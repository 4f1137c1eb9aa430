// Request ids (see request_id.h).
#include "tools/serve/request_id.h"

#include <fmt/core.h>

namespace llmbench {

bool acceptable_request_id(std::string_view id) {
  if (id.empty() || id.size() > kMaxRequestIdBytes) return false;
  for (const char ch : id) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

namespace {
// splitmix64: spreads a seed made of a clock and a pid over all 64 bits.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
}  // namespace

RequestIds::RequestIds(std::uint64_t seed) : prefix_(fmt::format("llmbench-{:016x}-", mix(seed))) {}

std::string RequestIds::accept(std::string_view sent) {
  if (acceptable_request_id(sent)) return std::string(sent);
  return prefix_ + std::to_string(++next_);
}

}  // namespace llmbench
