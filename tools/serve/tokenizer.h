// Text <-> token ids for `llmbench serve` when a checkpoint ships no tokenizer (random-weight
// presets always): a documented, deterministic byte-level mapping (docs/serving.md).
//   encode: every byte b of the UTF-8 text is one token, id b % vocab_size (b itself for any
//           vocabulary of 256 ids or more). An empty text is no tokens.
//   decode: an id in printable ASCII (32..126), or 9 / 10 / 13 (tab, newline, carriage return),
//           is that character; any other id is written "<id>" (for example "<4711>"), so the
//           text is always valid UTF-8 and says which ids were generated.
// Token-id prompts bypass it; responses carry the generated ids as well (token_ids).
// Not here: SentencePiece (a checkpoint's tokenizer.model is not read yet).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench {

class ByteTokenizer {
 public:
  explicit ByteTokenizer(int vocab_size) : vocab_size_(vocab_size) {}
  std::string name() const { return "bytes"; }
  std::vector<std::int32_t> encode(std::string_view text) const;
  std::string decode(std::int32_t id) const;
  std::string decode(const std::vector<std::int32_t>& ids) const;

 private:
  int vocab_size_;
};

}  // namespace llmbench
