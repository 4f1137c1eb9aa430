// Synthetic prompt token ids: seeded, reproducible, uniform over the vocabulary.
#pragma once
#include <cstdint>
#include <vector>

namespace llmbench {

// [batch, prompt_len] row-major. Token t of sequence s is
//   stream_u64(stream_key(seed, fnv1a64("prompt")), s' * 2^32 + t) % vocab,
// with s' = s when `distinct`, else 0 (every sequence gets the same prompt: the common
// `[prompt] * batch` benchmark; the engine shares no work between sequences).
std::vector<std::int32_t> synthetic_prompts(std::uint64_t seed, int batch, int prompt_len,
                                            int vocab, bool distinct);

}  // namespace llmbench
