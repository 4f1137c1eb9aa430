// Pairs the cases of two runs by configuration for `llmbench compare`. The key is (model,
// dtype, backend, batch, prompt_len, max_new_tokens, variants (normalised JSON), threads); the
// `trace` level, seeds and repetition counts are not part of it. Cases with the same key in one
// run are paired in order (the first base case with the first candidate case, ...); the rest
// are unmatched. Nothing is dropped: every case ends up in exactly one list.
//
// Threads: when every case on each side ran with one thread count and the two counts differ
// (`--threads 2` against `--threads 1`), threads is an environment difference of the whole run,
// not a configuration to match: it leaves the key (Matching::threads_ignored) and the caller
// warns. Within a side that sweeps threads, it stays part of the key.
#pragma once
#include <vector>

#include "tools/store/run_reader.h"

namespace llmbench {

struct CasePair {
  const CaseSamples* base;
  const CaseSamples* cand;
};

struct Matching {
  std::vector<CasePair> pairs;                  // in base order; either side may have failed
  std::vector<const CaseSamples*> base_only;    // in base order
  std::vector<const CaseSamples*> cand_only;    // in candidate order
  bool threads_ignored = false;
};

Matching match_cases(const std::vector<CaseSamples>& base, const std::vector<CaseSamples>& cand);

}  // namespace llmbench
