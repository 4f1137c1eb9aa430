// The load client against hostile servers (issue 42), on scripted loopback servers: whatever a
// server sends, each request ends (failed, with one clear reason), memory stays bounded, and
// the client neither crashes nor waits forever. Every server and wait is bounded in time.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "tests/load/scripted_server.h"
#include "tools/load/load_client.h"
#include "tools/load/load_driver.h"
#include "tools/load/load_plan.h"
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

}  // namespace
}  // namespace llmbench
