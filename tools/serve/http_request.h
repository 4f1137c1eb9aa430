// One HTTP/1.x request read from a connection's bytes, incrementally, with every limit a server
// facing careless or hostile clients needs (docs/serving.md, "What bad HTTP gets"):
//   request line   METHOD SP TARGET SP HTTP/1.0|HTTP/1.1; anything else is 400 (garbage),
//                  505 (another version); a target over kMaxTargetBytes is 414; a target
//                  other than /path, http://host/path (routed by its path) or "*" (OPTIONS)
//                  is 400, as is one with control or non-ASCII bytes
//   head           request line + headers at most kMaxHeadBytes (431 beyond)
//   body           Content-Length or Transfer-Encoding: chunked, both capped at max_body_bytes
//                  (413); a malformed chunk size is 400; a Content-Encoding other than identity
//                  is 415; a Transfer-Encoding other than chunked is 501; both framings, or
//                  Content-Length values that differ, is 400 (RFC 9112 6.3); empty lines
//                  before the request line and chunked trailers count against the head limit;
//                  every scan is bounded and resumes nowhere twice (linear in the bytes)
// Bytes after a complete request stay in the reader: they are the next (pipelined) request.
// Not here: sockets, deadlines or responses (http_server.h).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace llmbench {

struct HttpRequest {
  std::string method;  // as sent: "GET", "POST", ...
  std::string target;  // the path, without the query string
  std::string query;   // after '?', if any
  int minor_version = 1;  // HTTP/1.minor
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased, in order
  std::string body;        // decoded (chunked framing removed)
  bool keep_alive = true;  // HTTP/1.1 unless "Connection: close"; 1.0 only with "keep-alive"
  bool expect_continue = false;  // "Expect: 100-continue"

  // The value of header `lower_name`, or "" when absent.
  std::string_view header(std::string_view lower_name) const;
};

class RequestReader {
 public:
  static constexpr std::size_t kMaxTargetBytes = 8192;
  static constexpr std::size_t kMaxHeadBytes = 16384;
  static constexpr std::size_t kMaxChunkLineBytes = 1024;

  enum class State { kNeedMore, kHeadDone, kComplete, kError };

  explicit RequestReader(std::size_t max_body_bytes) : max_body_bytes_(max_body_bytes) {}

  // Appends bytes from the connection and parses as far as they go. kHeadDone is returned once,
  // when the head is complete and a body is still to come (the moment to answer
  // "Expect: 100-continue"); call feed() again at once, as body bytes may be buffered already.
  // Then kNeedMore until kComplete or kError.
  State feed(const char* data, std::size_t n);
  // Parses what is already buffered (after take(), for a pipelined request).
  State feed() { return feed(nullptr, 0); }

  // After kHeadDone: the head read so far (method, target, headers; no body yet).
  const HttpRequest& head() const { return req_; }
  // After kComplete: the request; the reader starts over on the bytes that followed it.
  HttpRequest take();
  // After kError: the status to answer (400, 413, 414, 415, 431, 501, 505) and why.
  int error_status() const { return error_status_; }
  const std::string& error_message() const { return error_message_; }
  // Bytes buffered and not yet part of a finished request (0: the connection is between
  // requests).
  std::size_t buffered() const { return buf_.size() - pos_; }
  // A request has started arriving (some of its bytes are here).
  bool started() const { return stage_ != Stage::kHead || buffered() > 0; }

 private:
  enum class Stage { kHead, kBody, kChunkSize, kChunkData, kChunkEnd, kTrailers, kDone };
  State fail(int status, std::string message);
  State parse_head();
  // After the headers: how the body is framed (Content-Length, chunked, none) and its checks.
  State body_framing();
  State parse_body();
  // The next line (without CR LF) from pos_, or false when no whole line is within the first
  // max_bytes buffered.
  bool next_line(std::string_view& line, std::size_t max_bytes);

  std::size_t max_body_bytes_;
  std::string buf_;
  std::size_t pos_ = 0;  // parsed up to here
  Stage stage_ = Stage::kHead;
  HttpRequest req_;
  std::size_t remaining_ = 0;  // body or chunk bytes still to read
  std::size_t leading_bytes_ = 0;  // empty lines before this request's line (head limit)
  std::size_t trailer_bytes_ = 0;  // chunked trailers read (head limit)
  int error_status_ = 0;
  std::string error_message_;
};

}  // namespace llmbench
