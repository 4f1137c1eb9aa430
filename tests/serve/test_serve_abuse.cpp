// `llmbench serve` under abuse, over raw loopback sockets (in-process server, ephemeral port;
// every wait bounded): a second server on a port in use fails to bind; chunked bodies are
// capped like Content-Length ones; slow-header clients neither freeze /health nor outlive the
// head deadline; connections are bounded; pipelined requests are each answered; HTTP/1.0 gets
// a stream without chunked framing; every refusal carries an OpenAI-style JSON error; 429 and
// 503 carry Retry-After.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <future>
#include <regex>

#include "kernels/common/error.h"
#include "tests/serve/raw_client.h"
#include "tests/serve/serve_fixture.h"

namespace llmbench::test {
namespace {

void expect_json_refusal(int port, const std::string& request, int status) {
  Raw c(port);
  c.send(request);
  const auto [got, body] = status_and_json(c.read(std::chrono::seconds(5)));
  EXPECT_EQ(got, status) << request.substr(0, 80);
  EXPECT_TRUE(body.is_object() && body.contains("error") && body["error"]["message"].is_string())
      << request.substr(0, 80) << " -> " << body.dump();
}

TEST_F(ServeTest, ASecondServerOnAPortInUseFailsToBind) {
  start(tiny());
  ServeOptions opt;
  opt.port = port_;
  Server second(*model_, {}, opt);
  try {
    second.bind();
    FAIL() << "bound a port in use";
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("already in use"), std::string::npos) << e.what();
  }
}

TEST_F(ServeTest, EveryRefusalCarriesAJsonError) {
  ServeOptions opt;
  opt.max_body_bytes = 4096;
  start(tiny(), {}, opt);
  expect_json_refusal(port_, "\x16\x03\x01 garbage\r\n\r\n", 400);
  expect_json_refusal(port_, "GET /" + std::string(9000, 'a') + " HTTP/1.1\r\n\r\n", 414);
  expect_json_refusal(port_, "GET / HTTP/1.1\r\nX: " + std::string(20000, 'a') + "\r\n\r\n", 431);
  expect_json_refusal(port_, "POST /v1/completions HTTP/1.1\r\nContent-Length: 5000\r\n\r\n", 413);
  expect_json_refusal(port_, "POST /v1/completions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                             "zz\r\n", 400);
  expect_json_refusal(port_, "POST /v1/completions HTTP/1.1\r\nContent-Encoding: gzip\r\n"
                             "Content-Length: 2\r\n\r\n{}", 415);
  expect_json_refusal(port_, "GET /v1/completions HTTP/1.1\r\nConnection: close\r\n\r\n", 405);
  expect_json_refusal(port_, "GET /nothing HTTP/1.1\r\nConnection: close\r\n\r\n", 404);
  // A chunked body over the cap: 413 once the chunks pass it, without reading the rest.
  Raw c(port_);
  c.send("POST /v1/completions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n");
  for (int i = 0; i < 8; ++i) c.send("400\r\n" + std::string(1024, ' ') + "\r\n");
  const auto [status, body] = status_and_json(c.read(std::chrono::seconds(5)));
  EXPECT_EQ(status, 413);
  EXPECT_EQ(body["error"]["type"], "invalid_request_error");
  // The server goes on.
  auto ok = client().Get("/health");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
}

TEST_F(ServeTest, SlowHeaderClientsDoNotFreezeTheServer) {
  ServeOptions opt;
  opt.http_threads = 4;
  opt.head_timeout = std::chrono::milliseconds(3000);
  start(tiny(), {}, opt);
  std::vector<std::unique_ptr<Raw>> slow;
  for (int i = 0; i < 64; ++i) {
    slow.push_back(std::make_unique<Raw>(port_));
    slow.back()->send("POST /v1/completions HTTP/1.1\r\n");
  }
  // One header line each every 250 ms: the head deadline is not reset by them.
  const auto t0 = std::chrono::steady_clock::now();
  double worst_health_s = 0;
  for (int round = 0; round < 4; ++round) {
    for (auto& s : slow) s->send("X-Slow: " + std::to_string(round) + "\r\n");
    const auto h0 = std::chrono::steady_clock::now();
    auto res = client().Get("/health");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200);
    auto m = client().Get("/metrics");
    ASSERT_TRUE(m);
    worst_health_s = std::max(
        worst_health_s,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - h0).count());
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  EXPECT_LT(worst_health_s, 1.0);
  // A completion still runs while they dawdle.
  auto done = client().Post("/v1/completions", R"({"prompt": [1, 2], "max_tokens": 2})",
                            "application/json");
  ASSERT_TRUE(done);
  EXPECT_EQ(done->status, 200);
  // Each slow client gets 408 and is closed, within the head deadline plus slack.
  for (auto& s : slow) {
    const auto [status, body] = status_and_json(s->read(std::chrono::seconds(5)));
    EXPECT_EQ(status, 408);
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 7.0);
}

TEST_F(ServeTest, ConnectionsBeyondTheLimitGet503WithRetryAfter) {
  ServeOptions opt;
  opt.max_connections = 8;
  start(tiny(), {}, opt);
  // The fixture's /health probe has closed; wait (bounded) until the server has seen it.
  std::vector<std::unique_ptr<Raw>> held;
  for (int i = 0; i < 8; ++i) {
    held.push_back(std::make_unique<Raw>(port_));
    held.back()->send("GET /health HTTP/1.1\r\n\r\n");
    held.back()->read(std::chrono::seconds(2), "ok\"}");
  }
  // Beyond the limit a few connections more are admitted for /health and /metrics only: a
  // completion on one is 503 with Retry-After, /health answers.
  Raw extra(port_);
  extra.send("POST /v1/completions HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}");
  std::string r = extra.read(std::chrono::seconds(3), "}");
  EXPECT_EQ(status_and_json(r).first, 503) << r;
  EXPECT_NE(r.find("Retry-After: 1"), std::string::npos) << r;
  for (int i = 0; i < HttpServer::kReserveConnections - 1; ++i) {  // `extra` holds one
    held.push_back(std::make_unique<Raw>(port_));
    held.back()->send("GET /health HTTP/1.1\r\n\r\n");
    EXPECT_NE(held.back()->read(std::chrono::seconds(2), "ok\"}").find("ok\"}"), std::string::npos);
  }
  // Past those too: 503 at once, and closed.
  Raw beyond(port_);
  r = beyond.read(std::chrono::seconds(3));
  EXPECT_EQ(status_and_json(r).first, 503) << r;
  EXPECT_NE(r.find("Retry-After: 1"), std::string::npos) << r;
  held.clear();  // once they go, new connections are served again
  for (int i = 0; i < 100; ++i) {
    auto res = client().Get("/health");
    if (res && res->status == 200) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  FAIL() << "not served after the held connections closed";
}

TEST_F(ServeTest, PipelinedRequestsAreEachAnswered) {
  start(tiny());
  Raw c(port_);
  const std::string body = R"({"prompt": [1, 2, 3], "max_tokens": 3})";
  const std::string post = "POST /v1/completions HTTP/1.1\r\nContent-Type: application/json\r\n"
                           "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  c.send(post + "GET /health HTTP/1.1\r\n\r\n" + post);
  // Both completions' bodies end with their usage object.
  const std::string all = c.read(std::chrono::seconds(10), "\"total_tokens\"", 2);
  std::vector<std::string> statuses;
  const std::regex status_line(R"(HTTP/1\.1 (\d+))");
  for (std::sregex_iterator it(all.begin(), all.end(), status_line), end; it != end; ++it)
    statuses.push_back((*it)[1]);
  EXPECT_EQ(statuses, (std::vector<std::string>{"200", "200", "200"})) << all;
  const auto want = offline({1, 2, 3}, 3);
  std::size_t at = 0;
  int completions = 0;
  while ((at = all.find("\"token_ids\":", at)) != std::string::npos) {
    at += 12;
    EXPECT_EQ(json::parse(all.substr(at, all.find(']', at) - at + 1)).get<std::vector<int>>(),
              std::vector<int>(want.begin(), want.end()));
    ++completions;
  }
  EXPECT_EQ(completions, 2);
}

TEST_F(ServeTest, Http10StreamsWithoutChunkedFraming) {
  start(tiny());
  Raw c(port_);
  const std::string body = R"({"prompt": [4, 5], "max_tokens": 4, "stream": true})";
  c.send("POST /v1/completions HTTP/1.0\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n\r\n" + body);
  const std::string all = c.read(std::chrono::seconds(10));  // ends when the server closes
  EXPECT_EQ(all.rfind("HTTP/1.0 200", 0), 0u) << all;
  EXPECT_EQ(all.find("Transfer-Encoding"), std::string::npos) << all;
  const std::string payload = all.substr(all.find("\r\n\r\n") + 4);
  EXPECT_EQ(payload.rfind("data: {", 0), 0u) << payload;  // no chunk-size line first
  EXPECT_NE(payload.find("data: [DONE]\n\n"), std::string::npos) << payload;
}

TEST_F(ServeTest, ShuttingDownAnswers503WithRetryAfter) {
  start(slow_config());
  std::atomic<bool> streaming{false};
  auto stream = std::async(std::launch::async, [&] {
    return post_stream(client(), {{"prompt", std::vector<int>(5, 9)}, {"max_tokens", 3000}},
                       [&](const Streamed& s) {
                         streaming = !s.tokens.empty();
                         return true;
                       });
  });
  for (int i = 0; i < 1000 && !streaming; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(streaming);
  // The drain: in-flight requests get 3 s, new ones are turned away.
  auto drain = std::async(std::launch::async,
                          [&] { server_->shutdown(std::chrono::milliseconds(3000)); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto res = client().Post("/v1/completions", R"({"prompt": "x"})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  EXPECT_EQ(res->get_header_value("Retry-After"), "5");
  EXPECT_EQ(json::parse(res->body)["error"]["type"], "service_unavailable");
  auto health = client().Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 503);
  ASSERT_EQ(drain.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  ASSERT_EQ(stream.wait_for(std::chrono::seconds(10)), std::future_status::ready);
}

TEST_F(ServeTest, MixedPromptArraysAndIntegralFloatsAreAnsweredPrecisely) {
  start(tiny());
  auto mixed = client().Post("/v1/completions", R"({"prompt": [1, "a"]})", "application/json");
  ASSERT_TRUE(mixed);
  EXPECT_EQ(mixed->status, 400);
  EXPECT_NE(json::parse(mixed->body)["error"]["message"].get<std::string>().find("mixes"),
            std::string::npos)
      << mixed->body;
  auto two = client().Post("/v1/completions", R"({"prompt": [1, 2], "max_tokens": 2.0})",
                           "application/json");
  ASSERT_TRUE(two);
  ASSERT_EQ(two->status, 200) << two->body;
  EXPECT_EQ(json::parse(two->body)["usage"]["completion_tokens"], 2);
  auto half = client().Post("/v1/completions", R"({"prompt": [1, 2], "max_tokens": 2.5})",
                            "application/json");
  ASSERT_TRUE(half);
  EXPECT_EQ(half->status, 400);
  auto newer = client().Post("/v1/completions",
                             R"({"prompt": [1, 2], "max_completion_tokens": 3})",
                             "application/json");
  ASSERT_TRUE(newer);
  EXPECT_EQ(json::parse(newer->body)["usage"]["completion_tokens"], 3);
}

}  // namespace
}  // namespace llmbench::test
