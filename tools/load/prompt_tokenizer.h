// `llmbench load --tokenizer DIR`: counts the tokens of a dataset's text so prompt and output
// lengths are known before a request is sent (ShareGPT output lengths, vLLM's filters, the input
// length stored with each request). DIR holds a Hugging Face tokenizer.json (byte-level BPE,
// tokenizer_bpe.h; preferred when both are present) or a SentencePiece tokenizer.model (Debian
// libsentencepiece, when llmbench was built with it). A path to either file works as well.
// Not here: decoding, chat templates (the server applies its own; the counts are of the
// messages' text, without template tokens).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench {

class PromptTokenizer {
 public:
  // BadInput naming the path when it holds neither file, or the file cannot be read.
  static std::unique_ptr<PromptTokenizer> open(const std::string& dir_or_file);
  virtual ~PromptTokenizer() = default;
  virtual std::vector<std::int32_t> encode(std::string_view text) const = 0;
  std::size_t count(std::string_view text) const { return encode(text).size(); }
  // "tokenizer.json BPE (N entries) PATH" or "sentencepiece PATH (N pieces)".
  virtual std::string name() const = 0;
};

}  // namespace llmbench
