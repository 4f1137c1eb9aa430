// Text <-> token ids, the one tokenizer `llmbench serve` and `llmbench load` share
// (docs/serving.md, "Text prompts"). Three kinds:
// - tokenizer.json byte-level BPE (tokenizer_bpe.h): GPT-2, Llama 3, Qwen2 and their kin.
// - SentencePiece: a `tokenizer.model` (Debian libsentencepiece-dev), when llmbench was built
//   with it. encode is the library's Encode; the whole-completion decode its Decode.
// - A documented, deterministic byte-level mapping (random-weight presets, checkpoints without
//   a tokenizer file): every byte b of the UTF-8 text is one token, id b % vocab_size (b itself
//   for any vocabulary of 256 ids or more); an empty text is no tokens.
// A directory's text goes through tokenizer.json when it has one, else tokenizer.model
// (file_in). Decoding is per token (piece) for the streaming decoder (stream_decoder.h), which
// joins byte pieces into whole UTF-8 characters across tokens:
//   BPE      a vocab entry is the bytes its characters stand for; an added token ("<|im_end|>")
//            its content; an id the file lacks "<id>".
//   SentencePiece  a piece with U+2581 (the word-boundary mark) as a space; a byte piece <0xNN>
//            that byte; control and unknown pieces, and ids beyond the pieces, "<id>".
//   bytes    ids 9, 10, 13, 32..126 and 128..255 are that byte; any other id "<id>" (for
//            example "<4711>"), and a byte that is no part of valid UTF-8 "<byte>", so the text
//            is valid UTF-8 and still says which ids were generated.
// Token-id prompts bypass all of this; responses carry the generated ids as well.
// Not here: chat templates (chat_template.h), special tokens in rendered chats (chat_tokens.h).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench {

class BpeTokenizer;

// One token as the streaming decoder reads it.
struct TokenPiece {
  std::string bytes;
  // true: bytes that may be part of a multi-byte UTF-8 character spread over tokens; false: a
  // text of its own ("<id>", an added token), which ends any character left incomplete.
  bool joins = true;
};

class Tokenizer {
 public:
  enum class Kind { kBytes, kSentencePiece, kBpe };

  // The byte-level mapping for a vocabulary of `vocab_size` ids.
  explicit Tokenizer(int vocab_size);
  // A tokenizer.json (BPE) or SentencePiece model file, whose ids must fit a model vocabulary
  // of `vocab_size` (0: any). BadInput naming the file when it cannot be loaded, when its ids
  // exceed the vocabulary, or (SentencePiece) when llmbench was built without the library.
  static Tokenizer bpe(const std::string& json_file, int vocab_size = 0);
  static Tokenizer sentencepiece(const std::string& model_file, int vocab_size = 0);
  // bpe() for a file named *.json, else sentencepiece().
  static Tokenizer from_file(const std::string& file, int vocab_size = 0);
  // The tokenizer file of a directory: DIR/tokenizer.json when present, else
  // DIR/tokenizer.model, else "" (no file: the byte-level mapping).
  static std::string file_in(const std::string& dir);
  // A file (from_file) or a directory (its file_in). BadInput naming the path when it is
  // neither, or a directory without a tokenizer file.
  static Tokenizer open(const std::string& dir_or_file, int vocab_size = 0);
  // True when this build can read tokenizer.model files.
  static bool sentencepiece_available();
  ~Tokenizer();
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;

  Kind kind() const;
  // "bytes", "sentencepiece FILE (N pieces)" or "tokenizer.json BPE (N entries) FILE".
  std::string name() const;
  bool is_sentencepiece() const { return kind() == Kind::kSentencePiece; }
  std::vector<std::int32_t> encode(std::string_view text) const;
  std::size_t count(std::string_view text) const { return encode(text).size(); }
  // The id of a special token written as text in a chat template ("<s>", "<|im_start|>"), when
  // this tokenizer has it as one token; nullopt otherwise (the byte mapping never has).
  std::optional<std::int32_t> special_id(std::string_view piece) const;
  // One token for the streaming decoder.
  TokenPiece piece(std::int32_t id) const;
  // What replaces bytes that no token completed into valid UTF-8: "<b>" for each byte of the
  // byte mapping, U+FFFD otherwise (as Python's errors="replace" writes it).
  std::string replacement(std::string_view bytes) const;
  // A whole completion. SentencePiece: the library's Decode (without the leading space its
  // dummy prefix adds), ids beyond the pieces as "<id>" between the decoded runs; the others:
  // the streaming decoder's text of all ids.
  std::string decode(const std::vector<std::int32_t>& ids) const;

 private:
  struct Sp;
  int vocab_size_;
  std::unique_ptr<Sp> sp_;
  std::unique_ptr<BpeTokenizer> bpe_;
  std::string file_;
};

}  // namespace llmbench
