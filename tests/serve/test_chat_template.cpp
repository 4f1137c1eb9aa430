// Chat templates against each family's reference rendering (the strings its Hugging Face
// chat_template produces with add_generation_prompt = true, written out by hand from the
// families' documented formats), their recognition from checkpoints' Jinja text, and the
// chat request parser.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "kernels/common/error.h"
#include "tools/serve/chat_request.h"
#include "tools/text/chat_template.h"

namespace llmbench {
namespace {

const std::vector<TemplateMessage> kConversation = {
    {"system", "You are terse."},
    {"user", "Hi there"},
    {"assistant", "Hello."},
    {"user", " Count to 3. "},
};

std::string render(const char* name, const std::vector<TemplateMessage>& m = kConversation) {
  return render_chat(*chat_template_by_name(name), m);
}

TEST(ChatTemplate, Llama2MatchesItsReference) {
  EXPECT_EQ(render("llama2"),
            "<s>[INST] <<SYS>>\nYou are terse.\n<</SYS>>\n\nHi there [/INST] Hello. </s>"
            "<s>[INST] Count to 3. [/INST]");
  EXPECT_EQ(render("llama2", {{"user", "Hi"}}), "<s>[INST] Hi [/INST]");
  EXPECT_THROW(render("llama2", {{"user", "a"}, {"user", "b"}}), ChatRenderError);
  EXPECT_THROW(render("llama2", {{"assistant", "a"}}), ChatRenderError);
}

TEST(ChatTemplate, Llama3MatchesItsReference) {
  EXPECT_EQ(render("llama3"),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou are terse."
            "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi there<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\nHello.<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nCount to 3.<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(ChatTemplate, ChatmlAndQwen2MatchTheirReferences) {
  EXPECT_EQ(render("chatml"),
            "<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nHi there<|im_end|>\n"
            "<|im_start|>assistant\nHello.<|im_end|>\n<|im_start|>user\n Count to 3. <|im_end|>\n"
            "<|im_start|>assistant\n");
  // Qwen2 adds its default system message when none is sent, and only then.
  EXPECT_EQ(render("qwen2", {{"user", "Hi"}}),
            "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(render("qwen2", {{"system", "S"}, {"user", "Hi"}}),
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
            "<|im_start|>assistant\n");
  EXPECT_EQ(render("chatml", {{"user", "Hi"}}),
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
}

TEST(ChatTemplate, MistralMatchesItsReference) {
  EXPECT_EQ(render("mistral", {{"user", "Hi there"}, {"assistant", "Hello."}, {"user", "Again"}}),
            "<s>[INST] Hi there [/INST]Hello.</s>[INST] Again [/INST]");
  EXPECT_THROW(render("mistral"), ChatRenderError);  // no system role
}

TEST(ChatTemplate, ZephyrMatchesItsReference) {
  EXPECT_EQ(render("zephyr", {{"system", "S"}, {"user", "Hi"}}),
            "<|system|>\nS</s>\n<|user|>\nHi</s>\n<|assistant|>\n");
}

TEST(ChatTemplate, RecognisesCheckpointTemplatesByFamily) {
  // Excerpts of the families' real Jinja templates.
  const std::string llama3 =
      "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = "
      "'<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'+ message['content'] "
      "| trim + '<|eot_id|>' %}{{ content }}{% endfor %}";
  const std::string qwen2 =
      "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
      "{{ '<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n' }}{% endif %}"
      "{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + "
      "'\\n'}}{% endfor %}";
  const std::string llama2 =
      "{% if loop.index0 == 0 and system_message != false %}{% set content = '<<SYS>>\\n' + "
      "system_message + '\\n<</SYS>>\\n\\n' + message['content'] %}{% endif %}{{ bos_token + "
      "'[INST] ' + content.strip() + ' [/INST]' }}";
  const std::string mistral = "{{ bos_token }}{% for message in messages %}{{ '[INST] ' + "
                              "message['content'] + ' [/INST]' }}{% endfor %}";
  EXPECT_EQ(recognise_chat_template(llama3)->name, "llama3");
  const auto q = recognise_chat_template(qwen2);
  EXPECT_EQ(q->name, "qwen2");
  EXPECT_EQ(q->default_system, "You are a helpful assistant.");
  EXPECT_EQ(recognise_chat_template(llama2)->name, "llama2");
  EXPECT_EQ(recognise_chat_template(mistral)->name, "mistral");
  EXPECT_FALSE(recognise_chat_template("{{ messages | tojson }}"));
}

TEST(ChatTemplate, CheckpointTemplateIsReadOrRefused) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("llmbench_chat_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  EXPECT_FALSE(checkpoint_chat_template(dir.string()));  // no tokenizer_config.json
  auto write = [&](const nlohmann::json& j) {
    std::ofstream(dir / "tokenizer_config.json") << j.dump();
  };
  write({{"chat_template", "<|im_start|>{{ m }}<|im_end|>"}});
  EXPECT_EQ(checkpoint_chat_template(dir.string())->name, "chatml");
  write({{"chat_template", nlohmann::json::array(
                               {{{"name", "default"}, {"template", "[INST] x [/INST]"}}})}});
  EXPECT_EQ(checkpoint_chat_template(dir.string())->name, "mistral");
  write({{"chat_template", "{{ messages | tojson }}"}});
  try {
    checkpoint_chat_template(dir.string());
    ADD_FAILURE() << "an unknown template was accepted";
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("--chat-template"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

TEST(ChatRequest, ParsesMessagesAndRefusesWhatItCannotRender) {
  Tokenizer t(256);
  const ChatTemplate chatml = *chat_template_by_name("chatml");
  const CompletionRequest r = parse_chat_request(
      R"({"messages": [{"role": "user", "content": [{"type": "text", "text": "H"},
          {"type": "text", "text": "i"}]}], "max_completion_tokens": 5, "stream": true})",
      &chatml, t);
  const std::string want = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n";
  EXPECT_EQ(r.prompt, t.encode(want));  // the byte mapping has no special ids
  EXPECT_EQ(r.max_tokens, 5);
  EXPECT_TRUE(r.stream);
  auto refused = [&](const std::string& body, const ChatTemplate* tmpl) {
    try {
      parse_chat_request(body, tmpl, t);
    } catch (const ApiError& e) {
      EXPECT_EQ(e.status, 400);
      return e.param;
    }
    return std::string("accepted");
  };
  EXPECT_EQ(refused(R"({"messages": []})", &chatml), "messages");
  EXPECT_EQ(refused(R"({"messages": [{"role": "tool", "content": "x"}]})", &chatml), "messages");
  EXPECT_EQ(refused(R"({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]})",
                    &chatml),
            "messages");
  EXPECT_EQ(refused(R"({"messages": [{"role": "user", "content": "x"}], "temperature": -1})",
                    &chatml),
            "temperature");
  const ChatTemplate mistral = *chat_template_by_name("mistral");
  EXPECT_EQ(refused(R"({"messages": [{"role": "system", "content": "x"}]})", &mistral),
            "messages");
  EXPECT_EQ(refused(R"({"messages": [{"role": "user", "content": "x"}]})", nullptr), "messages");
}

}  // namespace
}  // namespace llmbench
