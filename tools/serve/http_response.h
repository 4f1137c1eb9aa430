// One HTTP/1.x response written to a connection's socket: either whole (send) or streamed
// (start_stream, write..., end_stream). A stream to an HTTP/1.1 client is chunked; to an
// HTTP/1.0 client, which cannot read chunked framing, it is the raw bytes and the connection
// closes at its end (RFC 9112 6.3: the body ends where the connection does).
// On a worker thread every write waits at most the write timeout for a client that does not
// read, and never raises SIGPIPE (MSG_NOSIGNAL). On the server's I/O thread a reply is built into
// the connection's output buffer instead (the sink constructor), which the I/O thread drains as
// the socket takes it: the I/O thread never waits on one client.
// Not here: reading requests or routing (http_server.h).
#pragma once
#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace llmbench {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

// "OK", "Not Found", ... ("Unknown" for a status without a phrase here).
const char* http_reason(int status);

class HttpReply {
 public:
  // `fd` is non-blocking and stays owned by the server.
  HttpReply(int fd, int minor_version, bool keep_alive, std::chrono::milliseconds write_timeout);
  // A reply appended to `sink` (the connection's output buffer) and never written here.
  HttpReply(std::string* sink, int minor_version, bool keep_alive);

  // A whole response with Content-Length. False when the client could not take it.
  bool send(int status, std::string_view content_type, std::string_view body,
            const HttpHeaders& extra = {});
  // The head of a streamed response; false when the client is gone.
  bool start_stream(int status, std::string_view content_type, const HttpHeaders& extra = {});
  // One piece of a stream (one chunk on HTTP/1.1); false when the client is gone.
  bool write(std::string_view data);
  // Ends a stream (the last chunk on HTTP/1.1).
  bool end_stream();
  // A header every later response head of this reply carries (X-Request-Id), beside `extra`.
  void add_header(std::string name, std::string value) {
    always_.emplace_back(std::move(name), std::move(value));
  }
  // The client closed or reset its side (checked without blocking).
  bool client_gone() const;

  bool started() const { return started_; }
  // The connection may carry another request after this response.
  bool keep_alive() const { return keep_alive_ && !broken_; }

 private:
  bool write_all(std::string_view data);
  std::string head(int status, std::string_view content_type, const HttpHeaders& extra) const;

  int fd_;
  std::string* sink_ = nullptr;
  int minor_version_;
  bool keep_alive_;
  std::chrono::milliseconds write_timeout_;
  bool started_ = false, streaming_ = false, broken_ = false;
  HttpHeaders always_;
};

}  // namespace llmbench
