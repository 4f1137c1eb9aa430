// Chat template families: recognition and rendering (see chat_template.h). Each renderer
// follows its family's reference Jinja template (Hugging Face tokenizer_config.json of
// Llama-2-chat, Llama-3-Instruct, Qwen2-Instruct, Mistral-7B-Instruct-v0.2, TinyLlama-Chat-v1.0).
#include "tools/text/chat_template.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "kernels/common/error.h"
#include "tools/text/json_file.h"

namespace llmbench {

namespace {

// Jinja's `| trim` and Python's str.strip(): whitespace off both ends.
std::string strip(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\n\r\f\v");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\n\r\f\v") - b + 1);
}

const TemplateMessage* leading_system(const std::vector<TemplateMessage>& m) {
  return !m.empty() && m[0].role == "system" ? &m[0] : nullptr;
}

// user, assistant, user, ... after an optional leading system message (llama2, mistral).
void require_alternation(const std::vector<TemplateMessage>& m, std::size_t from, const char* family) {
  for (std::size_t i = from; i < m.size(); ++i) {
    const char* want = (i - from) % 2 == 0 ? "user" : "assistant";
    if (m[i].role != want)
      throw ChatRenderError(std::string("the ") + family + " chat template needs " +
                            (from ? "an optional first system message, then " : "") +
                            "roles alternating user/assistant/user/...; message " +
                            std::to_string(i) + " is '" + m[i].role + "'");
  }
}

std::string render_llama2(const std::vector<TemplateMessage>& m) {
  const TemplateMessage* sys = leading_system(m);
  const std::size_t from = sys ? 1 : 0;
  require_alternation(m, from, "llama2");
  std::string out;
  for (std::size_t i = from; i < m.size(); ++i) {
    std::string content = m[i].content;
    if (i == from && sys) content = "<<SYS>>\n" + sys->content + "\n<</SYS>>\n\n" + content;
    if (m[i].role == "user") out += "<s>[INST] " + strip(content) + " [/INST]";
    else out += " " + strip(content) + " </s>";
  }
  return out;
}

std::string render_llama3(const std::vector<TemplateMessage>& m) {
  std::string out = "<|begin_of_text|>";
  for (const TemplateMessage& msg : m)
    out += "<|start_header_id|>" + msg.role + "<|end_header_id|>\n\n" + strip(msg.content) +
           "<|eot_id|>";
  return out + "<|start_header_id|>assistant<|end_header_id|>\n\n";
}

std::string render_chatml(const std::vector<TemplateMessage>& m, const std::string& default_system) {
  std::string out;
  if (!leading_system(m) && !default_system.empty())
    out += "<|im_start|>system\n" + default_system + "<|im_end|>\n";
  for (const TemplateMessage& msg : m) out += "<|im_start|>" + msg.role + "\n" + msg.content + "<|im_end|>\n";
  return out + "<|im_start|>assistant\n";
}

std::string render_mistral(const std::vector<TemplateMessage>& m) {
  if (leading_system(m))
    throw ChatRenderError("the mistral chat template has no system role (Mistral-7B-Instruct "
                          "refuses one); put the instructions in the first user message");
  require_alternation(m, 0, "mistral");
  std::string out = "<s>";
  for (const TemplateMessage& msg : m)
    out += msg.role == "user" ? "[INST] " + msg.content + " [/INST]" : msg.content + "</s>";
  return out;
}

std::string render_zephyr(const std::vector<TemplateMessage>& m) {
  std::string out;
  for (const TemplateMessage& msg : m) out += "<|" + msg.role + "|>\n" + msg.content + "</s>\n";
  return out + "<|assistant|>\n";
}

// A chatml template's literal default system message ("<|im_start|>system\nYou are ...
// <|im_end|>" inside a Jinja string, where the newline is written \n), or "".
std::string default_system_of(const std::string& jinja) {
  const std::string open = "<|im_start|>system\\n";
  for (std::size_t at = jinja.find(open); at != std::string::npos; at = jinja.find(open, at + 1)) {
    const std::size_t start = at + open.size();
    const std::size_t end = jinja.find("<|im_end|>", start);
    if (end == std::string::npos) break;
    const std::string text = jinja.substr(start, end - start);
    if (!text.empty() && text.find_first_of("{}'\"") == std::string::npos) return text;
  }
  return "";
}

}  // namespace

std::string chat_template_names() { return "llama2, llama3, chatml, qwen2, mistral, zephyr"; }

std::optional<ChatTemplate> chat_template_by_name(std::string_view name) {
  if (name == "llama2") return ChatTemplate{ChatFamily::kLlama2, "", "llama2"};
  if (name == "llama3") return ChatTemplate{ChatFamily::kLlama3, "", "llama3"};
  if (name == "chatml") return ChatTemplate{ChatFamily::kChatml, "", "chatml"};
  if (name == "qwen2")
    return ChatTemplate{ChatFamily::kChatml, "You are a helpful assistant.", "qwen2"};
  if (name == "mistral") return ChatTemplate{ChatFamily::kMistral, "", "mistral"};
  if (name == "zephyr") return ChatTemplate{ChatFamily::kZephyr, "", "zephyr"};
  return std::nullopt;
}

std::optional<ChatTemplate> recognise_chat_template(const std::string& jinja) {
  const auto has = [&](const char* marker) { return jinja.find(marker) != std::string::npos; };
  if (has("<|start_header_id|>") && has("<|eot_id|>")) return chat_template_by_name("llama3");
  if (has("<|im_start|>") && has("<|im_end|>")) {
    ChatTemplate t = *chat_template_by_name("chatml");
    t.default_system = default_system_of(jinja);
    if (!t.default_system.empty()) t.name = "qwen2";
    return t;
  }
  if (has("[INST]") && has("<<SYS>>")) return chat_template_by_name("llama2");
  if (has("[INST]") && has("[/INST]")) return chat_template_by_name("mistral");
  if (has("<|user|>") && has("<|assistant|>")) return chat_template_by_name("zephyr");
  return std::nullopt;
}

std::optional<ChatTemplate> checkpoint_chat_template(const std::string& dir) {
  const std::filesystem::path file = std::filesystem::path(dir) / "tokenizer_config.json";
  const auto read = read_json_object(file);
  if (!read) return std::nullopt;
  const nlohmann::json& config = *read;
  auto it = config.find("chat_template");
  if (it == config.end() || it->is_null()) return std::nullopt;
  std::string jinja;
  if (it->is_string()) jinja = it->get<std::string>();
  // The newer form: a list of named templates; the one named "default" is the chat template.
  if (it->is_array())
    for (const auto& t : *it)
      if (t.is_object() && t.value("name", "") == "default") jinja = t.value("template", "");
  if (jinja.empty()) return std::nullopt;
  auto t = recognise_chat_template(jinja);
  if (!t)
    throw BadInput("'" + file.string() + "': its chat_template is not one of the families "
                   "llmbench renders (" + chat_template_names() +
                   "); pass --chat-template NAME to choose one");
  return t;
}

ChatTemplate preset_chat_template(std::string_view preset) {
  if (preset == "llama2-7b") return *chat_template_by_name("llama2");
  if (preset == "llama3-8b") return *chat_template_by_name("llama3");
  if (preset == "qwen2.5-0.5b") {
    ChatTemplate t = *chat_template_by_name("qwen2");
    t.default_system = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.";
    return t;
  }
  if (preset == "mistral-7b") return *chat_template_by_name("mistral");
  if (preset == "tinyllama-1.1b") return *chat_template_by_name("zephyr");
  return *chat_template_by_name("chatml");
}

std::string render_chat(const ChatTemplate& t, const std::vector<TemplateMessage>& messages) {
  switch (t.family) {
    case ChatFamily::kLlama2: return render_llama2(messages);
    case ChatFamily::kLlama3: return render_llama3(messages);
    case ChatFamily::kChatml: return render_chatml(messages, t.default_system);
    case ChatFamily::kMistral: return render_mistral(messages);
    case ChatFamily::kZephyr: return render_zephyr(messages);
  }
  return {};
}

std::vector<std::string> chat_special_tokens(ChatFamily family) {
  switch (family) {
    case ChatFamily::kLlama2:
    case ChatFamily::kMistral: return {"<s>", "</s>"};
    case ChatFamily::kLlama3:
      return {"<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"};
    case ChatFamily::kChatml: return {"<|im_start|>", "<|im_end|>"};
    case ChatFamily::kZephyr: return {"</s>"};
  }
  return {};
}

}  // namespace llmbench
