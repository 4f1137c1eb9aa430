// The streaming decoder (see stream_decoder.h).
#include "tools/text/stream_decoder.h"

#include <string_view>

#include "tools/text/utf8.h"

namespace llmbench {

std::string StreamDecoder::push(std::int32_t id) {
  TokenPiece p = tok_.piece(id);
  if (!p.joins) {
    std::string out = tok_.replacement(held_) + p.bytes;
    held_.clear();
    return out;
  }
  held_ += p.bytes;
  std::string out;
  std::size_t i = 0;
  while (i < held_.size()) {
    std::size_t len = 0;
    const Utf8Head head = utf8_head(std::string_view(held_).substr(i), len);
    if (head == Utf8Head::kIncomplete) break;
    if (head == Utf8Head::kComplete) out.append(held_, i, len);
    else out += tok_.replacement(std::string_view(held_).substr(i, 1));
    i += len;
  }
  held_.erase(0, i);
  return out;
}

std::string StreamDecoder::finish() {
  std::string out = tok_.replacement(held_);
  held_.clear();
  return out;
}

}  // namespace llmbench
