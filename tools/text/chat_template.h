// Chat templates of `llmbench serve`: the families of prompt formats that checkpoints' own
// `chat_template` (tokenizer_config.json, Jinja) belong to, rendered here in C++ as the
// families document them (docs/serving.md, "Chat templates"). llmbench does not run Jinja: a
// checkpoint's template is recognised by the markers its family writes, and one it does not
// recognise is refused at start-up (--chat-template NAME overrides), never guessed.
//   llama2   <s>[INST] <<SYS>>\n{system}\n<</SYS>>\n\n{user} [/INST] {assistant} </s>
//   llama3   <|begin_of_text|><|start_header_id|>{role}<|end_header_id|>\n\n{content}<|eot_id|>
//   chatml   <|im_start|>{role}\n{content}<|im_end|>\n  (qwen2: chatml with a default system)
//   mistral  <s>[INST] {user} [/INST]{assistant}</s>
//   zephyr   <|{role}|>\n{content}</s>\n  (TinyLlama-Chat)
// Each rendering ends with the family's generation prompt (add_generation_prompt = true).
// Not here: tokenizing the rendered text (chat_tokens.h) or parsing requests (tools/serve).
#pragma once
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench {

enum class ChatFamily { kLlama2, kLlama3, kChatml, kMistral, kZephyr };

struct ChatTemplate {
  ChatFamily family = ChatFamily::kChatml;
  std::string default_system;  // chatml only: the system message used when none is sent
  std::string name;            // "llama2", "llama3", "chatml", "qwen2", "mistral", "zephyr"
};

struct TemplateMessage {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
};

// The names --chat-template accepts, for messages: "llama2, llama3, chatml, qwen2, mistral, zephyr".
std::string chat_template_names();
// A template by name; nullopt when the name is not one of chat_template_names().
std::optional<ChatTemplate> chat_template_by_name(std::string_view name);
// The family of a Jinja chat template, recognised by its markers; nullopt when none matches.
std::optional<ChatTemplate> recognise_chat_template(const std::string& jinja);
// The template of a checkpoint directory's tokenizer_config.json: nullopt when it has none;
// BadInput naming the file when its template is not a family rendered here.
std::optional<ChatTemplate> checkpoint_chat_template(const std::string& dir);
// The documented default of a preset (chatml for the random-weight presets tiny and small).
ChatTemplate preset_chat_template(std::string_view preset);

// A conversation the family cannot express (a system message for mistral, roles that do not
// alternate where the family requires it): the message says which, for a 400.
struct ChatRenderError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// The prompt text of `messages`, ending with the generation prompt.
std::string render_chat(const ChatTemplate& t, const std::vector<TemplateMessage>& messages);
// The special tokens the family writes as text ("<s>", "<|im_start|>", ...), to be looked up
// as single ids where the tokenizer has them.
std::vector<std::string> chat_special_tokens(ChatFamily family);

}  // namespace llmbench
