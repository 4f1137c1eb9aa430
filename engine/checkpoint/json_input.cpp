// The bounded JSON parse for input from outside (see json_input.h).
#include "engine/checkpoint/json_input.h"

#include <exception>

#include "kernels/common/error.h"

namespace llmbench {

std::optional<std::string> json_limit_violation(std::string_view text, const JsonLimits& limits) {
  if (text.size() > limits.max_bytes)
    return std::to_string(text.size()) + " bytes, more than the " +
           std::to_string(limits.max_bytes) + "-byte limit";
  int depth = 0;
  std::size_t values = 0;
  bool in_string = false;
  bool in_scalar = false;  // inside a number or literal (true, false, null)
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;  // the escaped character cannot end the string
      else if (c == '"') in_string = false;
      continue;
    }
    const bool scalar_char = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '-' ||
                             c == '+' || c == '.' || (c >= 'A' && c <= 'Z');
    if (scalar_char && !in_scalar) ++values;
    in_scalar = scalar_char;
    if (c == '"') {
      in_string = true;
      ++values;
    } else if (c == '[' || c == '{') {
      ++values;
      if (++depth > limits.max_depth)
        return "nested deeper than " + std::to_string(limits.max_depth) + " levels (at byte " +
               std::to_string(i) + ")";
    } else if (c == ']' || c == '}') {
      --depth;
    }
    if (limits.max_values && values > limits.max_values)
      return "more than " + std::to_string(limits.max_values) + " values";
  }
  return std::nullopt;
}

std::string json_excerpt(std::string_view text, std::size_t max_bytes) {
  std::string out(text.substr(0, max_bytes));
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = '?';
  return text.size() > max_bytes ? out + "..." : out;
}

namespace {

// nlohmann's messages are one line and name the byte; they quote the last token read, which
// for a long string is the whole string: cut the message instead.
std::string short_error(const std::exception& e) {
  std::string m = e.what();
  if (m.size() > 200) m = m.substr(0, 197) + "...";
  for (char& c : m)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = '?';
  return m;
}

template <class Json>
JsonParsed<Json> parse_bounded(std::string_view text, const JsonLimits& limits,
                               typename Json::parser_callback_t callback) {
  JsonParsed<Json> out;
  const bool callback_given = static_cast<bool>(callback);
  if (auto why = json_limit_violation(text, limits)) {
    out.error = *why;
    out.value = Json(Json::value_t::discarded);
    return out;
  }
  try {
    out.value = Json::parse(text.begin(), text.end(), std::move(callback));
  } catch (const typename Json::exception& e) {
    out.error = short_error(e);
    out.value = Json(Json::value_t::discarded);
  }
  // A callback may discard the top level on purpose (a reader that streams); without one a
  // discarded value cannot happen, but say so rather than hand it on.
  if (out.ok() && !callback_given && out.value.is_discarded())
    out.error = "the document was discarded";
  return out;
}

}  // namespace

JsonParsed<nlohmann::json> parse_json(std::string_view text, const JsonLimits& limits,
                                      nlohmann::json::parser_callback_t callback) {
  return parse_bounded<nlohmann::json>(text, limits, std::move(callback));
}

JsonParsed<nlohmann::ordered_json> parse_ordered_json(std::string_view text,
                                                      const JsonLimits& limits) {
  return parse_bounded<nlohmann::ordered_json>(text, limits, nullptr);
}

nlohmann::json parse_json_or_throw(std::string_view text, std::string_view what,
                                   const JsonLimits& limits,
                                   nlohmann::json::parser_callback_t callback) {
  auto parsed = parse_json(text, limits, std::move(callback));
  if (!parsed.ok()) throw BadInput(std::string(what) + ": " + parsed.error);
  return std::move(parsed.value);
}

}  // namespace llmbench
