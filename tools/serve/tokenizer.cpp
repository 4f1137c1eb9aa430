// The tokenizers of `llmbench serve` (see tokenizer.h). SentencePiece is compiled in when the
// build found it (LLMBENCH_HAVE_SENTENCEPIECE, tools/serve/CMakeLists.txt).
#include "tools/serve/tokenizer.h"

#include "kernels/common/error.h"

#ifdef LLMBENCH_HAVE_SENTENCEPIECE
#include <sentencepiece_processor.h>
#endif

namespace llmbench {

namespace {

std::string id_text(std::int32_t id) {
  std::string text(1, '<');  // (appends: GCC 12 warns falsely on "<" + std::to_string(id))
  text += std::to_string(id);
  text += '>';
  return text;
}

}  // namespace

struct Tokenizer::Sp {
  std::string file;
#ifdef LLMBENCH_HAVE_SENTENCEPIECE
  sentencepiece::SentencePieceProcessor proc;
#endif
};

Tokenizer::Tokenizer(int vocab_size) : vocab_size_(vocab_size) {}
Tokenizer::~Tokenizer() = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;

bool Tokenizer::sentencepiece_available() {
#ifdef LLMBENCH_HAVE_SENTENCEPIECE
  return true;
#else
  return false;
#endif
}

Tokenizer Tokenizer::sentencepiece(const std::string& model_file, int vocab_size) {
  Tokenizer t(vocab_size);
#ifdef LLMBENCH_HAVE_SENTENCEPIECE
  t.sp_ = std::make_unique<Sp>();
  t.sp_->file = model_file;
  const auto status = t.sp_->proc.Load(model_file);
  if (!status.ok())
    throw BadInput("'" + model_file + "': not a SentencePiece model (" + status.ToString() + ")");
  const int pieces = t.sp_->proc.GetPieceSize();
  if (pieces > vocab_size)
    throw BadInput("'" + model_file + "': " + std::to_string(pieces) +
                   " pieces, more than the model's vocabulary of " + std::to_string(vocab_size));
  return t;
#else
  throw BadInput("'" + model_file + "': this llmbench was built without SentencePiece "
                 "(install libsentencepiece-dev, or run scripts/setup.sh, and rebuild)");
#endif
}

std::string Tokenizer::name() const {
#ifdef LLMBENCH_HAVE_SENTENCEPIECE
  if (sp_)
    return "sentencepiece " + sp_->file + " (" + std::to_string(sp_->proc.GetPieceSize()) +
           " pieces)";
#endif
  return "bytes";
}

std::vector<std::int32_t> Tokenizer::encode(std::string_view text) const {
#ifdef LLMBENCH_HAVE_SENTENCEPIECE
  if (sp_) {
    std::vector<int> ids;
    const auto status = sp_->proc.Encode(text, &ids);
    if (!status.ok()) throw BadInput("the prompt cannot be tokenized: " + status.ToString());
    return {ids.begin(), ids.end()};
  }
#endif
  std::vector<std::int32_t> ids;
  ids.reserve(text.size());
  for (unsigned char b : text) ids.push_back(std::int32_t(b % unsigned(vocab_size_)));
  return ids;
}

std::optional<std::int32_t> Tokenizer::special_id(std::string_view piece) const {
#ifdef LLMBENCH_HAVE_SENTENCEPIECE
  if (sp_) {
    const int id = sp_->proc.PieceToId(piece);
    if (id >= 0 && !sp_->proc.IsUnknown(id) && sp_->proc.IdToPiece(id) == piece) return id;
  }
#endif
  (void)piece;
  return std::nullopt;
}

std::string Tokenizer::decode(std::int32_t id) const {
#ifdef LLMBENCH_HAVE_SENTENCEPIECE
  if (sp_) {
    if (id < 0 || id >= sp_->proc.GetPieceSize() || sp_->proc.IsControl(id) ||
        sp_->proc.IsUnknown(id))
      return id_text(id);
    const std::string piece = sp_->proc.IdToPiece(id);
    if (sp_->proc.IsByte(id)) {  // "<0xNN>"
      const int b = std::stoi(piece.substr(3, 2), nullptr, 16);
      return b >= 32 && b <= 126 ? std::string(1, char(b)) : id_text(id);
    }
    std::string text;
    static constexpr std::string_view kSpace = "\xE2\x96\x81";  // U+2581
    for (std::size_t i = 0; i < piece.size();) {
      if (piece.compare(i, kSpace.size(), kSpace) == 0) {
        text += ' ';
        i += kSpace.size();
      } else {
        text += piece[i++];
      }
    }
    return text;
  }
#endif
  if ((id >= 32 && id <= 126) || id == 9 || id == 10 || id == 13) return std::string(1, char(id));
  return id_text(id);
}

std::string Tokenizer::decode(const std::vector<std::int32_t>& ids) const {
#ifdef LLMBENCH_HAVE_SENTENCEPIECE
  if (sp_) {
    // Ids beyond the pieces (a model vocabulary larger than the tokenizer's) are written as
    // "<id>" between the decoded runs of valid ids.
    std::string text;
    std::vector<int> run;
    auto flush = [&] {
      if (run.empty()) return;
      std::string part;
      if (sp_->proc.Decode(run, &part).ok()) text += part;
      run.clear();
    };
    for (auto id : ids) {
      if (id >= 0 && id < sp_->proc.GetPieceSize()) {
        run.push_back(id);
      } else {
        flush();
        text += id_text(id);
      }
    }
    flush();
    return text;
  }
#endif
  std::string text;
  for (auto id : ids) text += decode(id);
  return text;
}

}  // namespace llmbench
