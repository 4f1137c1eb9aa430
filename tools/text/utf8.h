// UTF-8 as the text library reads it: code points with their byte spans (malformed bytes kept,
// never dropped), and where a byte string stops being complete, valid UTF-8 (the streaming
// decoder holds an incomplete sequence back until the next token completes it).
// Not here: Unicode classes (tokenizer_bpe.cpp's split patterns) or normalisation.
#pragma once
#include <cstddef>
#include <string_view>
#include <vector>

namespace llmbench {

struct CodePoint {
  char32_t c;
  std::size_t at, len;  // byte span in the text
};

// UTF-8 decoding; a malformed byte stands for itself (one code point U+DC80 + byte, as Python's
// surrogateescape would), so no text is ever rejected or lost.
std::vector<CodePoint> code_points(std::string_view s);

// What the bytes at the start of `s` are.
enum class Utf8Head {
  kComplete,    // a valid sequence of `len` bytes
  kIncomplete,  // the first `len` bytes (all of s) begin a valid sequence that s ends inside
  kInvalid,     // the first byte begins no valid sequence (len = 1)
};
// Classifies the sequence at the start of `s` (non-empty) by RFC 3629: lead bytes C2..F4, the
// second byte's narrower ranges after E0, ED, F0 and F4 (no overlongs, surrogates or code
// points beyond U+10FFFF).
Utf8Head utf8_head(std::string_view s, std::size_t& len);

}  // namespace llmbench
