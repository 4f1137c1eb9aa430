// The one way llmbench parses JSON that came from outside the process: HTTP bodies, SSE events,
// dataset and tokenizer files, config.json and safetensors headers, database columns, trace
// imports. nlohmann's parser and its dump() recurse once per nesting level, so a few hundred KB
// of "[[[[..." overflows the stack; parse_json() measures nesting (and size) with a linear scan
// that does not recurse, before the parser sees a byte, and refuses what is too deep or too big.
// Refusals and syntax errors quote at most a short excerpt of the input.
// Deliberately not: a JSON parser of its own, or a schema check (each reader checks its fields).
#pragma once
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace llmbench {

struct JsonLimits {
  std::size_t max_bytes = std::size_t(1) << 30;  // the text itself
  int max_depth = 64;                            // arrays and objects inside each other
  // Values (scalars, arrays, objects) in the whole document; 0 = no limit. Bounds what the
  // parsed tree can cost (about 16 bytes a value plus containers) before it is built.
  std::size_t max_values = 0;
};

// Why `text` exceeds `limits` ("nested deeper than 64 levels (at byte 1234)", "12345678 bytes,
// more than the 1048576-byte limit"), or nullopt. Linear, no recursion, no allocation beyond
// the message. Brackets inside strings do not count.
std::optional<std::string> json_limit_violation(std::string_view text, const JsonLimits& limits);

// A parse that did not give a value: `error` says why, in one line, with a short excerpt.
template <class Json>
struct JsonParsed {
  Json value;          // discarded when !ok()
  std::string error;   // empty when ok
  bool ok() const { return error.empty(); }
};

// Parses `text` within `limits`. Never throws for bad input: the result carries the reason.
// `callback` (optional) is nlohmann's parser callback, for readers that stream or filter.
JsonParsed<nlohmann::json> parse_json(
    std::string_view text, const JsonLimits& limits = {},
    nlohmann::json::parser_callback_t callback = nullptr);
JsonParsed<nlohmann::ordered_json> parse_ordered_json(std::string_view text,
                                                      const JsonLimits& limits = {});

// As parse_json, but throws BadInput "<what>: <reason>" when the text is refused or invalid.
nlohmann::json parse_json_or_throw(std::string_view text, std::string_view what,
                                   const JsonLimits& limits = {},
                                   nlohmann::json::parser_callback_t callback = nullptr);

// At most `max_bytes` of `text`, control characters shown as '?', "..." when cut: what an error
// message may quote of input it refuses.
std::string json_excerpt(std::string_view text, std::size_t max_bytes = 40);

}  // namespace llmbench
