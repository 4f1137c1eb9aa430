// Sampling through `llmbench serve` end to end (in-process server, ephemeral loopback port, the
// tiny preset): a seed gives the same tokens whole, streamed and beside other requests, and a
// different seed different ones; stop strings cut the text where they start, also when one
// spans two tokens, whole and streamed, and the engine counts the request as stopped;
// stop_token_ids end the request on the token (its text left out unless asked for); the
// log-probabilities' shapes of both APIs; echo; a chat request without max_tokens runs to the
// context or to EOS; every unsupported field that would change the answer is a 400 naming it.
#include <future>

#include "engine/bench/prompts.h"
#include "tests/serve/serve_fixture.h"
#include "tools/text/chat_template.h"

namespace llmbench::test {
namespace {

std::string piece(std::int32_t id) { return Tokenizer(256).decode(std::vector<std::int32_t>{id}); }

class Sampling : public ServeTest {
 protected:
  json post(const json& body, const std::string& path = "/v1/completions") {
    auto res = client().Post(path, body.dump(), "application/json");
    if (!res) {
      ADD_FAILURE() << "no answer";
      return json();
    }
    EXPECT_EQ(res->status, 200) << res->body;
    return json::parse(res->body);
  }
  std::vector<std::int32_t> ids(const json& j) {
    return j["choices"][0]["token_ids"].get<std::vector<std::int32_t>>();
  }
  // The 400 of `body`, which must name `param`.
  void expect_refused(const json& body, const std::string& param,
                      const std::string& path = "/v1/completions") {
    auto res = client().Post(path, body.dump(), "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 400) << param << ": " << res->body;
    const json e = json::parse(res->body)["error"];
    EXPECT_EQ(e["param"], param) << res->body;
    EXPECT_NE(e["message"].get<std::string>().find(param), std::string::npos) << res->body;
  }
  // The text of a stream: every chunk's text (completions) or content (chat).
  static std::string text_of(const Streamed& s) {
    std::string t;
    for (const json& c : s.chunks)
      for (const json& ch : c.value("choices", json::array())) {
        if (ch.contains("text")) t += ch["text"].get<std::string>();
        if (ch.contains("delta") && ch["delta"].contains("content"))
          t += ch["delta"]["content"].get<std::string>();
      }
    return t;
  }
};

const std::vector<std::int32_t> kPrompt = {72, 101, 108, 108, 111, 44, 32, 119};

TEST_F(Sampling, SameSeedSameTokensDifferentSeedDifferentTokens) {
  start(tiny());
  json body = {{"prompt", kPrompt}, {"max_tokens", 32}, {"temperature", 2.0}, {"top_p", 0.95},
               {"seed", 1234}, {"ignore_eos", true}};
  const auto a = ids(post(body));
  ASSERT_EQ(a.size(), 32u);
  EXPECT_EQ(ids(post(body)), a);
  EXPECT_EQ(post_stream(client(), body).tokens, a);  // streamed: the same draws
  // Beside other requests (they share its steps): still the same tokens.
  std::vector<std::future<std::vector<std::int32_t>>> same, others;
  for (int i = 0; i < 3; ++i) {
    same.push_back(std::async(std::launch::async, [&] { return ids(post(body)); }));
    json other = body;
    other["seed"] = 99 + i;
    other["prompt"] = synthetic_prompts(7 + i, 1, 5 + 9 * i, 256, false);
    others.push_back(std::async(std::launch::async, [&, other] { return ids(post(other)); }));
  }
  for (auto& f : same) EXPECT_EQ(f.get(), a);
  for (auto& f : others) EXPECT_EQ(f.get().size(), 32u);
  body["seed"] = 1235;
  const auto b = ids(post(body));
  int equal = 0;
  for (std::size_t i = 0; i < a.size(); ++i) equal += a[i] == b[i];
  EXPECT_LT(equal, 16) << "seeds 1234 and 1235 drew mostly the same tokens";
  EXPECT_NE(a, offline(kPrompt, 32));  // sampled, not greedy
  // top_k 1 is greedy whatever the temperature and seed.
  body["top_k"] = 1;
  EXPECT_EQ(ids(post(body)), offline(kPrompt, 32));
  // Without a seed, two requests differ (each draws its own).
  body.erase("seed");
  body.erase("top_k");
  EXPECT_NE(ids(post(body)), ids(post(body)));
}

TEST_F(Sampling, StopStringSpanningTwoTokensCutsTheText) {
  start(tiny());
  // Find a greedy completion with two printable-ASCII tokens in a row whose two characters
  // first occur at that boundary: the stop string spans the two tokens.
  json body;
  std::string text, stop;
  std::size_t tokens_through = 0;
  for (int p = 0; p < 20 && stop.empty(); ++p) {
    body = {{"prompt", synthetic_prompts(300 + p, 1, 6, 256, false)}, {"max_tokens", 40},
            {"ignore_eos", true}};
    const json whole = post(body);
    text = whole["choices"][0]["text"];
    const auto g = ids(whole);
    std::string prefix;
    for (std::size_t k = 0; k + 1 < g.size() && stop.empty(); ++k) {
      prefix += piece(g[k]);
      const bool ascii = g[k] >= 33 && g[k] <= 126 && g[k + 1] >= 33 && g[k + 1] <= 126;
      const std::string s = {char(g[k]), char(g[k + 1])};
      if (ascii && text.rfind(prefix + piece(g[k + 1]), 0) == 0 &&
          text.find(s) == prefix.size() - 1)
        stop = s, tokens_through = k + 2;
    }
  }
  ASSERT_FALSE(stop.empty()) << "no completion with two printable tokens in a row";
  const double stops_before = metric("llmbench_requests_finished_total{reason=\"stop\"}");
  body["stop"] = json::array({"never-generated", stop});
  const json j = post(body);
  const std::string want = text.substr(0, text.find(stop));
  EXPECT_EQ(j["choices"][0]["text"], want);
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(j["choices"][0]["stop_reason"], stop);
  EXPECT_EQ(ids(j).size(), tokens_through);
  EXPECT_EQ(j["usage"]["completion_tokens"], int(tokens_through));
  // The engine ended it at that token and counts it as stopped (bounded wait: the count is
  // published after the response).
  double stops_after = stops_before;
  for (int i = 0; i < 200 && stops_after < stops_before + 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    stops_after = metric("llmbench_requests_finished_total{reason=\"stop\"}");
  }
  EXPECT_EQ(stops_after, stops_before + 1);
  // Streamed: the chunks never show the stop string's first character early.
  const Streamed s = post_stream(client(), body);
  EXPECT_EQ(text_of(s), want);
  EXPECT_EQ(s.finish_reason, "stop");
  EXPECT_EQ(s.tokens.size(), tokens_through);
  EXPECT_TRUE(s.done);
  // Completed by the last token max_tokens allows: finished by the stop string, not length.
  json last = body;
  last["max_tokens"] = int(tokens_through);
  const json l = post(last);
  EXPECT_EQ(l["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(l["choices"][0]["text"], want);
  // include_stop_str_in_output keeps it.
  body["include_stop_str_in_output"] = true;
  EXPECT_EQ(post(body)["choices"][0]["text"], want + stop);
  EXPECT_EQ(text_of(post_stream(client(), body)), want + stop);
}

TEST_F(Sampling, StopTokenIdsEndOnTheToken) {
  start(tiny());
  json body = {{"prompt", kPrompt}, {"max_tokens", 16}, {"ignore_eos", true}};
  const auto g = ids(post(body));
  const std::int32_t t = g[5];
  const std::size_t first = std::size_t(std::find(g.begin(), g.end(), t) - g.begin());
  const std::vector<std::int32_t> want(g.begin(), g.begin() + std::ptrdiff_t(first) + 1);
  body["stop_token_ids"] = {t};
  const json j = post(body);
  EXPECT_EQ(ids(j), want);
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(j["choices"][0]["stop_reason"], t);
  const std::vector<std::int32_t> before(want.begin(), want.end() - 1);
  EXPECT_EQ(j["choices"][0]["text"], Tokenizer(256).decode(before));
  const Streamed s = post_stream(client(), body);
  EXPECT_EQ(s.tokens, want);
  EXPECT_EQ(text_of(s), Tokenizer(256).decode(before));
  body["include_stop_str_in_output"] = true;
  EXPECT_EQ(post(body)["choices"][0]["text"], Tokenizer(256).decode(want));
}

TEST_F(Sampling, LogprobsShapes) {
  start(tiny(), {}, with_chatml());
  // Completions: tokens, token_logprobs, top_logprobs (N + the sampled token), text_offset.
  const json j = post({{"prompt", kPrompt}, {"max_tokens", 8}, {"logprobs", 3}});
  const json& lp = j["choices"][0]["logprobs"];
  ASSERT_EQ(lp["tokens"].size(), 8u) << j.dump();
  ASSERT_EQ(lp["token_logprobs"].size(), 8u);
  ASSERT_EQ(lp["top_logprobs"].size(), 8u);
  ASSERT_EQ(lp["text_offset"].size(), 8u);
  std::size_t offset = 0;
  for (std::size_t i = 0; i < 8; ++i) {
    const std::string tok = lp["tokens"][i];
    const double l = lp["token_logprobs"][i];
    EXPECT_LE(l, 0.0);
    EXPECT_EQ(tok, piece(ids(j)[i]));
    const json& top = lp["top_logprobs"][i];
    EXPECT_GE(top.size(), 3u);
    EXPECT_LE(top.size(), 4u);
    double best = -1e30;
    for (auto it = top.begin(); it != top.end(); ++it) best = std::max(best, it.value().get<double>());
    EXPECT_EQ(l, best) << "greedy: the token is the most likely";
    EXPECT_EQ(lp["text_offset"][i], offset);
    offset += tok.size();
  }
  // Streamed: one entry per token chunk.
  const Streamed s = post_stream(client(), {{"prompt", kPrompt}, {"max_tokens", 4}, {"logprobs", 0}});
  int with = 0;
  for (const json& c : s.chunks)
    for (const json& ch : c.value("choices", json::array()))
      if (!ch["logprobs"].is_null()) {
        EXPECT_EQ(ch["logprobs"]["tokens"].size(), 1u);
        ++with;
      }
  EXPECT_EQ(with, 4);
  // Chat: content[] of {token, logprob, bytes, top_logprobs[top_logprobs]}.
  const json c = post({{"messages", {{{"role", "user"}, {"content", "Hi"}}}}, {"max_tokens", 5},
                       {"logprobs", true}, {"top_logprobs", 2}},
                      "/v1/chat/completions");
  const json& content = c["choices"][0]["logprobs"]["content"];
  ASSERT_EQ(content.size(), 5u) << c.dump();
  for (const json& e : content) {
    EXPECT_LE(e["logprob"].get<double>(), 0.0);
    ASSERT_EQ(e["top_logprobs"].size(), 2u);
    EXPECT_GE(e["top_logprobs"][0]["logprob"].get<double>(),
              e["top_logprobs"][1]["logprob"].get<double>());
    const std::string tok = e["token"];
    EXPECT_EQ(e["bytes"].size(), tok.size());
  }
  // Without them: null, as before.
  EXPECT_TRUE(post({{"prompt", kPrompt}, {"max_tokens", 2}})["choices"][0]["logprobs"].is_null());
  expect_refused({{"messages", {{{"role", "user"}, {"content", "Hi"}}}}, {"top_logprobs", 2}},
                 "top_logprobs", "/v1/chat/completions");
}

TEST_F(Sampling, EchoPrependsThePrompt) {
  start(tiny());
  json body = {{"prompt", "Hello"}, {"max_tokens", 5}, {"echo", true}};
  const json j = post(body);
  const std::string completion = Tokenizer(256).decode(ids(j));
  EXPECT_EQ(j["choices"][0]["text"], "Hello" + completion);
  EXPECT_EQ(ids(j).size(), 5u);
  const Streamed s = post_stream(client(), body);
  ASSERT_FALSE(s.chunks.empty());
  EXPECT_EQ(s.chunks[0]["choices"][0]["text"], "Hello");
  EXPECT_EQ(text_of(s), "Hello" + completion);
  body["logprobs"] = 1;
  expect_refused(body, "echo");
}

TEST_F(Sampling, ChatWithoutMaxTokensRunsToTheContextOrEos) {
  SchedulerOptions sched;
  start(tiny(), sched, with_chatml());
  const json body = {{"messages", {{{"role", "user"}, {"content", "Hi"}}}}};
  const json j = post(body, "/v1/chat/completions");
  const int prompt = j["usage"]["prompt_tokens"];
  EXPECT_EQ(j["usage"]["completion_tokens"], 256 - prompt);  // tiny's context: 256
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  // Completions keep OpenAI's default of 16.
  EXPECT_EQ(post({{"prompt", kPrompt}})["usage"]["completion_tokens"], 16);
  // With an end-of-sequence token the chat ends on it.
  const auto g = ids(j);
  const std::int32_t eos = g[10];
  const std::size_t first = std::size_t(std::find(g.begin(), g.end(), eos) - g.begin());
  stop();
  sched.eos_token_ids = {eos};
  start(tiny(), sched, with_chatml());
  const json e = post(body, "/v1/chat/completions");
  EXPECT_EQ(e["usage"]["completion_tokens"], int(first) + 1);
  EXPECT_EQ(e["choices"][0]["finish_reason"], "stop");
}

TEST_F(Sampling, UnsupportedFieldsAreRefusedByName) {
  start(tiny(), {}, with_chatml());
  const json chat = {{"messages", {{{"role", "user"}, {"content", "Hi"}}}}, {"max_tokens", 2}};
  const json completion = {{"prompt", "Hi"}, {"max_tokens", 2}};
  const std::vector<std::pair<std::string, json>> both = {
      {"response_format", {{"type", "json_object"}}},
      {"tools", json::array({{{"type", "function"}, {"function", {{"name", "f"}}}}})},
      {"tool_choice", "auto"},
      {"n", 2},
      {"best_of", 3},
      {"logit_bias", {{"5", 10}}},
      {"presence_penalty", 0.5},
      {"min_tokens", 4},
      {"prompt_logprobs", 1}};
  for (const auto& [field, value] : both) {
    json c = chat, p = completion;
    c[field] = value;
    p[field] = value;
    expect_refused(c, field, "/v1/chat/completions");
    expect_refused(p, field);
  }
  const std::vector<std::pair<std::string, json>> chat_only = {
      {"add_generation_prompt", false},
      {"continue_final_message", true},
      {"chat_template_kwargs", {{"enable_thinking", false}}},
      {"chat_template", "{{ messages }}"},
      {"echo", true}};
  for (const auto& [field, value] : chat_only) {
    json c = chat;
    c[field] = value;
    expect_refused(c, field, "/v1/chat/completions");
  }
  // Harmless and neutral values are accepted.
  json ok = chat;
  ok.update({{"user", "u"}, {"presence_penalty", 0}, {"frequency_penalty", 0},
             {"response_format", {{"type", "text"}}}, {"tool_choice", "none"}, {"n", 1},
             {"add_generation_prompt", true}, {"continue_final_message", false},
             {"chat_template_kwargs", json::object()}, {"logit_bias", json::object()}});
  EXPECT_EQ(post(ok, "/v1/chat/completions")["choices"][0]["finish_reason"], "length");
}

}  // namespace
}  // namespace llmbench::test
