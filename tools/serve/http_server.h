// The HTTP/1.x server under `llmbench serve`: a listening socket, one event-driven I/O thread
// and a pool of worker threads. It replaces cpp-httplib's server, whose configuration could not
// give these guarantees (docs/serving.md, "What bad HTTP gets"):
// - The I/O thread reads every request head and body (non-blocking, poll) with a deadline for
//   the whole head that is not reset per byte (head_timeout from the request's first byte) and
//   one for the body, checked inside the read loop too; a client that dawdles or floods costs
//   a connection slot and a bounded buffer, never a worker thread or the I/O thread's time.
// - The I/O thread never waits on a socket: what it answers (refusals, /health, /metrics) goes
//   to the connection's output buffer, drained as the socket takes it (POLLOUT). While a
//   connection has output pending, its further (pipelined) requests wait unread; a connection
//   that takes none of it within write_timeout is closed.
// - At most max_connections connections carry requests. At the limit, a connection that has
//   sent nothing yet is shed (the oldest idle one) to admit the new one; failing that, up to
//   kReserveConnections more are admitted for the I/O-thread routes only (a completion on one
//   gets 503), so /health and /metrics always answer; beyond those, 503 (Retry-After), closed.
// - Routes marked `on_io_thread` (/health, /metrics: cheap, never blocking) are answered by the
//   I/O thread itself, so they answer while every worker is held by a long stream.
// - Other routes run on a worker; when it is done the connection returns to the I/O thread,
//   which parses the bytes that followed (pipelined requests are each answered, in order).
// - Every refusal of the HTTP layer (400, 404, 405, 408, 413, 414, 415, 431, 501, 503, 505)
//   carries the body `error_body` makes (an OpenAI-style JSON error in serve).
// - bind() does not set SO_REUSEPORT: a second server on a port in use fails to bind.
// Not here: what the routes do (server.h), request parsing (http_request.h).
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tools/serve/http_request.h"
#include "tools/serve/http_response.h"

namespace llmbench {

using HttpHandler = std::function<void(const HttpRequest&, HttpReply&)>;

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: an ephemeral port
  int worker_threads = 64;
  int max_connections = 256;
  std::size_t max_body_bytes = std::size_t(64) << 20;
  std::chrono::milliseconds idle_timeout{5000};   // a kept-alive connection with no request
  std::chrono::milliseconds head_timeout{10000};  // from a request's first byte to its last header
  std::chrono::milliseconds body_timeout{30000};  // from the end of the head to the end of the body
  std::chrono::milliseconds write_timeout{30000};  // a client that does not read
  // The body of an error response and its content type.
  std::function<std::string(int status, const std::string& message)> error_body;
  std::string error_content_type = "application/json";
};

class HttpServer {
 public:
  // Connections admitted beyond max_connections for the I/O-thread routes only.
  static constexpr int kReserveConnections = 16;

  explicit HttpServer(HttpServerOptions options);
  ~HttpServer();

  // Routes, before run(): an exact path, or (prefix = true) every path that starts with it.
  void route(const std::string& method, const std::string& path, HttpHandler handler,
             bool on_io_thread = false, bool prefix = false);

  // Opens the listening socket; returns the port. Throws BadInput naming the address when it
  // is in use or cannot be bound.
  int bind();
  // Serves until stop() (from any thread); returns when every worker is done.
  void run();
  void stop();

  // Connections open now (tests).
  int connections() const { return open_connections_; }

 private:
  struct Conn;
  struct Route {
    std::string method, path;
    HttpHandler handler;
    bool on_io_thread, prefix;
  };
  void accept_all(std::vector<std::unique_ptr<Conn>>& conns);
  void read_from(Conn& c);
  // Parses what the connection has buffered and answers or dispatches what is complete; stops
  // while the connection has output the socket has not taken.
  void advance(Conn& c, RequestReader::State s);
  void dispatch(Conn& c, HttpRequest req);
  // Writes what the socket takes now of the connection's output (never waits).
  void flush(Conn& c);
  // An error answer queued on the connection, which closes once it is written.
  void refuse(Conn& c, int status, const std::string& message, const HttpHeaders& extra = {});
  void worker();
  void wake();

  HttpServerOptions opt_;
  std::vector<Route> routes_;
  int listen_fd_ = -1;
  int wake_fds_[2] = {-1, -1};
  std::atomic<bool> stop_{false};
  std::atomic<int> open_connections_{0};
  std::vector<std::thread> workers_;
  std::mutex mu_;  // the two queues
  std::condition_variable cv_;
  struct Job {
    Conn* conn;
    HttpRequest request;
    const Route* route;
  };
  std::deque<Job> jobs_;
  std::vector<std::pair<Conn*, bool>> returned_;  // connection, keep it open
};

}  // namespace llmbench
