// The load client against hostile servers (issue 42), on scripted loopback servers: whatever a
// server sends, each request ends (failed, with one clear reason), memory stays bounded, and
// the client neither crashes nor waits forever. Every server and wait is bounded in time.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "tests/load/scripted_server.h"
#include "tools/load/load_client.h"
#include "tools/load/load_driver.h"
#include "tools/load/load_plan.h"
#include "tools/load/metrics_scrape.h"
#include "tools/load/stream_parse.h"

namespace llmbench {
namespace {

using namespace std::chrono_literals;
using test::Behaviour;
using test::Script;
using test::ScriptedServer;

ClientOptions options(const std::string& base) {
  ClientOptions o;
  o.url = base + "/v1/completions";
  o.connect_timeout_s = 2;
  o.first_byte_timeout_s = 5;
  o.idle_timeout_s = 5;
  return o;
}

LevelDrive level(int n, int max_tokens = 8) {
  LevelDrive d;
  d.max_requests = n;
  d.concurrency = 1;
  d.make_body = [max_tokens](int, RequestRecord& rec) {
    rec.input_len = 4;
    rec.max_tokens = max_tokens;
    return request_body("scripted", false, true, {16, 17, 18, 19}, max_tokens, false, true);
  };
  return d;
}

// Runs `n` requests against a server answering each with `raw`; every one must fail.
std::vector<RequestRecord> failed_level(std::function<std::string(int)> raw, ClientOptions o = {},
                                        int n = 2, int max_tokens = 8) {
  Script s;
  s.behaviour = Behaviour::kRaw;
  s.raw = std::move(raw);
  ScriptedServer server(s);
  const std::string base = server.url();
  if (o.url.empty()) o = options(base);
  else o.url = base + "/v1/completions";
  LevelOutcome out;
  {
    LoadClient client(o);  // closed before the server stops (it waits on kept-alive sockets)
    out = client.run(level(n, max_tokens));
  }
  EXPECT_EQ(out.requests.size(), std::size_t(n));
  for (const RequestRecord& r : out.requests) EXPECT_FALSE(r.ok) << "request " << r.index;
  server.stop();
  return out.requests;
}

TEST(LoadHostile, ADeeplyNestedErrorEventFailsTheRequest) {
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  for (const RequestRecord& r : failed_level([&](int i) {
         return i == 0 ? "data: {\"error\": " + deep + "}\n\ndata: [DONE]\n\n" : std::string();
       })) {
    EXPECT_NE(r.error.find("nested deeper than 64 levels"), std::string::npos) << r.error;
    EXPECT_LT(r.error.size(), 400u);
  }
  // The same through the parser alone, and an error object whose value is long but shallow.
  ParsedStream s = parse_stream({{0, "{\"error\": " + deep + "}"}}, false);
  EXPECT_NE(s.error.find("nested deeper"), std::string::npos) << s.error;
  std::string wide = "[";
  for (int i = 0; i < 5000; ++i) wide += "[1],";
  s = parse_stream({{0, "{\"error\": " + wide + "1]}"}}, false);
  EXPECT_LT(s.error.size(), 400u) << s.error.substr(0, 400);
}

std::string chunk_event(int i) {
  return "data: {\"choices\": [{\"index\": 0, \"text\": \"x\", \"token_ids\": [" +
         std::to_string(100 + i) + "], \"finish_reason\": null}]}\n\n";
}

// A token every 100 ms that never ends, and a stream of keep-alive comments only: the request
// deadline ends each.
TEST(LoadHostile, AStreamThatNeverEndsMeetsTheRequestDeadline) {
  ClientOptions o;
  o.url = "set";
  o.connect_timeout_s = 2;
  o.first_byte_timeout_s = 5;
  o.idle_timeout_s = 5;
  o.request_timeout_s = 0.6;
  o.events_per_token = 1000;  // the deadline, not the event cap, is what ends these
  for (const RequestRecord& r : failed_level(
           [](int i) {
             std::this_thread::sleep_for(std::chrono::milliseconds(100));
             return i < 1000 ? chunk_event(0) : std::string();
           },
           o, 1))
    EXPECT_EQ(r.error.rfind("request deadline: not finished 0.6 s after it was sent", 0), 0u)
        << r.error;
  for (const RequestRecord& r : failed_level(
           [](int i) {
             std::this_thread::sleep_for(std::chrono::milliseconds(20));
             return i < 5000 ? std::string(": keep-alive\n\n") : std::string();
           },
           o, 1))
    EXPECT_EQ(r.error.rfind("request deadline", 0), 0u) << r.error;
  // The default deadline follows max_tokens: 300 s + 1 s per token.
  EXPECT_EQ(ClientOptions{}.request_timeout_s, 0);
}

// More chunks than max_tokens (8) can explain, sent as fast as the socket takes them: failed at
// 2 x 8 + 16 events, not held until memory runs out.
TEST(LoadHostile, MoreEventsThanMaxTokensFailTheRequest) {
  for (const RequestRecord& r :
       failed_level([](int i) { return i < 100000 ? chunk_event(i) : std::string(); }))
    EXPECT_EQ(r.error, "the server sent more than 32 events for max_tokens 8") << r.error;
}

// One SSE line that never ends: failed at the line cap, the connection closed.
TEST(LoadHostile, ALineWithoutANewlineIsCapped) {
  ClientOptions o;
  o.url = "set";
  o.connect_timeout_s = 2;
  o.first_byte_timeout_s = 5;
  o.idle_timeout_s = 5;
  o.max_line_bytes = 256 << 10;
  const std::string piece(64 << 10, 'a');
  for (const RequestRecord& r : failed_level(
           [&](int i) { return i < 100000 ? (i == 0 ? "data: " + piece : piece) : std::string(); },
           o))
    EXPECT_EQ(r.error, "malformed SSE: a line longer than 262144 bytes") << r.error;
}

TEST(LoadHostile, MalformedUsageFailsTheRequest) {
  for (const std::string& usage :
       {std::string(R"({"prompt_tokens": 4, "completion_tokens": -5})"),
        std::string(R"({"prompt_tokens": 4, "completion_tokens": 2147483653})"),
        std::string(R"({"prompt_tokens": -1, "completion_tokens": 2})"),
        std::string(R"({"prompt_tokens": 4, "completion_tokens": 1.5})"),
        std::string(R"([1, 2])")}) {
    const std::string tail = "data: {\"choices\": [], \"usage\": " + usage + "}\n\ndata: [DONE]\n\n";
    for (const RequestRecord& r : failed_level([&](int i) {
           return i == 0 ? chunk_event(0) : i == 1 ? tail : std::string();
         }, {}, 1))
      EXPECT_EQ(r.error.rfind("malformed usage: ", 0), 0u) << usage << ": " << r.error;
  }
}

TEST(LoadHostile, ServerMetricsAreCappedPerScrapeAndPerRun) {
  // Series beyond the cap are counted, not kept.
  ScrapeLog log;
  log.max_series = 10;
  std::string body;
  for (int i = 0; i < 100; ++i) body += "m{i=\"" + std::to_string(i) + "\"} 1\n";
  log.add(body, std::chrono::steady_clock::now());
  log.add(body, std::chrono::steady_clock::now());
  EXPECT_EQ(log.series.size(), 10u);
  EXPECT_EQ(log.samples.size(), 20u);
  EXPECT_EQ(log.dropped_samples, 180);
  // A /metrics answer over the size cap is dropped whole, its transfer cut.
  httplib::Server http;
  const std::string big(MetricsScraper::kMaxScrapeBytes + 4096, '#');
  http.Get("/metrics", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(big, "text/plain");
  });
  const int port = http.bind_to_any_port("127.0.0.1");
  std::thread t([&] { http.listen_after_bind(); });
  for (int i = 0; i < 500 && !http.is_running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const HttpResponse r =
      http_get("http://127.0.0.1:" + std::to_string(port) + "/metrics", 5,
               MetricsScraper::kMaxScrapeBytes);
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.error, "response larger than 8388608 bytes");
  EXPECT_TRUE(r.body.empty());
  {
    MetricsScraper scraper("http://127.0.0.1:" + std::to_string(port) + "/metrics", 5000, 100);
    const ScrapeLog got = scraper.stop();
    EXPECT_GE(got.oversize_scrapes, 1);
    EXPECT_EQ(got.oversize_scrapes, got.failed_scrapes);
    EXPECT_TRUE(got.series.empty());
  }
  http.stop();
  t.join();
}

}  // namespace
}  // namespace llmbench
