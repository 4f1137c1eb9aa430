// Response and chunk JSON of both completion APIs (see completion_response.h).
#include "tools/serve/completion_response.h"

namespace llmbench {

using json = nlohmann::json;

namespace {

json finish_json(FinishReason r) {
  return r == FinishReason::kNone ? json(nullptr) : json(std::string(finish_reason_name(r)));
}

json envelope(const ResponseShape& s, bool chunk) {
  const char* object = s.chat ? (chunk ? "chat.completion.chunk" : "chat.completion")
                              : "text_completion";
  return {{"id", s.id}, {"object", object}, {"created", s.created}, {"model", s.model}};
}

}  // namespace

std::string dump_json(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

json usage_json(const ResponseShape& s, int completion_tokens, int cached_tokens) {
  return {{"prompt_tokens", s.prompt_tokens},
          {"completion_tokens", completion_tokens},
          {"total_tokens", s.prompt_tokens + completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", cached_tokens}}}};
}

json whole_response(const ResponseShape& s, const std::vector<std::int32_t>& tokens,
                    const std::string& text, FinishReason finish, int cached_tokens) {
  json choice = {{"index", 0}, {"logprobs", nullptr}, {"finish_reason", finish_json(finish)}};
  if (s.chat) choice["message"] = {{"role", "assistant"}, {"content", text}};
  else choice["text"] = text;
  choice["token_ids"] = tokens;
  json out = envelope(s, false);
  out["choices"] = json::array({choice});
  out["usage"] = usage_json(s, int(tokens.size()), cached_tokens);
  return out;
}

json token_chunk(const ResponseShape& s, std::int32_t token, const std::string& text,
                 FinishReason finish, bool include_usage) {
  json choice = {{"index", 0}};
  if (s.chat) choice["delta"] = {{"content", text}};
  else choice["text"] = text;
  choice["logprobs"] = nullptr;
  choice["finish_reason"] = finish_json(finish);
  choice["token_ids"] = json::array({token});
  json out = envelope(s, true);
  out["choices"] = json::array({choice});
  if (include_usage) out["usage"] = nullptr;
  return out;
}

json role_chunk(const ResponseShape& s, bool include_usage) {
  json out = envelope(s, true);
  out["choices"] = json::array({{{"index", 0},
                                 {"delta", {{"role", "assistant"}}},
                                 {"logprobs", nullptr},
                                 {"finish_reason", nullptr}}});
  if (include_usage) out["usage"] = nullptr;
  return out;
}

json usage_chunk(const ResponseShape& s, int completion_tokens, int cached_tokens) {
  json out = envelope(s, true);
  out["choices"] = json::array();
  out["usage"] = usage_json(s, completion_tokens, cached_tokens);
  return out;
}

}  // namespace llmbench
