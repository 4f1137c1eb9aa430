// Case matching by configuration (see compare_match.h).
#include "tools/compare/compare_match.h"

#include <deque>
#include <map>
#include <set>
#include <tuple>

namespace llmbench {

namespace {

using Key = std::tuple<std::string, std::string, std::string, int, int, int, std::string, int>;

Key key_of(const CaseSamples& c, bool with_threads) {
  return {c.model, c.dtype, c.backend, c.batch, c.prompt_len, c.max_new_tokens, c.variants,
          with_threads ? c.threads : 0};
}

std::set<int> thread_counts(const std::vector<CaseSamples>& cases) {
  std::set<int> t;
  for (const auto& c : cases) t.insert(c.threads);
  return t;
}

}  // namespace

Matching match_cases(const std::vector<CaseSamples>& base, const std::vector<CaseSamples>& cand) {
  Matching m;
  const auto tb = thread_counts(base), tc = thread_counts(cand);
  m.threads_ignored = tb.size() == 1 && tc.size() == 1 && *tb.begin() != *tc.begin();
  const bool with_threads = !m.threads_ignored;

  // Candidate cases per key, in order; each base case takes the first one left.
  std::map<Key, std::deque<const CaseSamples*>> waiting;
  for (const auto& c : cand) waiting[key_of(c, with_threads)].push_back(&c);
  std::set<const CaseSamples*> taken;
  for (const auto& b : base) {
    auto it = waiting.find(key_of(b, with_threads));
    if (it == waiting.end() || it->second.empty()) {
      m.base_only.push_back(&b);
      continue;
    }
    m.pairs.push_back({&b, it->second.front()});
    taken.insert(it->second.front());
    it->second.pop_front();
  }
  for (const auto& c : cand)
    if (!taken.count(&c)) m.cand_only.push_back(&c);
  return m;
}

}  // namespace llmbench
