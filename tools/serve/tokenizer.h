// Text <-> token ids for `llmbench serve` (docs/serving.md, "Text prompts").
// - SentencePiece: a checkpoint directory's `tokenizer.model` (Debian libsentencepiece-dev),
//   when llmbench was built with it. encode is the model's own EncodeAsIds; decode of a whole
//   completion is DecodeIds; decode of one streamed token is its piece with U+2581 (the
//   word-boundary mark) as a space, byte pieces <0xNN> of printable ASCII as that character,
//   and control, unknown or other byte pieces as "<id>", so every chunk is valid UTF-8.
// - Otherwise a documented, deterministic byte-level mapping (random-weight presets always):
//   encode: every byte b of the UTF-8 text is one token, id b % vocab_size (b itself for any
//           vocabulary of 256 ids or more). An empty text is no tokens.
//   decode: an id in printable ASCII (32..126), or 9 / 10 / 13 (tab, newline, carriage return),
//           is that character; any other id is written "<id>" (for example "<4711>"), so the
//           text is always valid UTF-8 and says which ids were generated.
// Token-id prompts bypass both; responses carry the generated ids as well (token_ids).
// Not here: chat templates, special-token handling beyond what the SentencePiece model does.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench {

class Tokenizer {
 public:
  // The byte-level mapping for a vocabulary of `vocab_size` ids.
  explicit Tokenizer(int vocab_size);
  // A SentencePiece model file. Throws BadInput naming the file when it cannot be loaded, when
  // it has more pieces than the model's vocabulary, or when llmbench was built without
  // SentencePiece.
  static Tokenizer sentencepiece(const std::string& model_file, int vocab_size);
  // True when this build can read tokenizer.model files.
  static bool sentencepiece_available();
  ~Tokenizer();
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;

  // "bytes", or "sentencepiece FILE (N pieces)".
  std::string name() const;
  bool is_sentencepiece() const { return sp_ != nullptr; }
  std::vector<std::int32_t> encode(std::string_view text) const;
  // The id of a special token written as text in a chat template ("<s>", "<|im_start|>"), when
  // this tokenizer has it as one piece; nullopt otherwise (the byte mapping never has).
  std::optional<std::int32_t> special_id(std::string_view piece) const;
  // One streamed token.
  std::string decode(std::int32_t id) const;
  // A whole completion.
  std::string decode(const std::vector<std::int32_t>& ids) const;

 private:
  struct Sp;
  int vocab_size_;
  std::unique_ptr<Sp> sp_;
};

}  // namespace llmbench
