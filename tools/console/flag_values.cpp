// Flag value parsing (see flag_values.h).
#include "tools/console/flag_values.h"

#include <charconv>

#include "kernels/common/error.h"

namespace llmbench {

int parse_int(const std::string& flag, const std::string& text, int min, int max) {
  long long v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  const std::string range = "an integer in [" + std::to_string(min) + ", " +
                            std::to_string(max) + "]";
  if (text.empty() || ec != std::errc() || p != end)
    throw BadInput(flag + ": expected " + range + ", got '" + text + "'");
  if (v < min || v > max)
    throw BadInput(flag + ": expected " + range + ", got " + text);
  return int(v);
}

std::vector<std::string> parse_word_list(const std::string& flag, const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty())
      throw BadInput(flag + ": expected a comma-separated list without empty items, got '" +
                     text + "'");
    out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::vector<int> parse_int_list(const std::string& flag, const std::string& text, int min,
                                int max) {
  std::vector<int> out;
  for (const auto& item : parse_word_list(flag, text)) out.push_back(parse_int(flag, item, min, max));
  return out;
}

}  // namespace llmbench
