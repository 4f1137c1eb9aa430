// Synthetic prompts (see prompts.h).
#include "engine/bench/prompts.h"

#include "engine/model/rng.h"

namespace llmbench {

std::vector<std::int32_t> synthetic_prompts(std::uint64_t seed, int batch, int prompt_len,
                                            int vocab, bool distinct) {
  const std::uint64_t key = stream_key(seed, fnv1a64("prompt"));
  std::vector<std::int32_t> ids(std::size_t(batch) * prompt_len);
  for (int s = 0; s < batch; ++s) {
    const std::uint64_t seq = distinct ? std::uint64_t(s) : 0;
    for (int t = 0; t < prompt_len; ++t)
      ids[std::size_t(s) * prompt_len + t] =
          std::int32_t(stream_u64(key, (seq << 32) + std::uint64_t(t)) % std::uint64_t(vocab));
  }
  return ids;
}

}  // namespace llmbench
