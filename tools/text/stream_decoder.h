// Detokenization of a stream, token by token, with UTF-8 boundaries across chunks: a character
// whose bytes are spread over several tokens (byte-level BPE writes "é" as two tokens, a
// SentencePiece byte fallback "日" as three <0xNN> pieces) is held back until the token that
// completes it arrives, so every chunk is valid UTF-8 and the chunks join into the text.
//   push(id)  the text that id completes ("" while a character is still incomplete);
//   finish()  what is still held at the end, as the tokenizer's replacement (tokenizer.h).
// Bytes that cannot begin or continue a valid sequence are replaced at once; a token that is a
// text of its own ("<id>", an added token) first replaces what it leaves incomplete.
// Not here: the per-token pieces (Tokenizer::piece), SSE framing (tools/serve).
#pragma once
#include <cstdint>
#include <string>

#include "tools/text/tokenizer.h"

namespace llmbench {

class StreamDecoder {
 public:
  explicit StreamDecoder(const Tokenizer& tokenizer) : tok_(tokenizer) {}
  std::string push(std::int32_t id);
  std::string finish();
  // Bytes held back now (the start of an incomplete character).
  std::size_t held_bytes() const { return held_.size(); }

 private:
  const Tokenizer& tok_;
  std::string held_;
};

}  // namespace llmbench
