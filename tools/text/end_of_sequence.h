// The token ids that end a generation for a checkpoint directory, gathered as vLLM gathers
// them: the tokenizer's eos token (tokenizer_config.json `eos_token`, a string or an object
// with `content`, looked up as one token of the tokenizer), and every id of
// generation_config.json's `eos_token_id` (one id or a list: Llama 3 Instruct lists
// <|end_of_text|>, <|eom_id|> and <|eot_id|>), else config.json's. A directory with a
// SentencePiece tokenizer and none of these ends at its "</s>". `ignore_eos` ignores them all.
// Not here: where they are applied (engine/serving/scheduler.h), stop strings (stop_strings.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tools/text/tokenizer.h"

namespace llmbench {

// The ids, ascending and without repeats; none for a path that is not a directory (a preset)
// or a directory that names none. BadInput naming the file for a file that is not valid JSON,
// an eos_token_id that is not an id or a list of ids, or an id outside [0, vocab_size).
std::vector<std::int32_t> end_of_sequence_ids(const std::string& dir, const Tokenizer& tokenizer,
                                              int vocab_size);

}  // namespace llmbench
