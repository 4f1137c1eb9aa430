// POST /v1/chat/completions end to end (in-process server, ephemeral loopback port): the
// rendered conversation's greedy tokens equal the offline path's, whole and streamed; a stream
// sends the role first, then one content delta per token, the usage and [DONE]; GET
// /v1/models/{id}; a server without a chat template answers chat requests with 400.
#include "tests/serve/serve_fixture.h"
#include "tools/text/chat_template.h"
#include "tools/text/stream_decoder.h"

namespace llmbench::test {
namespace {

const json kMessages = json::array({{{"role", "system"}, {"content", "Be brief."}},
                                    {{"role", "user"}, {"content", "Hi"}}});

std::vector<std::int32_t> rendered_prompt() {
  const std::string text = render_chat(*chat_template_by_name("chatml"),
                                       {{"system", "Be brief."}, {"user", "Hi"}});
  return Tokenizer(256).encode(text);
}

TEST_F(ServeTest, ChatCompletionEqualsOfflineTokensOfTheRenderedPrompt) {
  start(tiny(), {}, with_chatml());
  auto res = client().Post("/v1/chat/completions",
                           json{{"messages", kMessages}, {"max_completion_tokens", 6}}.dump(),
                           "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const json j = json::parse(res->body);
  const auto want = offline(rendered_prompt(), 6);
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["id"].get<std::string>().rfind("chatcmpl-", 0), 0u);
  EXPECT_EQ(j["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(j["choices"][0]["message"]["content"], Tokenizer(256).decode(want));
  EXPECT_EQ(j["choices"][0]["token_ids"].get<std::vector<std::int32_t>>(), want);
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(j["usage"]["prompt_tokens"], int(rendered_prompt().size()));
  EXPECT_EQ(j["usage"]["completion_tokens"], 6);
}

TEST_F(ServeTest, ChatStreamSendsTheRoleFirstThenContentDeltas) {
  start(tiny(), {}, with_chatml());
  const Streamed s = post_stream(
      client(),
      {{"messages", kMessages}, {"max_tokens", 5}, {"stream_options", {{"include_usage", true}}}},
      nullptr, "/v1/chat/completions");
  EXPECT_EQ(s.status, 200);
  EXPECT_EQ(s.tokens, offline(rendered_prompt(), 5));
  ASSERT_EQ(s.chunks.size(), 1u + 5u + 1u);  // role, 5 tokens, usage
  EXPECT_EQ(s.chunks[0]["object"], "chat.completion.chunk");
  EXPECT_EQ(s.chunks[0]["choices"][0]["delta"], json({{"role", "assistant"}}));
  // Each delta is what its token completes (a character split over tokens goes out whole).
  const Tokenizer bytes(256);
  StreamDecoder text(bytes);
  for (int i = 1; i <= 5; ++i) {
    const json& c = s.chunks[std::size_t(i)]["choices"][0];
    EXPECT_FALSE(c["delta"].contains("role"));
    std::string want = text.push(c["token_ids"][0].get<int>());
    if (i == 5) want += text.finish();
    EXPECT_EQ(c["delta"]["content"], want);
    EXPECT_EQ(c["finish_reason"].is_null(), i < 5);
  }
  EXPECT_EQ(s.finish_reason, "length");
  EXPECT_EQ(s.chunks.back()["usage"]["completion_tokens"], 5);
  EXPECT_TRUE(s.chunks.back()["choices"].empty());
  EXPECT_TRUE(s.done);
}

TEST_F(ServeTest, ModelByIdAndChatWithoutATemplate) {
  start(tiny());  // no chat template
  auto model = client().Get("/v1/models/tiny");
  ASSERT_TRUE(model);
  EXPECT_EQ(model->status, 200);
  EXPECT_EQ(json::parse(model->body)["id"], "tiny");
  auto other = client().Get("/v1/models/gpt-4");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 404);
  EXPECT_EQ(json::parse(other->body)["error"]["param"], "model");
  auto chat = client().Post("/v1/chat/completions", json{{"messages", kMessages}}.dump(),
                            "application/json");
  ASSERT_TRUE(chat);
  EXPECT_EQ(chat->status, 400);
  EXPECT_NE(json::parse(chat->body)["error"]["message"].get<std::string>().find("--chat-template"),
            std::string::npos);
}

// Prefix caching through the server: a repeated prompt's full blocks are reused (usage says
// how many prompt tokens were cached, /metrics counts queries and hits) and its tokens still
// equal the offline path's.
TEST_F(ServeTest, PrefixCacheHitsShowInUsageAndMetrics) {
  SchedulerOptions sched;
  sched.prefix_caching = true;
  start(tiny(), sched);
  std::vector<std::int32_t> prompt;
  for (int i = 0; i < 40; ++i) prompt.push_back((i * 37 + 11) % 256);
  const auto want = offline(prompt, 4);
  for (int round = 0; round < 2; ++round) {
    auto res = client().Post("/v1/completions",
                             json{{"prompt", prompt}, {"max_tokens", 4}}.dump(),
                             "application/json");
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 200) << res->body;
    const json j = json::parse(res->body);
    EXPECT_EQ(j["choices"][0]["token_ids"].get<std::vector<std::int32_t>>(), want);
    // 40 tokens, blocks of 16: the second time 2 full blocks (32 tokens) come from the cache.
    EXPECT_EQ(j["usage"]["prompt_tokens_details"]["cached_tokens"], round == 0 ? 0 : 32);
  }
  EXPECT_EQ(metric("llmbench_prefix_cache_queries_total"), 80);
  EXPECT_EQ(metric("llmbench_prefix_cache_hits_total"), 32);
  EXPECT_GE(metric("llmbench_kv_blocks_cached"), 2);
  EXPECT_EQ(metric("llmbench_prompt_tokens_total"), 40 + 8);  // only the uncached rows ran
}

}  // namespace
}  // namespace llmbench::test
