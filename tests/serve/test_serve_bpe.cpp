// A server whose text goes through a tokenizer.json (the small BPE of tests/text/small_bpe.h,
// written by the test), in process on an ephemeral loopback port:
//   - a text prompt runs the BPE ids: usage.prompt_tokens is the count load's --tokenizer gives
//     for the same text (Tokenizer::open on the directory, as `llmbench load` opens it), and
//     the tokens equal the offline path's for those ids;
//   - a chatml conversation's special tokens are single ids (<|im_start|>, <|im_end|>), not
//     their text split into pieces;
//   - streamed, every chunk is valid UTF-8 and the chunks join into the non-streamed text.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "tests/serve/serve_fixture.h"
#include "tests/text/small_bpe.h"
#include "tools/text/chat_template.h"
#include "tools/text/utf8.h"

namespace llmbench::test {
namespace {

namespace fs = std::filesystem;
using Ids = std::vector<std::int32_t>;

const std::string& bpe_dir() {
  static const std::string dir = [] {
    const fs::path d = fs::path(LLMBENCH_TEST_SCRATCH) / ("serve_bpe_" + std::to_string(::getpid()));
    llmbench_test::write_small_bpe(d);
    return d.string();
  }();
  return dir;
}

ServeOptions bpe_options() {
  ServeOptions opt;
  opt.tokenizer_file = Tokenizer::file_in(bpe_dir());
  opt.chat_template = chat_template_by_name("chatml");
  return opt;
}

bool valid_utf8(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    std::size_t len = 0;
    if (utf8_head(std::string_view(s).substr(i), len) != Utf8Head::kComplete) return false;
    i += len;
  }
  return true;
}

TEST_F(ServeTest, TextPromptRunsTheTokenizerJsonIds) {
  start(*find_preset("tiny"), {}, bpe_options());
  const std::string text = "the server caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x98\x80";
  const Tokenizer load_side = Tokenizer::open(bpe_dir());  // what `load --tokenizer DIR` counts
  const Ids ids = load_side.encode(text);
  // "the" t,he; " server" Ġ s er v er; " caf\xC3\xA9" Ġ c a f é; " 日本" Ġ + 6 bytes; " 😀"
  // Ġ + 4 bytes: 2 + 5 + 5 + 7 + 5.
  EXPECT_EQ(ids.size(), 24u);
  auto res = client().Post("/v1/completions", json{{"prompt", text}, {"max_tokens", 8}}.dump(),
                           "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const json j = json::parse(res->body);
  EXPECT_EQ(j["usage"]["prompt_tokens"], int(ids.size()));
  const Ids want = offline(ids, 8);
  EXPECT_EQ(j["choices"][0]["token_ids"].get<Ids>(), want);
  const std::string whole = j["choices"][0]["text"];
  EXPECT_EQ(whole, load_side.decode(want));

  const Streamed s = post_stream(client(), {{"prompt", text}, {"max_tokens", 8},
                                            {"stream_options", {{"include_usage", true}}}});
  EXPECT_EQ(s.tokens, want);
  std::string joined;
  for (const json& c : s.chunks)
    for (const json& choice : c["choices"]) {
      const std::string piece = choice["text"];
      EXPECT_TRUE(valid_utf8(piece)) << piece;
      joined += piece;
    }
  EXPECT_EQ(joined, whole);
  EXPECT_EQ(s.chunks.back()["usage"]["prompt_tokens"], int(ids.size()));
}

TEST_F(ServeTest, ChatSpecialTokensAreSingleTokenizerJsonIds) {
  start(*find_preset("tiny"), {}, bpe_options());
  auto res = client().Post(
      "/v1/chat/completions",
      json{{"messages", {{{"role", "user"}, {"content", "hi"}}}}, {"max_tokens", 3}}.dump(),
      "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  // "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
  const Tokenizer t = Tokenizer::open(bpe_dir());
  Ids prompt{llmbench_test::kSmallBpeImStart};
  for (auto id : t.encode("user\nhi")) prompt.push_back(id);
  prompt.push_back(llmbench_test::kSmallBpeImEnd);
  for (auto id : t.encode("\n")) prompt.push_back(id);
  prompt.push_back(llmbench_test::kSmallBpeImStart);
  for (auto id : t.encode("assistant\n")) prompt.push_back(id);
  const json j = json::parse(res->body);
  EXPECT_EQ(j["usage"]["prompt_tokens"], int(prompt.size()));
  EXPECT_EQ(j["choices"][0]["token_ids"].get<Ids>(), offline(prompt, 3));
}

// The checkpoint's generation_config.json names the ends of a generation (several, as Llama 3
// Instruct's does): a chat without max_tokens stops at the first one it generates ("stop"),
// and ignore_eos runs past it.
TEST_F(ServeTest, AChatEndsAtAnyOfTheCheckpointsEndOfSequenceIds) {
  const fs::path d = fs::path(LLMBENCH_TEST_SCRATCH) / ("serve_eos_" + std::to_string(::getpid()));
  llmbench_test::write_small_bpe(d);
  ServeOptions opt = bpe_options();
  opt.tokenizer_file = Tokenizer::file_in(d.string());
  opt.model_root = d.string();
  const json chat = {{"messages", {{{"role", "user"}, {"content", "hi"}}}}, {"max_tokens", 24},
                     {"ignore_eos", true}};
  start(*find_preset("tiny"), {}, opt);
  const auto post = [&](const json& body) {
    auto res = client().Post("/v1/chat/completions", body.dump(), "application/json");
    EXPECT_TRUE(res);
    EXPECT_EQ(res->status, 200) << (res ? res->body : "");
    return res ? json::parse(res->body) : json();
  };
  const Ids g = post(chat)["choices"][0]["token_ids"].get<Ids>();
  ASSERT_EQ(g.size(), 24u);
  stop();
  // Two ids the model generates, the later one listed first; a third it never does.
  const std::int32_t a = g[6], b = g[3];
  std::int32_t unused = 0;
  while (std::find(g.begin(), g.end(), unused) != g.end()) ++unused;
  std::ofstream(d / "generation_config.json")
      << json{{"eos_token_id", {a, unused, b}}}.dump();
  start(*find_preset("tiny"), {}, opt);
  const auto first = std::size_t(std::find_if(g.begin(), g.end(), [&](std::int32_t t) {
                                   return t == a || t == b;
                                 }) - g.begin());
  json to_eos = chat;
  to_eos.erase("ignore_eos");
  to_eos.erase("max_tokens");
  const json e = post(to_eos);
  EXPECT_EQ(e["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(e["choices"][0]["token_ids"].get<Ids>(), Ids(g.begin(), g.begin() + first + 1));
  const json past = post(chat);
  EXPECT_EQ(past["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(past["choices"][0]["token_ids"].get<Ids>(), g);
}

}  // namespace
}  // namespace llmbench::test
