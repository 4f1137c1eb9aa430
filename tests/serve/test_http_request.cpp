// The HTTP request reader without sockets: heads, Content-Length and chunked bodies fed byte
// by byte and all at once, pipelined requests, and every limit and refusal with its status.
#include <gtest/gtest.h>

#include "tools/serve/http_request.h"

namespace llmbench {
namespace {

using State = RequestReader::State;

// Feeds `bytes` in pieces of `step` bytes; returns the last state (continuing past kHeadDone).
State feed_all(RequestReader& r, const std::string& bytes, std::size_t step) {
  State s = State::kNeedMore;
  for (std::size_t at = 0; at < bytes.size(); at += step) {
    s = r.feed(bytes.data() + at, std::min(step, bytes.size() - at));
    while (s == State::kHeadDone) s = r.feed();
    if (s == State::kComplete || s == State::kError) return s;
  }
  return s;
}

TEST(HttpRequest, ParsesContentLengthBodiesInAnyPieces) {
  const std::string req =
      "POST /v1/completions?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n"
      "X-Case: Mixed\r\n\r\nhello";
  for (std::size_t step : {std::size_t(1), std::size_t(7), req.size()}) {
    RequestReader r(1024);
    ASSERT_EQ(feed_all(r, req, step), State::kComplete) << step;
    const HttpRequest h = r.take();
    EXPECT_EQ(h.method, "POST");
    EXPECT_EQ(h.target, "/v1/completions");
    EXPECT_EQ(h.query, "x=1");
    EXPECT_EQ(h.body, "hello");
    EXPECT_EQ(h.header("x-case"), "Mixed");
    EXPECT_TRUE(h.keep_alive);
    EXPECT_EQ(r.buffered(), 0u);
  }
}

TEST(HttpRequest, DecodesChunkedBodiesWithExtensionsAndTrailers) {
  const std::string req =
      "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
      "3;ext=1\r\nabc\r\nA\r\n0123456789\r\n0\r\nTrailer: x\r\n\r\n";
  for (std::size_t step : {std::size_t(1), std::size_t(5), req.size()}) {
    RequestReader r(1024);
    ASSERT_EQ(feed_all(r, req, step), State::kComplete) << step;
    EXPECT_EQ(r.take().body, "abc0123456789");
  }
}

TEST(HttpRequest, PipelinedRequestsComeOutInOrder) {
  RequestReader r(1024);
  const std::string two = "GET /a HTTP/1.1\r\n\r\nPOST /b HTTP/1.1\r\nContent-Length: 2\r\n\r\nok"
                          "GET /c HTTP/1.0\r\n\r\n";
  ASSERT_EQ(r.feed(two.data(), two.size()), State::kComplete);
  EXPECT_EQ(r.take().target, "/a");
  State s = r.feed();
  while (s == State::kHeadDone) s = r.feed();
  ASSERT_EQ(s, State::kComplete);
  const HttpRequest b = r.take();
  EXPECT_EQ(b.target, "/b");
  EXPECT_EQ(b.body, "ok");
  ASSERT_EQ(r.feed(), State::kComplete);
  const HttpRequest c = r.take();
  EXPECT_EQ(c.target, "/c");
  EXPECT_EQ(c.minor_version, 0);
  EXPECT_FALSE(c.keep_alive);  // HTTP/1.0 without "Connection: keep-alive"
  EXPECT_EQ(r.feed(), State::kNeedMore);
}

TEST(HttpRequest, ExpectContinueIsSeenAtTheEndOfTheHead) {
  RequestReader r(1024);
  const std::string head = "POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n";
  ASSERT_EQ(r.feed(head.data(), head.size()), State::kHeadDone);
  EXPECT_TRUE(r.head().expect_continue);
  EXPECT_EQ(r.feed(), State::kNeedMore);
  EXPECT_EQ(r.feed("abc", 3), State::kComplete);
}

// The status a request gets refused with (0 if it is accepted).
int refusal(const std::string& bytes, std::size_t max_body = 1024) {
  RequestReader r(max_body);
  const State s = feed_all(r, bytes, bytes.size());
  return s == State::kError ? r.error_status() : 0;
}

TEST(HttpRequest, RefusesWhatBreaksTheLimits) {
  EXPECT_EQ(refusal("GET / HTTP/1.1\r\n\r\n"), 0);
  EXPECT_EQ(refusal("\x16\x03\x01\x02 garbage\r\n\r\n"), 400);  // a TLS hello, say
  EXPECT_EQ(refusal("hello\r\n"), 400);
  EXPECT_EQ(refusal("GET / HTTP/2.0\r\n\r\n"), 505);
  EXPECT_EQ(refusal("GET /" + std::string(9000, 'a') + " HTTP/1.1\r\n\r\n"), 414);
  EXPECT_EQ(refusal("GET /" + std::string(9000, 'a')), 414);  // before the line ends
  EXPECT_EQ(refusal("GET / HTTP/1.1\r\nX: " + std::string(20000, 'a') + "\r\n\r\n"), 431);
  EXPECT_EQ(refusal("GET / HTTP/1.1\r\nno colon\r\n\r\n"), 400);
  EXPECT_EQ(refusal("POST / HTTP/1.1\r\nContent-Length: 2000\r\n\r\n"), 413);
  EXPECT_EQ(refusal("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n"), 400);
  EXPECT_EQ(refusal("POST / HTTP/1.1\r\nContent-Encoding: gzip\r\nContent-Length: 1\r\n\r\nx"),
            415);
  EXPECT_EQ(refusal("POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n"), 501);
  EXPECT_EQ(refusal("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n"),
            400);
  EXPECT_EQ(refusal("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"), 400);
  EXPECT_EQ(refusal("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n"), 400);
  // Chunked bodies are capped like Content-Length ones, counted over all chunks.
  std::string big = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 3; ++i) big += "200\r\n" + std::string(512, 'x') + "\r\n";
  EXPECT_EQ(refusal(big + "0\r\n\r\n"), 413);
  EXPECT_EQ(refusal(big + "0\r\n\r\n", 4096), 0);
}

// RFC 9112 3.2: an origin-form path, an absolute-form URL (the path is what routes), or "*"
// for OPTIONS; anything else, or a target with control or non-ASCII bytes, is 400 (found by
// coverage-guided fuzzing: "POST ?v1/completions" used to route an empty path).
TEST(HttpRequest, TargetIsAPathAnAbsoluteUrlOrAnAsteriskForOptions) {
  const auto target_of = [](const std::string& target, const std::string& method = "GET") {
    RequestReader r(64);
    const State s = feed_all(r, method + " " + target + " HTTP/1.1\r\n\r\n", 3);
    if (s != State::kComplete) return "refused " + std::to_string(r.error_status());
    const HttpRequest h = r.take();
    return h.target + (h.query.empty() ? "" : "?" + h.query);
  };
  EXPECT_EQ(target_of("/v1/models?x=1"), "/v1/models?x=1");
  EXPECT_EQ(target_of("http://127.0.0.1:8000/v1/models?x=1"), "/v1/models?x=1");
  EXPECT_EQ(target_of("HTTP://h/health"), "/health");
  EXPECT_EQ(target_of("http://h"), "/");
  EXPECT_EQ(target_of("*", "OPTIONS"), "*");
  for (const char* bad : {"?v1/completions", "v1/models", "*", "http:///x", "http://h?q=1",
                          "ftp://h/x", "/a\x01b", "/caf\xc3\xa9", "/a\x7f"})
    EXPECT_EQ(target_of(bad), "refused 400") << bad;
}

}  // namespace
}  // namespace llmbench
