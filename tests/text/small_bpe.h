// A small byte-level BPE tokenizer.json for tests, written by the test (no download), whose
// ids all fit the tiny preset's vocabulary of 256, so `llmbench serve --model DIR` can use it
// with a tiny checkpoint:
//   ids 0..94     the printable ASCII bytes 0x20..0x7E (space as 'Ġ', GPT-2's byte map)
//   id  95        '\n' ('Ċ')
//   ids 96..210   the bytes 0x80..0xF4 (UTF-8 continuation and lead bytes)
//   ids 211..215  merges, by rank: "Ġ t", "h e", "Ġt he", "e r", "Ã ©" (the two bytes of
//                 "é", C3 A9, as one token; small_bpe_merges)
//   ids 250..252  added tokens <|im_start|>, <|im_end|>, <|endoftext|> (special)
// GPT-2's split pattern (a plain ByteLevel pre-tokenizer). Bytes 0x00..0x1F other than '\n',
// 0x7F and 0xF5..0xFF have no id: a text holding them cannot be encoded (the tokenizer has no
// unk token), which no test sends.
#pragma once
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace llmbench_test {

// GPT-2's byte-to-unicode character of byte b (the same map tokenizer_bpe.h implements,
// written out again here so the fixture does not come from the code under test).
inline std::string gpt2_byte_char(int b) {
  const bool self = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
  int c = b;
  if (!self) {
    int extra = 0;
    for (int x = 0; x < b; ++x)
      if (!((x >= '!' && x <= '~') || (x >= 0xA1 && x <= 0xAC) || (x >= 0xAE))) ++extra;
    c = 256 + extra;
  }
  std::string u;
  if (c < 0x80) {
    u += char(c);
  } else {
    u += char(0xC0 | (c >> 6));
    u += char(0x80 | (c & 0x3F));
  }
  return u;
}

// The id of byte b in the small tokenizer (-1: none).
inline int small_bpe_byte_id(int b) {
  if (b >= 0x20 && b <= 0x7E) return b - 0x20;
  if (b == '\n') return 95;
  if (b >= 0x80 && b <= 0xF4) return 96 + (b - 0x80);
  return -1;
}

constexpr int kSmallBpeImStart = 250, kSmallBpeImEnd = 251, kSmallBpeEndOfText = 252;

// Merges by rank; the merged token's id is 211 + rank.
inline std::vector<std::pair<std::string, std::string>> small_bpe_merges() {
  const std::string sp = gpt2_byte_char(' ');
  return {{sp, "t"}, {"h", "e"}, {sp + "t", "he"}, {"e", "r"},
          {gpt2_byte_char(0xC3), gpt2_byte_char(0xA9)}};
}

inline nlohmann::json small_bpe_json() {
  nlohmann::json vocab = nlohmann::json::object();
  for (int b = 0; b < 256; ++b)
    if (small_bpe_byte_id(b) >= 0) vocab[gpt2_byte_char(b)] = small_bpe_byte_id(b);
  nlohmann::json merges = nlohmann::json::array();
  int id = 211;
  for (const auto& [a, b] : small_bpe_merges()) {
    vocab[a + b] = id++;
    merges.push_back(a + " " + b);
  }
  nlohmann::json added = nlohmann::json::array();
  for (const auto& [content, tid] : {std::pair<const char*, int>{"<|im_start|>", kSmallBpeImStart},
                                     {"<|im_end|>", kSmallBpeImEnd},
                                     {"<|endoftext|>", kSmallBpeEndOfText}})
    added.push_back({{"id", tid}, {"content", content}, {"special", true}});
  return {{"version", "1.0"},
          {"added_tokens", added},
          {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}},
          {"decoder", {{"type", "ByteLevel"}}},
          {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}, {"unk_token", nullptr}}}};
}

// Writes DIR/tokenizer.json; returns its path.
inline std::string write_small_bpe(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  const std::filesystem::path file = dir / "tokenizer.json";
  std::ofstream(file) << small_bpe_json().dump(1);
  return file.string();
}

}  // namespace llmbench_test
