// Parsing POST /v1/chat/completions bodies (see chat_request.h).
#include "tools/serve/chat_request.h"

#include "tools/serve/sampling_params.h"
#include "tools/text/chat_tokens.h"

#include <nlohmann/json.hpp>

namespace llmbench {

using json = nlohmann::json;

namespace {

std::string message_content(const json& m, std::size_t i) {
  const std::string where = "messages[" + std::to_string(i) + "].content";
  auto c = m.find("content");
  if (c == m.end() || c->is_null()) return "";  // an assistant turn may have no content
  if (c->is_string()) return c->get<std::string>();
  if (!c->is_array()) throw bad_request("messages", "'" + where + "' must be a string or an "
                                                    "array of text parts");
  std::string text;
  for (const json& part : *c) {
    if (!part.is_object() || part.value("type", "") != "text" || !part.contains("text") ||
        !part["text"].is_string())
      throw bad_request("messages", "'" + where + "': only parts {\"type\": \"text\", \"text\": "
                                    "...} are supported (this server reads text only)");
    text += part["text"].get<std::string>();
  }
  return text;
}

std::vector<TemplateMessage> parse_messages(const json& body) {
  auto it = body.find("messages");
  if (it == body.end() || it->is_null()) throw bad_request("messages", "'messages' is required");
  if (!it->is_array() || it->empty())
    throw bad_request("messages", "'messages' must be a non-empty array of messages");
  std::vector<TemplateMessage> out;
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& m = (*it)[i];
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string())
      throw bad_request("messages", "'messages[" + std::to_string(i) +
                                        "]' must be an object with a string 'role'");
    std::string role = m["role"].get<std::string>();
    if (role == "developer") role = "system";  // OpenAI's newer name for the system role
    if (role != "system" && role != "user" && role != "assistant")
      throw bad_request("messages", "'messages[" + std::to_string(i) + "].role' = '" + role +
                                        "' is not supported (system, user, assistant)");
    out.push_back(TemplateMessage{role, message_content(m, i)});
  }
  return out;
}

}  // namespace

CompletionRequest parse_chat_request(const std::string& body_text, const ChatTemplate* tmpl,
                                     const Tokenizer& tok, std::size_t max_values) {
  const json body = parse_body_object(body_text, max_values);
  const std::vector<TemplateMessage> messages = parse_messages(body);
  CompletionRequest r;
  parse_common_fields(body, r);
  parse_sampling_fields(body, /*chat=*/true, r);
  if (!tmpl)
    throw bad_request("messages", "this server has no chat template (the checkpoint's "
                                  "tokenizer_config.json has none); start it with "
                                  "--chat-template NAME (" + chat_template_names() + ")");
  std::string rendered;
  try {
    rendered = render_chat(*tmpl, messages);
  } catch (const ChatRenderError& e) {
    throw bad_request("messages", e.what());
  }
  r.prompt = tokenize_chat(rendered, tmpl->family, tok);
  if (r.prompt.empty()) throw bad_request("messages", "the rendered conversation is empty");
  return r;
}

}  // namespace llmbench
