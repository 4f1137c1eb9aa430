// The HTTP server's I/O loop and workers (see http_server.h).
#include "tools/serve/http_server.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "kernels/common/error.h"

namespace llmbench {

using Clock = std::chrono::steady_clock;

struct HttpServer::Conn {
  explicit Conn(int fd, std::size_t max_body) : fd(fd), reader(max_body) {}
  ~Conn() { ::close(fd); }
  int fd;
  RequestReader reader;
  Clock::time_point deadline;        // of the head, body or idle wait now running
  Clock::time_point write_deadline;  // output pending must be taken by then
  Clock::time_point opened;
  std::string out;           // answered by the I/O thread, not yet taken by the socket
  std::size_t out_at = 0;    // written up to here
  bool busy = false;     // a worker has it
  bool in_head = false;  // a request's bytes have started arriving
  bool closing = false;  // close once `out` is written
  bool reserve = false;  // admitted beyond max_connections: I/O-thread routes only
  bool served = false;   // it has sent a whole request
  bool pending() const { return out_at < out.size(); }
  // Connected and never sent a byte of a request: the connection to shed first.
  bool idle() const { return !served && !busy && !closing && !pending() && !reader.started(); }
};

namespace {

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

}  // namespace

HttpServer::HttpServer(HttpServerOptions options) : opt_(std::move(options)) {
  if (!opt_.error_body)
    opt_.error_body = [](int, const std::string& m) { return m + "\n"; };
  if (::pipe2(wake_fds_, O_NONBLOCK | O_CLOEXEC) != 0) throw Error("serve: pipe2 failed");
}

HttpServer::~HttpServer() {
  stop();
  for (std::thread& t : workers_)
    if (t.joinable()) t.join();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  ::close(wake_fds_[0]);
  ::close(wake_fds_[1]);
}

void HttpServer::route(const std::string& method, const std::string& path, HttpHandler handler,
                       bool on_io_thread, bool prefix) {
  routes_.push_back(Route{method, path, std::move(handler), on_io_thread, prefix});
}

int HttpServer::bind() {
  const std::string where = opt_.host + ":" + std::to_string(opt_.port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  const int rc = ::getaddrinfo(opt_.host.c_str(), std::to_string(opt_.port).c_str(), &hints, &res);
  if (rc != 0) throw BadInput("--host: cannot resolve '" + opt_.host + "': " + gai_strerror(rc));
  std::string why = "no address";
  for (addrinfo* a = res; a && listen_fd_ < 0; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    // SO_REUSEADDR only rebinds a port whose old connections linger in TIME_WAIT; unlike
    // SO_REUSEPORT it never lets two listening sockets share a port.
    int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 1024) == 0) {
      listen_fd_ = fd;
    } else {
      why = errno == EADDRINUSE ? "the address is already in use" : std::strerror(errno);
      ::close(fd);
    }
  }
  ::freeaddrinfo(res);
  if (listen_fd_ < 0) throw BadInput("--port: cannot listen on " + where + ": " + why);
  set_nonblocking(listen_fd_);
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  return addr.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port)
                                    : ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
}

void HttpServer::stop() {
  stop_ = true;
  wake();
  cv_.notify_all();
}

void HttpServer::wake() {
  const char b = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_fds_[1], &b, 1);
}

void HttpServer::refuse(Conn& c, int status, const std::string& message,
                        const HttpHeaders& extra) {
  HttpReply res(&c.out, 1, false);
  res.send(status, opt_.error_content_type, opt_.error_body(status, message), extra);
  c.closing = true;
  flush(c);
}

void HttpServer::flush(Conn& c) {
  if (!c.pending()) return;
  while (c.pending()) {
    const ssize_t n = ::send(c.fd, c.out.data() + c.out_at, c.out.size() - c.out_at,
                             MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      c.out_at += std::size_t(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      // The rest waits for POLLOUT; the deadline runs from the first byte the socket refused.
      if (c.write_deadline == Clock::time_point{}) c.write_deadline = Clock::now() + opt_.write_timeout;
      return;
    }
    // The client is gone: nothing more can be answered on this connection.
    c.out.clear();
    c.out_at = 0;
    c.closing = true;
    return;
  }
  c.out.clear();
  c.out_at = 0;
  c.write_deadline = Clock::time_point{};
}

void HttpServer::accept_all(std::vector<std::unique_ptr<Conn>>& conns) {
  for (;;) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    // Each streamed token is a small write: without TCP_NODELAY one written while the previous
    // is unacknowledged waits for the client's delayed ACK (40 ms on Linux).
    int yes = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
    bool reserve = false;
    // Connections being closed still hold their socket until the end of this turn of the loop
    // (the loop holds pointers to them), but no longer a slot.
    const int live = int(std::count_if(conns.begin(), conns.end(),
                                       [](const auto& c) { return !c->closing; }));
    if (live >= opt_.max_connections) {
      // Shed the oldest connection that has sent nothing (a client holding slots idle), so an
      // idle flood cannot lock everyone out.
      Conn* oldest = nullptr;
      for (auto& c : conns)
        if (c->idle() && (!oldest || c->opened < oldest->opened)) oldest = c.get();
      if (oldest) {
        oldest->closing = true;
      } else if (live < opt_.max_connections + kReserveConnections) {
        reserve = true;
      } else {
        // One attempt that cannot block: a 503 is a courtesy, the close is the answer.
        std::string out;
        HttpReply res(&out, 1, false);
        res.send(503, opt_.error_content_type,
                 opt_.error_body(503, "too many connections (" +
                                          std::to_string(opt_.max_connections) +
                                          "); retry later"),
                 {{"Retry-After", "1"}});
        [[maybe_unused]] const ssize_t n =
            ::send(fd, out.data(), out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        ::close(fd);
        continue;
      }
    }
    auto c = std::make_unique<Conn>(fd, opt_.max_body_bytes);
    c->opened = Clock::now();
    c->deadline = c->opened + opt_.head_timeout;
    c->in_head = true;  // a new connection has head_timeout for its first request
    c->reserve = reserve;
    conns.push_back(std::move(c));
    open_connections_ = int(conns.size());
  }
}

void HttpServer::read_from(Conn& c) {
  // At most this much per connection per turn of the loop, so one fast sender cannot hold the
  // I/O thread while other connections wait; the rest is read on the next turn.
  constexpr std::size_t kTurnBytes = std::size_t(1) << 20;
  char buf[16384];
  std::size_t taken = 0;
  while (taken < kTurnBytes) {
    const ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
    if (n > 0) {
      taken += std::size_t(n);
      const auto now = Clock::now();
      if (!c.in_head) {
        c.in_head = true;  // the head deadline runs from the request's first byte, once
        c.deadline = now + opt_.head_timeout;
      }
      advance(c, c.reader.feed(buf, std::size_t(n)));
      if (c.busy || c.closing || c.pending()) return;
      // Deadlines hold inside the loop too: a client that keeps bytes coming is not excused.
      if (now >= c.deadline) return;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) c.closing = true;
    return;
  }
}

void HttpServer::advance(Conn& c, RequestReader::State s) {
  for (;;) {
    switch (s) {
      case RequestReader::State::kNeedMore:
        return;
      case RequestReader::State::kError:
        refuse(c, c.reader.error_status(), c.reader.error_message());
        return;
      case RequestReader::State::kHeadDone:
        c.deadline = Clock::now() + opt_.body_timeout;
        if (c.reader.head().expect_continue && c.reader.buffered() == 0 &&
            c.reader.head().minor_version == 1) {
          c.out += "HTTP/1.1 100 Continue\r\n\r\n";
          flush(c);
        }
        s = c.reader.feed();
        break;
      case RequestReader::State::kComplete:
        dispatch(c, c.reader.take());
        if (c.busy || c.closing || c.pending()) return;
        c.in_head = c.reader.buffered() > 0;
        c.deadline = Clock::now() + (c.in_head ? opt_.head_timeout : opt_.idle_timeout);
        s = c.reader.feed();
        break;
    }
  }
}

void HttpServer::dispatch(Conn& c, HttpRequest req) {
  c.served = true;
  const Route* found = nullptr;
  bool path_known = false;
  for (const Route& r : routes_) {
    const bool match = r.prefix ? req.target.rfind(r.path, 0) == 0 && req.target.size() > r.path.size()
                                : req.target == r.path;
    if (!match) continue;
    path_known = true;
    if (r.method == req.method) {
      found = &r;
      break;
    }
  }
  if (!found || found->on_io_thread || c.reserve) {
    // Answered here, into the output buffer.
    HttpReply res(&c.out, req.minor_version, req.keep_alive);
    if (!found && path_known)
      res.send(405, opt_.error_content_type,
               opt_.error_body(405, "method " + req.method + " is not allowed on " + req.target));
    else if (!found)
      res.send(404, opt_.error_content_type,
               opt_.error_body(404, "no route " + req.method + " " + req.target));
    else if (!found->on_io_thread)  // a reserve connection: /health and /metrics only
      res.send(503, opt_.error_content_type,
               opt_.error_body(503, "too many connections (" +
                                        std::to_string(opt_.max_connections) + "); retry later"),
               {{"Retry-After", "1"}});
    else
      found->handler(req, res);
    c.closing = !res.keep_alive();
    flush(c);
    return;
  }
  // A worker writes to the socket itself: nothing of ours may be pending before it.
  c.busy = true;
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(Job{&c, std::move(req), found});
  }
  cv_.notify_one();
}

void HttpServer::worker() {
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopping, nothing left
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    HttpReply res(job.conn->fd, job.request.minor_version, job.request.keep_alive,
                     opt_.write_timeout);
    try {
      job.route->handler(job.request, res);
      if (!res.started()) res.send(500, opt_.error_content_type,
                                   opt_.error_body(500, "the handler sent no response"));
    } catch (const std::exception& e) {
      if (!res.started()) res.send(500, opt_.error_content_type, opt_.error_body(500, e.what()));
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      returned_.emplace_back(job.conn, res.keep_alive());
    }
    wake();
  }
}

void HttpServer::run() {
  for (int i = 0; i < std::max(1, opt_.worker_threads); ++i)
    workers_.emplace_back([this] { worker(); });
  std::vector<std::unique_ptr<Conn>> conns;
  std::vector<pollfd> fds;
  std::vector<Conn*> polled;
  while (!stop_) {
    fds.assign({pollfd{wake_fds_[0], POLLIN, 0}, pollfd{listen_fd_, POLLIN, 0}});
    polled.clear();
    auto next_deadline = Clock::now() + std::chrono::seconds(1);
    for (auto& c : conns) {
      if (c->busy) continue;
      // Output pending: wait until the socket takes it, and read nothing more meanwhile.
      fds.push_back(pollfd{c->fd, short(c->pending() ? POLLOUT : POLLIN), 0});
      polled.push_back(c.get());
      next_deadline = std::min(next_deadline, c->pending() ? c->write_deadline : c->deadline);
    }
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(
                          next_deadline - Clock::now()).count();
    ::poll(fds.data(), fds.size(), int(std::clamp<std::int64_t>(wait + 1, 0, 1000)));
    if (stop_) break;
    if (fds[0].revents & POLLIN) {
      char drain[256];
      while (::read(wake_fds_[0], drain, sizeof drain) > 0) {
      }
      std::vector<std::pair<Conn*, bool>> back;
      {
        std::lock_guard<std::mutex> lock(mu_);
        back.swap(returned_);
      }
      for (auto [c, keep] : back) {
        c->busy = false;
        c->closing = !keep;
        if (!keep) continue;
        // Bytes that followed the request are the next, pipelined, request.
        c->in_head = c->reader.buffered() > 0;
        c->deadline = Clock::now() + (c->in_head ? opt_.head_timeout : opt_.idle_timeout);
        advance(*c, c->reader.feed());
      }
    }
    if (fds[1].revents & POLLIN) accept_all(conns);
    const auto now = Clock::now();
    for (std::size_t i = 0; i < polled.size(); ++i) {
      Conn& c = *polled[i];
      if (c.busy) continue;
      const short ev = fds[i + 2].revents;
      if (c.pending()) {
        if (ev & (POLLOUT | POLLHUP | POLLERR)) flush(c);
        if (c.pending() && now >= c.write_deadline) {
          c.closing = true;  // it took none of its answer for write_timeout
          c.out.clear();
          c.out_at = 0;
        }
        // Written out: carry on with what it had sent after (pipelined requests).
        if (!c.pending() && !c.closing) advance(c, c.reader.feed());
        continue;
      }
      if (c.closing) continue;
      if (ev & (POLLIN | POLLHUP | POLLERR)) read_from(c);
      if (!c.busy && !c.closing && !c.pending() && now >= c.deadline) {
        // A request that started and did not finish in time gets 408; an idle kept-alive
        // connection is just closed.
        if (c.reader.started())
          refuse(c, 408, "the request was not received in time (head within " +
                             std::to_string(opt_.head_timeout.count() / 1000) +
                             " s, body within " +
                             std::to_string(opt_.body_timeout.count() / 1000) + " s)");
        c.closing = true;
      }
    }
    conns.erase(std::remove_if(conns.begin(), conns.end(),
                               [](const auto& c) {
                                 return c->closing && !c->busy && !c->pending();
                               }),
                conns.end());
    open_connections_ = int(conns.size());
  }
  // Stopping: cut connections still held by workers (their writes fail at once), let the
  // workers finish, then close everything.
  for (auto& c : conns)
    if (c->busy) ::shutdown(c->fd, SHUT_RDWR);
  cv_.notify_all();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
  conns.clear();
  open_connections_ = 0;
  ::close(listen_fd_);
  listen_fd_ = -1;
}

}  // namespace llmbench
