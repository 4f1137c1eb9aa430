// The sampling fields of a completion or chat body, read as vLLM's OpenAI server reads them:
//   temperature (>= 0; 0 greedy, the default), top_p (0, 1], top_k (-1 or 0: all), min_p [0, 1],
//   seed (an integer: the same seed gives the same tokens), stop (a string or a list of up to
//   kMaxStopStrings strings), stop_token_ids, include_stop_str_in_output,
//   completions: logprobs (an integer 0..20: the token's and the top N), echo (the prompt text
//   before the completion; with logprobs refused, as this server computes no prompt logprobs);
//   chat: logprobs (a bool) and top_logprobs (0..20, with logprobs only).
// Refused with a 400 naming the field: what would change the answer and is not implemented
// (n > 1, best_of > 1, penalties other than neutral, logit_bias, min_tokens, suffix,
// prompt_logprobs, response_format other than text, tools and tool_choice, guided decoding;
// chat: add_generation_prompt false, continue_final_message, chat_template,
// chat_template_kwargs, echo). Absent, null or neutral values of those are accepted.
// Not here: the body's other fields (completion_request.h) or sampling itself (engine/serving).
#pragma once
#include <nlohmann/json_fwd.hpp>

#include "tools/serve/completion_request.h"

namespace llmbench {

inline constexpr int kMaxStopStrings = 64;
inline constexpr std::size_t kMaxStopStringBytes = 1024;

// Reads the sampling fields of `body` into r.sampling, r.stop, r.stop_token_ids,
// r.include_stop_str, r.echo; throws ApiError (400) naming the field.
void parse_sampling_fields(const nlohmann::json& body, bool chat, CompletionRequest& r);

}  // namespace llmbench
