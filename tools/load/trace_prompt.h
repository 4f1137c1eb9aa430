// Trace replay's prompts (--dataset-name mooncake): a prompt of `input_length` token ids built
// from the request's hash_ids, block by block. Block k of the prompt is the block_size ids
// drawn from (seed, hash_ids[k]) alone, so two requests whose hash_ids agree on their first m
// entries share exactly their first m blocks, as the cached prefixes of the traced service did;
// the prompt is cut to input_length (a last, partial block is that block's prefix), and a
// prompt longer than its blocks goes on with ids drawn from (seed, the request's index), shared
// with nobody. Ids lie in [16, 255], valid for any vocabulary of 256 ids or more (as the random
// workload's). Pure.
#pragma once
#include <cstdint>
#include <vector>

namespace llmbench {

std::vector<std::int32_t> trace_prompt_ids(const std::vector<std::int64_t>& hash_ids,
                                           int input_length, int block_size,
                                           std::size_t request_index, std::uint64_t seed);

}  // namespace llmbench
