// `llmbench serve` against the hostile peers of issue 42, over raw loopback sockets (in-process
// server, ephemeral port; every loop bounded in count and time, no timing assertions): nested
// JSON, pipelined requests that are never read, a chunk with no CRLF after its data, endless
// empty lines and trailers, an idle flood, framing headers that disagree (RFC 9112 6.3), bodies
// too big for the context, and a database lock held by another process.
#include <fcntl.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>

#include "tests/serve/raw_client.h"
#include "tests/serve/serve_fixture.h"
#include "tools/serve/serve_store.h"

namespace llmbench::test {
namespace {

std::string post(const std::string& path, const std::string& body,
                 const std::string& extra_headers = "") {
  return "POST " + path + " HTTP/1.1\r\nContent-Type: application/json\r\n" + extra_headers +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

// Sends as much of `bytes` as the socket takes within `limit` (the server may stop reading or
// close: both are fine); returns the bytes sent.
std::size_t push(int fd, const std::string& bytes, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::size_t at = 0;
  while (at < bytes.size() && std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, 20) <= 0) continue;
    if (p.revents & (POLLERR | POLLHUP)) break;
    const ssize_t n = ::send(fd, bytes.data() + at, bytes.size() - at, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n <= 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) continue;
      break;
    }
    at += std::size_t(n);
  }
  return at;
}

// /health answers 200 on a fresh connection (the client's own timeouts bound the wait).
void expect_health(httplib::Client cli) {
  cli.set_read_timeout(5);
  auto res = cli.Get("/health");
  ASSERT_TRUE(res) << "no answer to /health";
  EXPECT_EQ(res->status, 200);
}

TEST_F(ServeTest, DeeplyNestedValuesAreRefusedWithAShortMessage) {
  start(tiny());
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  for (const char* field : {"temperature", "top_p", "n", "logprobs"}) {
    for (const char* path : {"/v1/completions", "/v1/chat/completions"}) {
      const std::string head = std::string(path) == "/v1/completions"
                                   ? R"({"prompt": "a", ")"
                                   : R"({"messages": [{"role": "user", "content": "a"}], ")";
      Raw c(port_);
      c.send(post(path, head + field + "\": " + deep + "}"));
      const std::string r = c.read(std::chrono::seconds(5), "}}");
      const auto [status, body] = status_and_json(r);
      EXPECT_EQ(status, 400) << field << " " << path << ": " << r.substr(0, 200);
      ASSERT_TRUE(body.is_object()) << r.substr(0, 200);
      const std::string msg = body["error"]["message"];
      EXPECT_NE(msg.find("nested deeper than 64 levels"), std::string::npos) << msg;
      EXPECT_LT(msg.size(), 300u) << msg;
    }
  }
  // Shallow but long values are named by type and size, never dumped whole.
  Raw c(port_);
  std::string list = "[";
  for (int i = 0; i < 2000; ++i) list += "[1],";
  list += "1]";
  c.send(post("/v1/completions", R"({"prompt": "a", "temperature": )" + list + "}"));
  const auto [status, body] = status_and_json(c.read(std::chrono::seconds(5), "}}"));
  EXPECT_EQ(status, 400);
  const std::string msg = body.is_object() ? body["error"]["message"].get<std::string>() : "";
  EXPECT_NE(msg.find("array of 2001 elements"), std::string::npos) << msg;
  EXPECT_LT(msg.size(), 300u) << msg;
  expect_health(client());
}

// 30 connections that pipeline GET /metrics without reading: each answer waits in its
// connection's buffer (and the connection stops being read), never on the I/O thread.
TEST_F(ServeTest, PipelinedAnswersNobodyReadsDoNotFreezeHealth) {
  start(tiny());
  std::string many;
  for (int i = 0; i < 4000; ++i) many += "GET /metrics HTTP/1.1\r\n\r\n";
  std::vector<std::unique_ptr<Raw>> hogs;
  for (int i = 0; i < 30; ++i) {
    hogs.push_back(std::make_unique<Raw>(port_));
    int buf = 4096;
    ::setsockopt(hogs.back()->fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
    push(hogs.back()->fd, many, std::chrono::milliseconds(100));
  }
  for (int i = 0; i < 3; ++i) expect_health(client());
  auto m = client().Get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->status, 200);
}

// Chunk data not followed by CRLF is refused at the two bytes that should have been CRLF, not
// rescanned on every read while megabytes arrive.
TEST_F(ServeTest, AChunkWithoutItsCrlfIsRefusedAtOnce) {
  start(tiny());
  Raw c(port_);
  c.send("POST /v1/completions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello");
  push(c.fd, std::string(8 << 20, 'x'), std::chrono::seconds(2));
  const auto [status, body] = status_and_json(c.read(std::chrono::seconds(5), "}}"));
  EXPECT_EQ(status, 400);
  EXPECT_NE(body.dump().find("data longer than its size"), std::string::npos) << body.dump();
  expect_health(client());
}

TEST_F(ServeTest, EmptyLinesAndTrailersCountAgainstTheHeadLimit) {
  start(tiny());
  {
    Raw c(port_);
    push(c.fd, std::string(20 << 20, '\n'), std::chrono::seconds(2));
    const auto [status, body] = status_and_json(c.read(std::chrono::seconds(5), "}}"));
    EXPECT_EQ(status, 400);
    EXPECT_NE(body.dump().find("empty lines before the request line"), std::string::npos)
        << body.dump();
  }
  {
    Raw c(port_);
    c.send("POST /v1/completions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n");
    std::string trailers;
    for (int i = 0; i < 200000; ++i) trailers += "X-T: 1\r\n";
    push(c.fd, trailers, std::chrono::seconds(2));
    const auto [status, body] = status_and_json(c.read(std::chrono::seconds(5), "}}"));
    EXPECT_EQ(status, 431);
    EXPECT_NE(body.dump().find("trailers are longer than"), std::string::npos) << body.dump();
  }
  expect_health(client());
}

// 8 + the reserve connections that never send a byte: a newcomer sheds the oldest of them, so
// nobody is locked out.
TEST_F(ServeTest, IdleConnectionsAreShedForNewcomers) {
  ServeOptions opt;
  opt.max_connections = 8;
  start(tiny(), {}, opt);
  std::vector<std::unique_ptr<Raw>> idle;
  for (int i = 0; i < 8 + HttpServer::kReserveConnections + 8; ++i)
    idle.push_back(std::make_unique<Raw>(port_));
  for (int i = 0; i < 3; ++i) expect_health(client());
  auto done = client().Post("/v1/completions", R"({"prompt": [1, 2], "max_tokens": 2})",
                            "application/json");
  ASSERT_TRUE(done);
  EXPECT_EQ(done->status, 200);
  // The oldest idle ones were closed (the server has no more than its limit open).
  int closed = 0;
  for (auto& c : idle) {
    pollfd p{c->fd, POLLIN, 0};
    if (::poll(&p, 1, 0) > 0) {
      char b;
      if (::recv(c->fd, &b, 1, MSG_DONTWAIT) == 0) ++closed;
    }
  }
  EXPECT_GE(closed, 8) << "idle connections shed";
}

TEST_F(ServeTest, FramingHeadersThatDisagreeAreRefused) {
  start(tiny());
  const std::string body = R"({"prompt": [1], "max_tokens": 1})";
  const std::string n = std::to_string(body.size());
  for (const std::string& headers :
       {"Content-Length: " + n + "\r\nContent-Length: " + std::to_string(body.size() + 1) + "\r\n",
        "Content-Length: " + n + ", " + std::to_string(body.size() + 1) + "\r\n",
        "Transfer-Encoding: chunked\r\nContent-Length: " + n + "\r\n",
        "Content-Length: " + n + "\r\nTransfer-Encoding: chunked\r\n"}) {
    Raw c(port_);
    c.send("POST /v1/completions HTTP/1.1\r\n" + headers + "\r\n" + body);
    const std::string r = c.read(std::chrono::seconds(5), "}}");
    EXPECT_EQ(status_and_json(r).first, 400) << headers << r.substr(0, 200);
  }
  // The same length twice is one length.
  Raw c(port_);
  c.send("POST /v1/completions HTTP/1.1\r\nContent-Length: " + n + "\r\nContent-Length: " + n +
         "\r\n\r\n" + body);
  EXPECT_EQ(status_and_json(c.read(std::chrono::seconds(10), "}}")).first, 200);
}

// Bodies are refused by the context they would need before they become JSON values: the
// byte limit follows the context length, and the values are counted before the parse.
TEST_F(ServeTest, BodiesBeyondWhatTheContextCanHoldAreRefusedUnparsed) {
  start(tiny());  // a 256-position context
  {
    Raw c(port_);
    c.send("POST /v1/completions HTTP/1.1\r\nContent-Length: 65000000\r\n\r\n");
    const auto [status, body] = status_and_json(c.read(std::chrono::seconds(5), "}}"));
    EXPECT_EQ(status, 413) << body.dump();
  }
  std::string ids = R"({"prompt": [)";
  for (int i = 0; i < 100000; ++i) ids += "1,";
  ids += "1]}";
  Raw c(port_);
  c.send(post("/v1/completions", ids));
  const auto [status, body] = status_and_json(c.read(std::chrono::seconds(5), "}}"));
  EXPECT_EQ(status, 400);
  EXPECT_NE(body.dump().find("refused before parsing"), std::string::npos) << body.dump();
}

TEST_F(ServeTest, OutOfRangeTopKAndUnsupportedOutputShapesAre400NamingTheField) {
  start(tiny());
  for (const auto& [body, field] : std::vector<std::pair<std::string, std::string>>{
           {R"({"prompt": [1], "top_k": 4294967297})", "top_k"},
           {R"({"prompt": [1], "top_k": 4294967296})", "top_k"},
           {R"({"prompt": [1], "tools": [{"type": "function", "function": {"name": "f"}}]})",
            "tools"},
           {R"({"prompt": [1], "response_format": {"type": "json_object"}})", "response_format"}}) {
    auto res = client().Post("/v1/completions", body, "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 400) << body;
    const json j = json::parse(res->body, nullptr, false);
    EXPECT_EQ(j["error"]["param"], field) << res->body;
  }
  auto ok = client().Post("/v1/completions",
                          R"({"prompt": [1], "max_tokens": 1, "response_format": {"type": "text"}})",
                          "application/json");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200) << ok->body;
}

// Another process holds the write lock: storing is retried, the backlog is bounded and what
// did not fit is counted, and rows are stored again once the lock is released.
TEST(ServeStoreLock, ALockHeldElsewhereDelaysStoringAndDropsOnlyBeyondTheBacklog) {
  std::filesystem::create_directories(LLMBENCH_TEST_SCRATCH);
  const std::string path = std::string(LLMBENCH_TEST_SCRATCH) + "/serve_lock.db";
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  ServeStore store(path, std::chrono::milliseconds(30), /*max_backlog_rows=*/10,
                   /*busy_timeout=*/std::chrono::milliseconds(20));
  store.begin_session(ServeSessionInfo{});
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  ServedRequest r;
  for (int i = 0; i < 4; ++i) {
    r.id = RequestId(i + 1);
    store.on_request(r);
  }
  // Bounded wait until a commit has failed.
  for (int i = 0; i < 200 && !store.totals().failed; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(store.totals().failed);
  for (int i = 4; i < 30; ++i) {
    r.id = RequestId(i + 1);
    store.on_request(r);
  }
  EXPECT_EQ(store.totals().dropped, 20);
  sqlite3_exec(other, "COMMIT", nullptr, nullptr, nullptr);
  for (int i = 0; i < 300 && store.totals().failed; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(store.totals().failed);
  r.id = RequestId(100);
  store.on_request(r);
  store.close();
  EXPECT_EQ(store.totals().requests, 11);
  EXPECT_EQ(store.totals().dropped, 20);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(other, "SELECT count(*) FROM serve_request", -1, &st, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(st, 0), 11);
  sqlite3_finalize(st);
  sqlite3_close(other);
}

}  // namespace
}  // namespace llmbench::test
