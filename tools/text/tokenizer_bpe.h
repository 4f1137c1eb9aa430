// A Hugging Face `tokenizer.json` byte-level BPE encoder (GPT-2, Llama 3, Qwen2 and their
// kin), implemented from the file format: `llmbench load` counts a dataset's tokens with it and
// `llmbench serve` encodes prompts and decodes completions with it (through tokenizer.h):
//   1. added tokens (the file's "added_tokens") are cut out of the text first and map to their id;
//   2. the pre-tokenizer splits the rest into pieces by the model's regex (below);
//   3. each piece's UTF-8 bytes become printable characters through GPT-2's byte-to-unicode map
//      (bytes ! .. ~, ¡ .. ¬, ® .. ÿ map to themselves, the other 68 to U+0100 onwards in order);
//   4. BPE: start from one symbol per character, merge the adjacent pair of lowest rank (its line
//      in "merges") everywhere it occurs, repeat until no pair has a rank; with "ignore_merges"
//      a piece found whole in the vocabulary is taken as is;
//   5. each symbol's id from "vocab" (a symbol without one: the unk token, else an error).
// The split regexes are matched by hand, not by a regex engine: the three patterns in use are
// recognised by their text (GPT-2's ByteLevel default, Llama 3's with \p{N}{1,3}, Qwen2's with
// \p{N}), and any other pattern is refused by name. \p{L} and \p{N} are exact for ASCII; beyond
// it a code point counts as a letter unless it lies in the whitespace, punctuation, symbol and
// digit blocks listed in tokenizer_bpe.cpp (documented in docs/serving.md as an approximation).
// Decoding (token_bytes) inverts step 3: a vocab entry's characters back to the bytes they stand
// for; an added token is its content. Joining those bytes into valid UTF-8 text across a
// stream is stream_decoder.h's part.
// Not here: normalizers (text is taken as given, e.g. already NFC), post-processors (no
// BOS/EOS is added: the chat template or the client writes them).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace llmbench {

// The pre-tokenizer split patterns understood.
enum class BpeSplit { kGpt2, kLlama3, kQwen2 };

class BpeTokenizer {
 public:
  // Reads a tokenizer.json; BadInput naming the file (`what`) and the problem for anything else
  // than a byte-level BPE with a recognised split pattern.
  static BpeTokenizer from_file(const std::string& path);
  static BpeTokenizer from_json_text(const std::string& text, const std::string& what);

  std::vector<std::int32_t> encode(std::string_view text) const;
  std::size_t vocab_size() const { return vocab_.size(); }
  // One more than the largest id of the vocab and the added tokens.
  std::size_t id_limit() const { return known_.size(); }
  // The bytes id stands for (an added token: its content); nullptr for an id the file lacks.
  const std::string* token_bytes(std::int32_t id) const;
  // True for an added token (special or not: "<|im_start|>", "<|begin_of_text|>", ...).
  bool is_added(std::int32_t id) const;
  // The id of the added token written `content`; nullopt when the file has none.
  std::optional<std::int32_t> added_id(std::string_view content) const;
  BpeSplit split() const { return split_; }

  // The pieces the pre-tokenizer cuts `text` into (exposed for tests).
  static std::vector<std::string> pre_split(std::string_view text, BpeSplit style);
  // GPT-2's byte-to-unicode map: the UTF-8 text of the character byte `b` stands for.
  static const std::string& byte_char(unsigned char b);

 private:
  // from_json_text without the conversion of nlohmann's type errors into BadInput.
  static BpeTokenizer from_json_unchecked(const std::string& text, const std::string& what);
  void encode_piece(const std::string& piece, std::vector<std::int32_t>& out) const;
  void build_decode_table();

  BpeSplit split_ = BpeSplit::kGpt2;
  bool add_prefix_space_ = false;
  bool ignore_merges_ = false;
  std::int32_t unk_id_ = -1;
  std::unordered_map<std::string, std::int32_t> vocab_;
  std::map<std::pair<std::string, std::string>, int> ranks_;
  std::vector<std::pair<std::string, std::int32_t>> added_;  // longest first
  std::vector<std::string> bytes_;  // by id: what token_bytes returns
  std::vector<char> known_;         // by id: 0 no such id, 1 vocab, 2 added token
};

}  // namespace llmbench
