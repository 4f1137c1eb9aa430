// Stop strings over growing text (see stop_strings.h).
#include "tools/serve/stop_strings.h"

#include <algorithm>

namespace llmbench {

StopStrings::StopStrings(std::vector<std::string> stops, bool include_stop_str)
    : include_(include_stop_str) {
  for (std::string& s : stops)
    if (!s.empty()) stops_.push_back(std::move(s));  // an empty stop string matches nothing
  for (const std::string& s : stops_) hold_ = std::max(hold_, s.size() - 1);
}

std::string StopStrings::feed(std::string_view text) {
  if (stopped_) return "";
  pending_.append(text);
  // The earliest match in what is pending (earlier text was sent only when no stop string
  // could start in it); at one position the longest stop string wins.
  std::size_t best = std::string::npos;
  const std::string* which = nullptr;
  for (const std::string& s : stops_) {
    const std::size_t at = pending_.find(s);
    if (at == std::string::npos) continue;
    if (at < best || (at == best && s.size() > which->size())) best = at, which = &s;
  }
  if (which) {
    stopped_ = true;
    matched_ = *which;
    std::string out = pending_.substr(0, best + (include_ ? which->size() : 0));
    pending_.clear();
    return out;
  }
  if (pending_.size() <= hold_) return "";
  // Send all but the last hold_ bytes, moved back to the start of a UTF-8 character.
  std::size_t cut = pending_.size() - hold_;
  while (cut > 0 && (static_cast<unsigned char>(pending_[cut]) & 0xC0) == 0x80) --cut;
  std::string out = pending_.substr(0, cut);
  pending_.erase(0, cut);
  return out;
}

std::string StopStrings::flush() {
  std::string out;
  out.swap(pending_);
  return stopped_ ? "" : out;
}

}  // namespace llmbench
