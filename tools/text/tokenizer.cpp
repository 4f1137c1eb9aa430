// The tokenizer facade (see tokenizer.h). SentencePiece is compiled in when the build found it
// (LLMBENCH_HAVE_SENTENCEPIECE, tools/text/CMakeLists.txt).
#include "tools/text/tokenizer.h"

#include <filesystem>

#include "kernels/common/error.h"
#include "tools/text/stream_decoder.h"
#include "tools/text/tokenizer_bpe.h"

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

Tokenizer Tokenizer::bpe(const std::string& json_file, int vocab_size) {
  Tokenizer t(vocab_size);
  t.file_ = json_file;
  t.bpe_ = std::make_unique<BpeTokenizer>(BpeTokenizer::from_file(json_file));
  if (vocab_size > 0 && t.bpe_->id_limit() > std::size_t(vocab_size))
    throw BadInput("'" + json_file + "': ids up to " + std::to_string(t.bpe_->id_limit() - 1) +
                   ", beyond the model's vocabulary of " + std::to_string(vocab_size));
  return t;
}

Tokenizer Tokenizer::sentencepiece(const std::string& model_file, int vocab_size) {
  Tokenizer t(vocab_size);
  t.file_ = model_file;
#ifdef LLMBENCH_HAVE_SENTENCEPIECE
  t.sp_ = std::make_unique<Sp>();
  const auto status = t.sp_->proc.Load(model_file);
  if (!status.ok())
    throw BadInput("'" + model_file + "': not a SentencePiece model (" + status.ToString() + ")");
  const int pieces = t.sp_->proc.GetPieceSize();
  if (vocab_size > 0 && pieces > vocab_size)
    throw BadInput("'" + model_file + "': " + std::to_string(pieces) +
                   " pieces, more than the model's vocabulary of " + std::to_string(vocab_size));
  return t;
#else
  throw BadInput("'" + model_file + "': a SentencePiece model, but this llmbench was built "
                 "without SentencePiece (install libsentencepiece-dev, or run scripts/setup.sh, "
                 "and rebuild)");
#endif
}

Tokenizer Tokenizer::from_file(const std::string& file, int vocab_size) {
  return std::filesystem::path(file).extension() == ".json" ? bpe(file, vocab_size)
                                                            : sentencepiece(file, vocab_size);
}

std::string Tokenizer::file_in(const std::string& dir) {
  std::error_code ec;
  for (const char* name : {"tokenizer.json", "tokenizer.model"}) {
    const std::filesystem::path p = std::filesystem::path(dir) / name;
    if (std::filesystem::is_regular_file(p, ec)) return p.string();
  }
  return "";
}

Tokenizer Tokenizer::open(const std::string& dir_or_file, int vocab_size) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(dir_or_file, ec)) return from_file(dir_or_file, vocab_size);
  if (!std::filesystem::is_directory(dir_or_file, ec))
    throw BadInput("'" + dir_or_file + "' is neither a directory nor a file");
  const std::string file = file_in(dir_or_file);
  if (file.empty())
    throw BadInput("'" + dir_or_file + "' has no tokenizer.json or tokenizer.model");
  return from_file(file, vocab_size);
}

Tokenizer::Kind Tokenizer::kind() const {
  return bpe_ ? Kind::kBpe : sp_ ? Kind::kSentencePiece : Kind::kBytes;
}

std::string Tokenizer::name() const {
  if (bpe_) return "tokenizer.json BPE (" + std::to_string(bpe_->vocab_size()) + " entries) " + file_;
#ifdef LLMBENCH_HAVE_SENTENCEPIECE
  if (sp_)
    return "sentencepiece " + file_ + " (" + std::to_string(sp_->proc.GetPieceSize()) + " pieces)";
#endif
  return "bytes";
}

std::vector<std::int32_t> Tokenizer::encode(std::string_view text) const {
  if (bpe_) return bpe_->encode(text);
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
  if (bpe_) return bpe_->added_id(piece);
#ifdef LLMBENCH_HAVE_SENTENCEPIECE
  if (sp_) {
    const int id = sp_->proc.PieceToId(piece);
    if (id >= 0 && !sp_->proc.IsUnknown(id) && sp_->proc.IdToPiece(id) == piece) return id;
  }
#endif
  (void)piece;
  return std::nullopt;
}

TokenPiece Tokenizer::piece(std::int32_t id) const {
  if (bpe_) {
    const std::string* bytes = bpe_->token_bytes(id);
    if (!bytes) return {id_text(id), false};
    return {*bytes, !bpe_->is_added(id)};
  }
#ifdef LLMBENCH_HAVE_SENTENCEPIECE
  if (sp_) {
    if (id < 0 || id >= sp_->proc.GetPieceSize() || sp_->proc.IsControl(id) ||
        sp_->proc.IsUnknown(id))
      return {id_text(id), false};
    const std::string piece = sp_->proc.IdToPiece(id);
    if (sp_->proc.IsByte(id))  // "<0xNN>"
      return {std::string(1, char(std::stoi(piece.substr(3, 2), nullptr, 16))), true};
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
    return {text, true};
  }
#endif
  if ((id >= 32 && id <= 126) || id == 9 || id == 10 || id == 13 || (id >= 128 && id <= 255))
    return {std::string(1, char(id)), true};
  return {id_text(id), false};
}

std::string Tokenizer::replacement(std::string_view bytes) const {
  if (kind() != Kind::kBytes) return bytes.empty() ? "" : "\xEF\xBF\xBD";
  std::string out;
  for (unsigned char b : bytes) out += id_text(b);
  return out;
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
  StreamDecoder d(*this);
  std::string text;
  for (auto id : ids) text += d.push(id);
  return text + d.finish();
}

}  // namespace llmbench
