// The streaming client (libcurl multi) against scripted loopback servers: timestamps agree with
// the server's own send times, TTFT and ITL match a known script, the client's overhead is
// measured and printed, concurrency and rate levels start requests when due, and every fault
// (server down, HTTP 500, malformed SSE, a stream cut mid-way, a server that hangs before or
// during the stream, Ctrl-C) ends in per-request errors with a reason, within bounded time.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/load/scripted_server.h"
#include "tools/load/load_client.h"
#include "tools/load/load_driver.h"
#include "tools/load/load_metrics.h"
#include "tools/load/server_process.h"
#include "tools/store/sqlite_db.h"

namespace llmbench {
namespace {

using test::Behaviour;
using test::Script;
using test::ScriptedServer;
using namespace std::chrono_literals;

LevelDrive concurrency_level(int n, int concurrency, bool chat = false) {
  LevelDrive d;
  d.max_requests = n;
  d.concurrency = concurrency;
  d.make_body = [chat](int, RequestRecord& rec) {
    rec.input_len = 4;
    rec.max_tokens = 8;
    return request_body("scripted", chat, true, {16, 17, 18, 19}, 8, false, true);
  };
  return d;
}

ClientOptions client_options(const std::string& base, bool chat = false) {
  ClientOptions o;
  o.url = base + (chat ? "/v1/chat/completions" : "/v1/completions");
  o.chat = chat;
  o.keep_events = true;
  o.connect_timeout_s = 2;
  o.first_byte_timeout_s = 10;
  o.idle_timeout_s = 10;
  return o;
}

double pct(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::size_t(p / 100 * double(v.size() - 1) + 0.5)];
}

// First token after 200 ms, then one every 20 ms: the measured TTFT is 200 ms within 2% and
// within 1 ms of the server's first write, the ITLs are 20 ms within 1 ms (median; each gap
// within 1 ms of the server's own gap), every chunk's arrival stamp is within 1 ms of the
// server's write (the timestamp error: median under 0.5 ms, 95% under 1 ms), and the
// client's overhead on each path is printed.
//
// One attempt is 3 requests (0.8 s). On a machine whose two cores are busy with other work, a
// descheduled thread (the scripted server's sleep, or the client's) can move one attempt's
// figures by a few ms, so the test makes up to 3 attempts and passes on the first that meets
// every bound; a client that mis-stamps fails all three.
std::vector<std::string> timing_attempt() {
  std::vector<std::string> bad;
  const auto check = [&](bool ok, const std::string& what) {
    if (!ok) bad.push_back(what);
  };
  Script s;
  s.tokens = 10;
  s.first_delay = 200ms;
  s.gap = 20ms;
  ScriptedServer server(s);
  LoadClient client(client_options(server.url()));
  const LevelOutcome out = client.run(concurrency_level(3, 1));
  const std::vector<std::int64_t> received = server.received_ns();
  if (out.requests.size() != 3u || received.size() != 3u)
    return {"expected 3 requests, got " + std::to_string(out.requests.size())};
  const std::int64_t origin = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                  out.origin.time_since_epoch()).count();
  std::vector<double> stamp_error_ms, request_path_ms, itl_vs_server_ms;
  for (const RequestRecord& r : out.requests) {
    const std::string at = "request " + std::to_string(r.index) + ": ";
    if (!r.ok || r.chunks.size() != 10u) {
      bad.push_back(at + "failed or not 10 chunks: " + r.error);
      continue;
    }
    check(r.output_tokens == 10, at + "output_tokens " + std::to_string(r.output_tokens));
    check(r.prompt_tokens == 4,
          at + "prompt_tokens " +
              (r.prompt_tokens ? std::to_string(*r.prompt_tokens) : std::string("none")));
    const double ttft_ms = double(*r.ttft_ns()) / 1e6;
    check(std::abs(ttft_ms - 200.0) <= 200.0 * 0.02, at + "TTFT " + std::to_string(ttft_ms));
    // Against the script: the median gap (a late wake-up of the server's thread on a busy
    // machine moves single gaps; the comparison with the server's own stamps below is per gap).
    std::vector<double> gaps;
    for (std::size_t i = 1; i < r.chunks.size(); ++i)
      gaps.push_back(double(r.chunks[i].arrival_ns - r.chunks[i - 1].arrival_ns) / 1e6);
    check(std::abs(pct(gaps, 50) - 20.0) <= 1.0,
          at + "median ITL " + std::to_string(pct(gaps, 50)));
    const double tpot_ms = double(*r.tpot_ns()) / 1e6;
    check(std::abs(tpot_ms - 20.0) <= 1.0, at + "TPOT " + std::to_string(tpot_ms));
    // The server's write times, from the chunks themselves.
    std::vector<std::int64_t> sent;
    for (const SseEvent& e : r.events) {
      const auto j = nlohmann::json::parse(e.data, nullptr, false);
      if (j.is_object() && j.contains("t_ns")) {
        sent.push_back(j["t_ns"].get<std::int64_t>());
        stamp_error_ms.push_back(double(origin + e.arrival_ns - sent.back()) / 1e6);
      }
    }
    if (sent.size() != 10u) {
      bad.push_back(at + "server stamps in " + std::to_string(sent.size()) + " events, not 10");
      continue;
    }
    // TTFT against the truth: the server's first write, less the client's send stamp.
    const double truth_ms = double(sent[0] - (origin + r.send_ns)) / 1e6;
    check(std::abs(ttft_ms - truth_ms) <= 1.0,
          at + "TTFT " + std::to_string(ttft_ms) + " vs the server's " + std::to_string(truth_ms));
    for (std::size_t i = 1; i < sent.size(); ++i)
      itl_vs_server_ms.push_back(
          std::abs(double(r.chunks[i].arrival_ns - r.chunks[i - 1].arrival_ns) -
                   double(sent[i] - sent[i - 1])) / 1e6);
    request_path_ms.push_back(double(received[std::size_t(r.index)] - (origin + r.send_ns)) / 1e6);
  }
  if (!bad.empty() || stamp_error_ms.empty()) return bad;
  for (double e : stamp_error_ms) check(e >= 0.0, "an arrival stamped before the write");
  check(pct(stamp_error_ms, 50) < 0.5,
        "stamp error p50 " + std::to_string(pct(stamp_error_ms, 50)));
  check(pct(stamp_error_ms, 95) < 1.0,
        "stamp error p95 " + std::to_string(pct(stamp_error_ms, 95)));
  check(pct(itl_vs_server_ms, 95) < 1.0,
        "ITL vs the server's gaps p95 " + std::to_string(pct(itl_vs_server_ms, 95)));
  std::printf("client overhead: send stamp -> server handler p50 %.3f ms (max %.3f); server write "
              "-> arrival stamp p50 %.3f ms, p95 %.3f ms, max %.3f ms over %zu chunks\n",
              pct(request_path_ms, 50), pct(request_path_ms, 100), pct(stamp_error_ms, 50),
              pct(stamp_error_ms, 95), pct(stamp_error_ms, 100), stamp_error_ms.size());
  if (bad.empty()) {
    ::testing::Test::RecordProperty("response_path_p50_ms",
                                    std::to_string(pct(stamp_error_ms, 50)));
    ::testing::Test::RecordProperty("request_path_p50_ms",
                                    std::to_string(pct(request_path_ms, 50)));
  }
  return bad;
}

TEST(LoadClient, TimingMatchesAScriptedServer) {
  constexpr int kAttempts = 3;
  std::vector<std::string> bad;
  for (int a = 1; a <= kAttempts; ++a) {
    bad = timing_attempt();
    if (bad.empty()) break;
    std::printf("attempt %d of %d missed a bound: %s%s\n", a, kAttempts, bad.front().c_str(),
                bad.size() > 1 ? " (and more)" : "");
  }
  for (const std::string& b : bad) ADD_FAILURE() << b;
}

TEST(LoadClient, ConcurrencyLevelRunsEveryRequestWithUsage) {
  Script s;
  s.tokens = 5;
  ScriptedServer server(s);
  LoadClient client(client_options(server.url()));
  const LevelOutcome out = client.run(concurrency_level(200, 8));
  ASSERT_EQ(out.requests.size(), 200u);
  for (const RequestRecord& r : out.requests) {
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.output_tokens, 5);
    EXPECT_EQ(r.completion_tokens, 5);
    EXPECT_EQ(r.finish_reason, "length");
    EXPECT_EQ(r.http_status, 200);
    EXPECT_LE(r.send_ns, r.first_byte_ns);
    EXPECT_LE(r.first_byte_ns, r.first_token_ns);
    EXPECT_LE(r.first_token_ns, r.end_ns);
  }
  EXPECT_EQ(server.received_ns().size(), 200u);
  // At most 8 in flight: the 9th request starts only after one of the first 8 ended.
  std::vector<std::int64_t> ends;
  for (int i = 0; i < 8; ++i) ends.push_back(out.requests[std::size_t(i)].end_ns);
  EXPECT_GE(out.requests[8].send_ns, *std::min_element(ends.begin(), ends.end()));
}

TEST(LoadClient, RateLevelStartsRequestsWhenDue) {
  Script s;
  s.tokens = 2;
  ScriptedServer server(s);
  LoadClient client(client_options(server.url()));
  LevelDrive d = concurrency_level(20, 0);
  d.arrival_s = arrival_offsets_s(20, 50.0, 1.0, 9);
  const LevelOutcome out = client.run(d);
  ASSERT_EQ(out.requests.size(), 20u);
  std::vector<double> late_ms;
  for (const RequestRecord& r : out.requests) {
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.scheduled_ns, std::int64_t(d.arrival_s[std::size_t(r.index)] * 1e9));
    EXPECT_GE(r.send_ns, r.scheduled_ns);
    late_ms.push_back(double(r.send_ns - r.scheduled_ns) / 1e6);
  }
  // Started when due: the loop sleeps in whole ms and spins the last one.
  EXPECT_LT(pct(late_ms, 50), 0.5);
  EXPECT_LT(pct(late_ms, 100), 20.0);
}

TEST(LoadClient, ChatEndpointCountsDeltaChunks) {
  Script s;
  s.tokens = 6;
  ScriptedServer server(s);
  LoadClient client(client_options(server.url(), true));
  const LevelOutcome out = client.run(concurrency_level(4, 2, true));
  ASSERT_EQ(out.requests.size(), 4u);
  for (const RequestRecord& r : out.requests) {
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.chunks.size(), 6u);
  }
}

// Runs one level of 3 requests at concurrency 2 against `url` and returns the records, checking
// that the level ended within `limit`.
std::vector<RequestRecord> faulty_level(const std::string& url, ClientOptions o,
                                        std::chrono::milliseconds limit) {
  o.url = url + "/v1/completions";
  LoadClient client(o);
  const auto t0 = std::chrono::steady_clock::now();
  const LevelOutcome out = client.run(concurrency_level(3, 2));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, limit);
  EXPECT_EQ(out.requests.size(), 3u);
  EXPECT_FALSE(out.interrupted);
  for (const RequestRecord& r : out.requests) {
    EXPECT_FALSE(r.ok);
    EXPECT_GE(r.end_ns, r.send_ns);
    EXPECT_FALSE(r.ttft_ns());
  }
  return out.requests;
}

bool starts(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

TEST(LoadFaults, ServerDown) {
  const std::string url = "http://127.0.0.1:" + std::to_string(pick_free_port());
  for (const RequestRecord& r : faulty_level(url, client_options(""), 5s)) {
    EXPECT_TRUE(starts(r.error, "connect failed: ")) << r.error;
    EXPECT_EQ(r.http_status, 0);
  }
}

TEST(LoadFaults, Http500) {
  ScriptedServer server(Script{.behaviour = Behaviour::kStatus500});
  for (const RequestRecord& r : faulty_level(server.url(), client_options(""), 5s)) {
    EXPECT_EQ(r.error, "HTTP 500: scripted failure");
    EXPECT_EQ(r.http_status, 500);
  }
}

TEST(LoadFaults, MalformedSse) {
  ScriptedServer server(Script{.behaviour = Behaviour::kMalformed});
  for (const RequestRecord& r : faulty_level(server.url(), client_options(""), 5s)) {
    EXPECT_TRUE(starts(r.error, "malformed SSE: event is not a JSON object: '{oops'")) << r.error;
    EXPECT_EQ(r.http_status, 200);
  }
}

TEST(LoadFaults, StreamCutMidway) {
  ScriptedServer server(Script{.behaviour = Behaviour::kCutMidway, .tokens = 8, .cut_after = 3});
  for (const RequestRecord& r : faulty_level(server.url(), client_options(""), 5s)) {
    EXPECT_TRUE(starts(r.error, "stream cut off after 3 events: ")) << r.error;
    EXPECT_EQ(r.chunks.size(), 3u);  // what arrived is kept
  }
}

TEST(LoadFaults, SlowServerPastTheFirstByteTimeout) {
  ScriptedServer server(Script{.behaviour = Behaviour::kSlowHeaders, .slow_s = 1.5});
  ClientOptions o = client_options("");
  o.first_byte_timeout_s = 0.3;
  const auto requests = faulty_level(server.url(), o, 3s);
  for (const RequestRecord& r : requests) {
    EXPECT_EQ(r.error, "first-byte timeout: no response body within 0.3 s");
    EXPECT_NEAR(double(r.end_ns - r.send_ns) / 1e9, 0.3, 0.05);
  }
  server.stop();
}

// Headers at once, the first token late (a long queue): the first-byte timeout applies, not
// the shorter idle one.
TEST(LoadFaults, LateFirstTokenAfterEarlyHeadersIsAFirstByteTimeout) {
  ScriptedServer server(Script{.tokens = 3, .first_delay = 1500ms});
  ClientOptions o = client_options("");
  o.first_byte_timeout_s = 0.5;
  o.idle_timeout_s = 0.2;
  for (const RequestRecord& r : faulty_level(server.url(), o, 3s)) {
    EXPECT_EQ(r.error, "first-byte timeout: no response body within 0.5 s");
    EXPECT_EQ(r.http_status, 200);
    EXPECT_GE(r.first_byte_ns, r.send_ns);  // the headers came
  }
  server.stop();
}

TEST(LoadFaults, StreamStallsPastTheIdleTimeout) {
  ScriptedServer server(
      Script{.behaviour = Behaviour::kStallMidway, .tokens = 6, .cut_after = 2, .slow_s = 1.5});
  ClientOptions o = client_options("");
  o.idle_timeout_s = 0.3;
  for (const RequestRecord& r : faulty_level(server.url(), o, 3s)) {
    EXPECT_EQ(r.error, "idle timeout: no data for 0.3 s after 2 events");
    EXPECT_EQ(r.chunks.size(), 2u);
  }
  server.stop();
}

TEST(LoadFaults, InterruptAbortsInFlightRequests) {
  ScriptedServer server(Script{.tokens = 50, .first_delay = 10ms, .gap = 50ms});
  LoadClient client(client_options(server.url()));
  LevelDrive d = concurrency_level(10, 2);
  const auto t0 = std::chrono::steady_clock::now();
  d.should_stop = [t0] { return std::chrono::steady_clock::now() - t0 > 200ms; };
  const LevelOutcome out = client.run(d);
  EXPECT_TRUE(out.interrupted);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
  ASSERT_EQ(out.requests.size(), 2u);
  for (const RequestRecord& r : out.requests) EXPECT_EQ(r.error, "interrupted");
  server.stop();
}

// The driver end to end on scripted servers: a server that refuses token-id prompts gets
// synthetic text (said on stderr, stored as prompt_kind 'text'), and the chat endpoint works
// (prompt_kind 'chat').
TEST(LoadDriver, TextPromptsWhenTheServerRefusesTokenIdsAndTheChatEndpoint) {
  const std::string dir = std::string(LLMBENCH_TEST_SCRATCH) + "/load_driver";
  std::filesystem::create_directories(dir);
  const std::string db = dir + "/driver.db";
  std::filesystem::remove(db);
  {
    ScriptedServer server(Script{.tokens = 3, .reject_token_ids = true});
    LoadOptions o;
    o.url = server.url();
    o.model = "scripted";
    o.concurrency = "2";
    o.num_requests = 4;
    o.db = db;
    o.quiet = true;
    EXPECT_EQ(run_load(o, "test"), 0);
  }
  {
    ScriptedServer server(Script{.tokens = 3});
    LoadOptions o;
    o.url = server.url();
    o.model = "scripted";
    o.endpoint = "chat";
    o.num_requests = 2;
    o.db = db;
    o.quiet = true;
    o.label = "chat";
    EXPECT_EQ(run_load(o, "test"), 0);
  }
  Db d(db, Db::Mode::kReadOnly);
  auto q = d.prepare("SELECT r.prompt_kind, r.endpoint, COUNT(*), SUM(q.status = 'ok'),"
                     " SUM(q.output_tokens) FROM load_run r JOIN load_level l ON l.load_run_id = r.id"
                     " JOIN load_request q ON q.level_id = l.id GROUP BY r.id ORDER BY r.id");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.column_text(0), "text");
  EXPECT_EQ(q.column_text(1), "completions");
  EXPECT_EQ(q.column_int(2), 4);
  EXPECT_EQ(q.column_int(3), 4);
  EXPECT_EQ(q.column_int(4), 12);
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.column_text(0), "chat");  // the prompt kind of a chat run is chat messages
  EXPECT_EQ(q.column_text(1), "chat");
  EXPECT_EQ(q.column_int(3), 2);
}

}  // namespace
}  // namespace llmbench
