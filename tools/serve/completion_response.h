// The JSON a completion is answered with, for both APIs: /v1/completions (object
// "text_completion", choices[].text) and /v1/chat/completions ("chat.completion", choices[].
// message; streamed "chat.completion.chunk" with choices[].delta, the role first). Every choice
// carries the extension `token_ids` (the generated ids). docs/serving.md shows each shape.
// Not here: when chunks are sent (server_answer.cpp).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/serving/scheduler.h"

namespace llmbench {

struct ResponseShape {
  bool chat = false;
  std::string id;  // "cmpl-N" or "chatcmpl-N"
  std::int64_t created = 0;
  std::string model;
  int prompt_tokens = 0;
};

// {"prompt_tokens", "completion_tokens", "total_tokens", "prompt_tokens_details":
// {"cached_tokens"}} (the prompt tokens the prefix cache supplied, as OpenAI reports them).
nlohmann::json usage_json(const ResponseShape& s, int completion_tokens, int cached_tokens);
// The whole (non-streamed) response.
nlohmann::json whole_response(const ResponseShape& s, const std::vector<std::int32_t>& tokens,
                              const std::string& text, FinishReason finish, int cached_tokens);
// A streamed chunk for one token (its finish reason when it is the last).
nlohmann::json token_chunk(const ResponseShape& s, std::int32_t token, const std::string& text,
                           FinishReason finish, bool include_usage);
// Chat only: the first chunk, {"delta": {"role": "assistant"}}.
nlohmann::json role_chunk(const ResponseShape& s, bool include_usage);
// The last chunk of stream_options.include_usage: no choices, the usage.
nlohmann::json usage_chunk(const ResponseShape& s, int completion_tokens, int cached_tokens);

// JSON text (invalid UTF-8 replaced, never thrown on).
std::string dump_json(const nlohmann::json& j);

}  // namespace llmbench
