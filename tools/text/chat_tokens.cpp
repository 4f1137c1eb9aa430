// Tokenizing a rendered chat with its special tokens (see chat_tokens.h).
#include "tools/text/chat_tokens.h"

#include <string_view>
#include <utility>

namespace llmbench {

std::vector<std::int32_t> tokenize_chat(const std::string& rendered, ChatFamily family,
                                        const Tokenizer& tok) {
  std::vector<std::pair<std::string, std::int32_t>> specials;
  for (const std::string& s : chat_special_tokens(family))
    if (auto id = tok.special_id(s)) specials.emplace_back(s, *id);
  std::vector<std::int32_t> ids;
  // Where each special occurs next at or after `at`, searched again only once `at` has passed
  // it: a text of 80,000 "<s>" would otherwise search the whole rest for every other special
  // at every one of them (quadratic; 21 s for 240 KB).
  std::vector<std::size_t> next(specials.size(), 0);
  for (std::size_t i = 0; i < specials.size(); ++i) next[i] = rendered.find(specials[i].first);
  std::size_t at = 0;
  while (at < rendered.size()) {
    // The nearest special token from `at`.
    std::size_t best = std::string::npos;
    const std::pair<std::string, std::int32_t>* which = nullptr;
    for (std::size_t i = 0; i < specials.size(); ++i) {
      if (next[i] != std::string::npos && next[i] < at)
        next[i] = rendered.find(specials[i].first, at);
      if (next[i] < best) best = next[i], which = &specials[i];
    }
    const std::size_t end = which ? best : rendered.size();
    if (end > at) {
      const auto text = tok.encode(std::string_view(rendered).substr(at, end - at));
      ids.insert(ids.end(), text.begin(), text.end());
    }
    if (!which) break;
    ids.push_back(which->second);
    at = end + which->first.size();
  }
  return ids;
}

}  // namespace llmbench
