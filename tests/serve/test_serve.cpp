// `llmbench serve` end to end on loopback (in-process server, ephemeral port): streamed and
// non-streamed tokens equal the offline static path's; 16 concurrent staggered requests each
// get their offline tokens; a client that disconnects mid-stream frees its blocks (seen in
// /metrics); bad requests get 400 with an OpenAI-style error object and the server goes on;
// a full queue gets 429; shutdown while streaming ends the stream and returns in bounded time.
#include <atomic>
#include <future>

#include "engine/bench/prompts.h"
#include "tests/serve/serve_fixture.h"

namespace llmbench::test {
namespace {

TEST_F(ServeTest, StreamedTokensEqualOffline) {
  start(tiny());
  for (int len : {1, 7, 40}) {
    const auto prompt = synthetic_prompts(len, 1, len, 256, false);
    const Streamed s = post_stream(
        client(), {{"model", "tiny"}, {"prompt", prompt}, {"max_tokens", 12},
                   {"temperature", 0}, {"stream_options", {{"include_usage", true}}}});
    EXPECT_EQ(s.status, 200);
    EXPECT_EQ(s.tokens, offline(prompt, 12)) << "prompt length " << len;
    EXPECT_TRUE(s.done);
    EXPECT_EQ(s.finish_reason, "length");
    ASSERT_FALSE(s.chunks.empty());
    const json& usage = s.chunks.back()["usage"];
    EXPECT_EQ(usage["prompt_tokens"], len);
    EXPECT_EQ(usage["completion_tokens"], 12);
    EXPECT_EQ(usage["total_tokens"], len + 12);
    EXPECT_EQ(s.raw.substr(s.raw.size() - 14), "data: [DONE]\n\n");
  }
}

TEST_F(ServeTest, NonStreamedTextPromptEqualsOffline) {
  start(tiny());
  const std::string text = "Hello, llmbench!";
  auto res = client().Post("/v1/completions",
                           json{{"prompt", text}, {"max_tokens", 9}}.dump(), "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const json j = json::parse(res->body);
  const std::vector<std::int32_t> prompt(text.begin(), text.end());  // the byte mapping
  const auto want = offline(prompt, 9);
  EXPECT_EQ(j["choices"][0]["token_ids"].get<std::vector<std::int32_t>>(), want);
  EXPECT_EQ(j["choices"][0]["text"], Tokenizer(256).decode(want));
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["usage"]["prompt_tokens"], int(text.size()));
  EXPECT_EQ(j["usage"]["completion_tokens"], 9);

  auto models = client().Get("/v1/models");
  ASSERT_TRUE(models);
  const json m = json::parse(models->body)["data"][0];
  EXPECT_EQ(m["id"], "tiny");
  // vLLM's model card keys: `vllm bench serve` without --model reads `root` (issue 43).
  EXPECT_EQ(m["root"], "tiny");
  EXPECT_TRUE(m.contains("parent") && m["parent"].is_null()) << m.dump();
}

TEST_F(ServeTest, SixteenConcurrentStaggeredRequestsGetOfflineTokens) {
  SchedulerOptions sched;
  sched.max_num_batched_tokens = 64;  // long prompts are chunked while others decode
  // The slower model (a few ms per step): requests 5 ms apart overlap whatever the machine's
  // load, so the steps are shared (asserted below) without depending on timing luck.
  start(slow_config(), sched);
  constexpr int kN = 16;
  std::vector<std::vector<std::int32_t>> prompts;
  std::vector<int> outs;
  for (int i = 0; i < kN; ++i) {
    const int len = 3 + (i * 29) % 90;
    prompts.push_back(synthetic_prompts(500 + i, 1, len, 256, false));
    outs.push_back(8 + (i % 5) * 6);
  }
  std::vector<std::future<Streamed>> futures;
  for (int i = 0; i < kN; ++i)
    futures.push_back(std::async(std::launch::async, [&, i] {
      std::this_thread::sleep_for(std::chrono::milliseconds(5 * i));  // staggered arrivals
      return post_stream(client(), {{"prompt", prompts[i]}, {"max_tokens", outs[i]}});
    }));
  for (int i = 0; i < kN; ++i) {
    ASSERT_EQ(futures[i].wait_for(std::chrono::seconds(60)), std::future_status::ready);
    const Streamed s = futures[i].get();
    EXPECT_EQ(s.status, 200);
    EXPECT_TRUE(s.done);
    EXPECT_EQ(s.tokens, offline(prompts[i], outs[i])) << "request " << i;
  }
  // They shared steps: some step ran rows of several sequences.
  int most = 0;
  for (const StepStats& st : server_->engine().step_log()) most = std::max(most, st.seqs);
  EXPECT_GT(most, 1);
  EXPECT_EQ(metric("llmbench_kv_blocks_used"), 0);
  EXPECT_EQ(metric("llmbench_generation_tokens_total"),
            double(std::accumulate(outs.begin(), outs.end(), 0)));
}

TEST_F(ServeTest, DisconnectMidStreamFreesBlocks) {
  start(slow_config());
  const std::vector<std::int32_t> prompt(10, 7);
  const Streamed s = post_stream(client(), {{"prompt", prompt}, {"max_tokens", 2000}},
                                 [](const Streamed& so_far) { return so_far.tokens.size() < 3; });
  EXPECT_GE(s.tokens.size(), 3u);
  EXPECT_FALSE(s.done);
  // Bounded wait until the server has noticed and freed the sequence's blocks.
  double used = -1, aborted = -1;
  for (int i = 0; i < 500; ++i) {
    used = metric("llmbench_kv_blocks_used");
    aborted = metric("llmbench_requests_finished_total{reason=\"abort\"}");
    if (used == 0 && aborted == 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(used, 0);
  EXPECT_EQ(aborted, 1);
  EXPECT_EQ(metric("llmbench_requests_running"), 0);
  EXPECT_LT(metric("llmbench_generation_tokens_total"), 2000);
}

// The error object of a refused request.
json expect_error(const httplib::Result& res, int status, const std::string& param) {
  EXPECT_TRUE(res);
  if (!res) return {};
  EXPECT_EQ(res->status, status) << res->body;
  const json j = json::parse(res->body);
  EXPECT_TRUE(j["error"]["message"].is_string());
  EXPECT_TRUE(j["error"]["type"].is_string());
  if (param.empty())
    EXPECT_TRUE(j["error"]["param"].is_null());
  else
    EXPECT_EQ(j["error"]["param"], param) << res->body;
  return j;
}

TEST_F(ServeTest, BadRequestsGetErrorObjectsAndTheServerGoesOn) {
  start(tiny());
  auto post = [&](const std::string& body) {
    return client().Post("/v1/completions", body, "application/json");
  };
  expect_error(post("{\"prompt\": [1, 2"), 400, "");                          // malformed JSON
  expect_error(post("[1, 2]"), 400, "");                                      // not an object
  expect_error(post(R"({"max_tokens": 4})"), 400, "prompt");                  // missing field
  expect_error(post(R"({"prompt": []})"), 400, "prompt");                     // empty
  expect_error(post(R"({"prompt": [1, 256]})"), 400, "prompt");               // outside vocab
  expect_error(post(R"({"prompt": [1, -3]})"), 400, "prompt");
  expect_error(post(R"({"prompt": "x", "max_tokens": 300})"), 400, "max_tokens");  // context
  expect_error(post(json{{"prompt", std::vector<int>(300, 1)}}.dump()), 400, "max_tokens");
  expect_error(post(R"({"prompt": "x", "max_tokens": "many"})"), 400, "max_tokens");
  const json t = expect_error(post(R"({"prompt": "x", "temperature": -0.8})"), 400, "temperature");
  EXPECT_NE(t["error"]["message"].get<std::string>().find("temperature"), std::string::npos);
  expect_error(post(R"({"prompt": "x", "top_p": 1.5})"), 400, "top_p");
  expect_error(post(R"({"prompt": "x", "n": 2})"), 400, "n");
  expect_error(post(R"({"prompt": "x", "logprobs": 30})"), 400, "logprobs");
  expect_error(post(R"({"prompt": "x", "stop": 5})"), 400, "stop");
  expect_error(post(R"({"prompt": [[1], [2]]})"), 400, "prompt");             // several prompts
  expect_error(post(R"({"prompt": "x", "model": "gpt-4"})"), 404, "model");
  // Accepted neutral values, and the server still serves.
  auto ok = post(R"({"prompt": "x", "max_tokens": 2, "temperature": 0, "top_p": 1, "n": 1,
                     "stop": null, "logprobs": null, "seed": 5, "user": "u", "ignore_eos": true})");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200) << ok->body;
  expect_error(client().Get("/v1/nothing"), 404, "");
}

TEST_F(ServeTest, FullQueueGets429WithRetryAfter) {
  ServeOptions opt;
  opt.max_waiting = 0;
  start(tiny(), {}, opt);
  auto res = client().Post("/v1/completions", R"({"prompt": "x"})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 429);
  EXPECT_EQ(json::parse(res->body)["error"]["type"], "rate_limit_error");
  EXPECT_EQ(res->get_header_value("Retry-After"), "1");
}

TEST_F(ServeTest, ShutdownWhileStreamingEndsTheStreamInBoundedTime) {
  start(slow_config());
  std::atomic<bool> got_tokens{false};
  auto stream = std::async(std::launch::async, [&] {
    return post_stream(client(), {{"prompt", std::vector<int>(5, 9)}, {"max_tokens", 3000}},
                       [&](const Streamed& s) {
                         if (s.tokens.size() >= 2) got_tokens = true;
                         return true;
                       });
  });
  for (int i = 0; i < 1000 && !got_tokens; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(got_tokens);
  const auto t0 = std::chrono::steady_clock::now();
  stop(std::chrono::milliseconds(100));  // grace 100 ms, then abort
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 3.0);
  ASSERT_EQ(stream.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  const Streamed got = stream.get();
  // An aborted stream sends no token-like chunk: an error event, then [DONE].
  EXPECT_EQ(got.finish_reason, "");
  ASSERT_FALSE(got.chunks.empty());
  EXPECT_EQ(got.chunks.back()["error"]["code"], "aborted") << got.raw.substr(got.raw.size() - 300);
  for (const json& c : got.chunks) {
    if (!c.contains("choices")) continue;
    for (const json& choice : c["choices"]) EXPECT_EQ(choice["token_ids"].size(), 1u);
  }
  EXPECT_TRUE(got.done);
  EXPECT_LT(got.tokens.size(), 3000u);
  // Nothing listens any more.
  httplib::Client cli("127.0.0.1", port_);
  cli.set_connection_timeout(1);
  EXPECT_FALSE(cli.Get("/health"));
}

}  // namespace
}  // namespace llmbench::test
