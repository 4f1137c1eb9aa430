// How error messages show a JSON value that was not what they expected: its type and, when it
// is short and flat, its text ("found string \"F64\"", "found array [-3]", "found object of 2
// elements"); and names taken from a file, made safe to print on one line. Shared by the
// safetensors and config.json readers.
// Deliberately not: a pretty-printer. Nested containers are never dumped, because dumping is
// recursive and a hostile header can nest a million levels deep.
#pragma once
#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

namespace llmbench {

inline std::string describe_json(const nlohmann::json& v) {
  const auto primitive = [](const nlohmann::json& e) { return e.is_primitive(); };
  const bool flat =
      v.is_primitive() || (v.size() <= 8 && std::all_of(v.begin(), v.end(), primitive));
  if (!flat) return std::string(v.type_name()) + " of " + std::to_string(v.size()) + " elements";
  // Invalid UTF-8 cannot come from the parser, but a replacement character beats a throw.
  std::string text = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return std::string(v.type_name()) + " " + text;
}

// `name` (a tensor or file name read from a file) with control characters replaced by '?' and
// cut at 200 bytes, so a hostile name cannot break an error message over several lines.
inline std::string printable(const std::string& name) {
  std::string out = name.substr(0, 200);
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = '?';
  return name.size() > 200 ? out + "..." : out;
}

}  // namespace llmbench
