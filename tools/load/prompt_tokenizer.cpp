// Opening `--tokenizer` (see prompt_tokenizer.h). SentencePiece is compiled in when the build
// found it (LLMBENCH_HAVE_SENTENCEPIECE, tools/load/CMakeLists.txt).
#include "tools/load/prompt_tokenizer.h"

#include <filesystem>

#include "kernels/common/error.h"
#include "tools/load/tokenizer_bpe.h"

#ifdef LLMBENCH_HAVE_SENTENCEPIECE
#include <sentencepiece_processor.h>
#endif

namespace llmbench {

namespace {

namespace fs = std::filesystem;

class BpePromptTokenizer final : public PromptTokenizer {
 public:
  explicit BpePromptTokenizer(const std::string& path)
      : path_(path), bpe_(BpeTokenizer::from_file(path)) {}
  std::vector<std::int32_t> encode(std::string_view text) const override {
    return bpe_.encode(text);
  }
  std::string name() const override {
    return "tokenizer.json BPE (" + std::to_string(bpe_.vocab_size()) + " entries) " + path_;
  }

 private:
  std::string path_;
  BpeTokenizer bpe_;
};

#ifdef LLMBENCH_HAVE_SENTENCEPIECE
class SpPromptTokenizer final : public PromptTokenizer {
 public:
  explicit SpPromptTokenizer(const std::string& path) : path_(path) {
    const auto status = proc_.Load(path);
    if (!status.ok())
      throw BadInput("--tokenizer: cannot load SentencePiece model '" + path +
                     "': " + status.ToString());
  }
  std::vector<std::int32_t> encode(std::string_view text) const override {
    std::vector<int> ids;
    const auto status = proc_.Encode(std::string(text), &ids);
    if (!status.ok()) throw Error("SentencePiece encode failed: " + status.ToString());
    return {ids.begin(), ids.end()};
  }
  std::string name() const override {
    return "sentencepiece " + path_ + " (" + std::to_string(proc_.GetPieceSize()) + " pieces)";
  }

 private:
  std::string path_;
  sentencepiece::SentencePieceProcessor proc_;
};
#endif

std::unique_ptr<PromptTokenizer> open_sentencepiece(const std::string& path) {
#ifdef LLMBENCH_HAVE_SENTENCEPIECE
  return std::make_unique<SpPromptTokenizer>(path);
#else
  throw BadInput("--tokenizer: '" + path + "' is a SentencePiece model, but this llmbench was "
                 "built without SentencePiece (Debian: libsentencepiece-dev)");
#endif
}

}  // namespace

std::unique_ptr<PromptTokenizer> PromptTokenizer::open(const std::string& dir_or_file) {
  std::error_code ec;
  const fs::path p(dir_or_file);
  if (fs::is_regular_file(p, ec)) {
    if (p.extension() == ".json") return std::make_unique<BpePromptTokenizer>(p.string());
    return open_sentencepiece(p.string());
  }
  if (!fs::is_directory(p, ec))
    throw BadInput("--tokenizer: '" + dir_or_file + "' is neither a directory nor a file");
  if (fs::is_regular_file(p / "tokenizer.json", ec))
    return std::make_unique<BpePromptTokenizer>((p / "tokenizer.json").string());
  if (fs::is_regular_file(p / "tokenizer.model", ec))
    return open_sentencepiece((p / "tokenizer.model").string());
  throw BadInput("--tokenizer: '" + dir_or_file + "' has no tokenizer.json or tokenizer.model");
}

}  // namespace llmbench
