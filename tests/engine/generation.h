// Greedy generation for the forward-pass tests (tests/engine, tests/cuda): prefill, then `steps`
// decode steps each fed the tokens of the stage before, keeping every stage's greedy tokens and
// last-position logits. Header-only test helper.
#pragma once
#include <cstdint>
#include <vector>

#include "engine/model/model.h"
#include "engine/model/variants.h"

namespace llmbench::test {

struct Generation {
  std::vector<std::vector<float>> logits;         // [batch, vocab] after prefill, then each step
  std::vector<std::vector<std::int32_t>> tokens;  // [batch] greedy tokens, same stages
};

// `prompts` is [batch, prompt_len] row-major; the Session must hold prompt_len + steps tokens.
inline Generation generate(Session& s, const std::vector<std::int32_t>& prompts, int prompt_len,
                           int steps) {
  Generation g;
  std::vector<std::int32_t> next = s.prefill(prompts, prompt_len);
  g.tokens.push_back(next);
  g.logits.push_back(s.last_logits());
  for (int i = 0; i < steps; ++i) {
    next = s.decode_step(next);
    g.tokens.push_back(next);
    g.logits.push_back(s.last_logits());
  }
  return g;
}

// Every --qkv x --kv-cache x --logits combination (qkv outermost), paged caches in blocks of
// kv_cache_block tokens; the other variants at their defaults.
inline std::vector<Variants> every_variant_combination(int kv_cache_block) {
  std::vector<Variants> out;
  for (QkvLayout q : {QkvLayout::kFused, QkvLayout::kPermute})
    for (KvCacheKind kv : {KvCacheKind::kPrealloc, KvCacheKind::kConcat, KvCacheKind::kPaged,
                           KvCacheKind::kPagedGather})
      for (LogitsMode lg : {LogitsMode::kDevice, LogitsMode::kLast, LogitsMode::kAll}) {
        Variants v;
        v.qkv = q;
        v.kv_cache = kv;
        v.kv_cache_block = kv_cache_block;
        v.logits = lg;
        out.push_back(v);
      }
  return out;
}

}  // namespace llmbench::test
