// The byte-level tokenizer (see tokenizer.h).
#include "tools/serve/tokenizer.h"

namespace llmbench {

std::vector<std::int32_t> ByteTokenizer::encode(std::string_view text) const {
  std::vector<std::int32_t> ids;
  ids.reserve(text.size());
  for (unsigned char b : text) ids.push_back(std::int32_t(b % unsigned(vocab_size_)));
  return ids;
}

std::string ByteTokenizer::decode(std::int32_t id) const {
  if ((id >= 32 && id <= 126) || id == 9 || id == 10 || id == 13) return std::string(1, char(id));
  std::string text(1, '<');  // (appends: GCC 12 warns falsely on "<" + std::to_string(id))
  text += std::to_string(id);
  text += '>';
  return text;
}

std::string ByteTokenizer::decode(const std::vector<std::int32_t>& ids) const {
  std::string text;
  for (auto id : ids) text += decode(id);
  return text;
}

}  // namespace llmbench
