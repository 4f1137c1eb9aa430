// UTF-8 decoding and sequence classification (see utf8.h).
#include "tools/text/utf8.h"

namespace llmbench {

std::vector<CodePoint> code_points(std::string_view s) {
  std::vector<CodePoint> out;
  for (std::size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    const int n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    bool ok = n > 0 && i + std::size_t(n) <= s.size();
    char32_t c = n == 1 ? b : n == 2 ? b & 0x1F : n == 3 ? b & 0x0F : b & 0x07;
    for (int k = 1; ok && k < n; ++k) {
      const auto x = static_cast<unsigned char>(s[i + std::size_t(k)]);
      ok = (x >> 6) == 2;
      c = (c << 6) | (x & 0x3F);
    }
    if (!ok) {
      out.push_back({char32_t(0xDC80 + b), i, 1});
      ++i;
      continue;
    }
    out.push_back({c, i, std::size_t(n)});
    i += std::size_t(n);
  }
  return out;
}

Utf8Head utf8_head(std::string_view s, std::size_t& len) {
  const auto b = static_cast<unsigned char>(s[0]);
  len = 1;
  if (b < 0x80) return Utf8Head::kComplete;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range
  if (b >= 0xC2 && b <= 0xDF) n = 2;
  else if (b >= 0xE0 && b <= 0xEF) n = 3, lo = b == 0xE0 ? 0xA0 : 0x80, hi = b == 0xED ? 0x9F : 0xBF;
  else if (b >= 0xF0 && b <= 0xF4) n = 4, lo = b == 0xF0 ? 0x90 : 0x80, hi = b == 0xF4 ? 0x8F : 0xBF;
  else return Utf8Head::kInvalid;
  for (std::size_t k = 1; k < n; ++k) {
    if (k >= s.size()) {
      len = s.size();
      return Utf8Head::kIncomplete;
    }
    const auto x = static_cast<unsigned char>(s[k]);
    if (k == 1 ? (x < lo || x > hi) : (x < 0x80 || x > 0xBF)) return Utf8Head::kInvalid;
  }
  len = n;
  return Utf8Head::kComplete;
}

}  // namespace llmbench
