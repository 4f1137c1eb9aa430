// A scripted OpenAI-compatible streaming server for the load generator's tests and bench
// (cpp-httplib on 127.0.0.1, an ephemeral port, TCP_NODELAY): POST /v1/completions and
// /v1/chat/completions answer by the `Script` the test sets, stamping each chunk it writes with
// the steady_clock time of the write ("t_ns"), so a test can compare the client's arrival
// stamps with the true send times. Every sleep is bounded; stop() ends it.
#pragma once
#include <httplib.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace llmbench::test {

enum class Behaviour {
  kStream,        // first chunk after first_delay, then one every gap; usage; [DONE]
  kStatus500,     // HTTP 500 with an OpenAI error object
  kMalformed,     // 200, one valid chunk, then a data: line that is not JSON, then [DONE]
  kCutMidway,     // 200, `cut_after` chunks, then the connection is dropped
  kSlowHeaders,   // nothing for `slow_s` seconds (a hung server), then a normal stream
  kStallMidway,   // `cut_after` chunks, then silence for `slow_s` seconds, then the rest
  kRaw,           // 200, then raw(0), raw(1), ... written as they come until one is empty
};

struct Script {
  Behaviour behaviour = Behaviour::kStream;
  int tokens = 8;
  std::chrono::microseconds first_delay{0}, gap{0};
  int cut_after = 2;
  double slow_s = 1.0;
  bool reject_token_ids = false;  // answer 400 to a prompt of token ids (text only)
  // kRaw: the i-th piece of the body (any bytes at all; "" ends the response). Called from the
  // server's threads; pieces are written with no pacing beyond what the generator does.
  std::function<std::string(int i)> raw;
};

inline std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

class ScriptedServer {
 public:
  explicit ScriptedServer(Script s, int threads = 16) : script_(s) {
    http_.set_tcp_nodelay(true);
    http_.new_task_queue = [threads] { return new httplib::ThreadPool(std::size_t(threads)); };
    auto handler = [this](const httplib::Request& req, httplib::Response& res) {
      handle(req, res, req.path == "/v1/chat/completions");
    };
    http_.Post("/v1/completions", handler);
    http_.Post("/v1/chat/completions", handler);
    http_.Get("/health", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("{\"status\":\"ok\"}", "application/json");
    });
    // cpp-httplib listens with a backlog of 5 (compiled into Debian's libcpp-httplib): a burst
    // of more simultaneous connects loses SYNs, retried by the kernel after 1 s. Keep the
    // listening socket and raise its backlog after bind (Linux updates it on a second listen).
    http_.set_socket_options([this](socket_t sock) {
      httplib::default_socket_options(sock);
      listen_fd_ = sock;
    });
    port_ = http_.bind_to_any_port("127.0.0.1");
    if (listen_fd_ >= 0) ::listen(listen_fd_, 4096);
    thread_ = std::thread([this] { http_.listen_after_bind(); });
    for (int i = 0; i < 500 && !http_.is_running(); ++i)  // bounded: 5 s
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ~ScriptedServer() { stop(); }
  void stop() {
    if (thread_.joinable()) {
      stopping_ = true;
      http_.stop();
      thread_.join();
    }
  }
  int port() const { return port_; }
  // One request per connection: with a small thread pool the requests then queue for the
  // server's threads (a server over capacity) instead of one client connection holding a thread
  // through its keep-alive wait. Call before the first request.
  void close_after_each_request() { http_.set_keep_alive_max_count(1); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // Steady-clock time each request's handler started, in arrival order.
  std::vector<std::int64_t> received_ns() {
    std::lock_guard lock(mu_);
    return received_;
  }
  // The body of each request, in arrival order (probes included).
  std::vector<std::string> received_bodies() {
    std::lock_guard lock(mu_);
    return bodies_;
  }

 private:
  static std::string chunk(int i, bool chat, bool last, std::int64_t t_ns) {
    nlohmann::json c;
    if (chat)
      c = {{"index", 0}, {"delta", {{"content", "x"}}}};
    else
      c = {{"index", 0}, {"text", "x"}, {"token_ids", {100 + i}}};
    c["finish_reason"] = last ? nlohmann::json("length") : nlohmann::json(nullptr);
    return "data: " + nlohmann::json{{"choices", {c}}, {"t_ns", t_ns}}.dump() + "\n\n";
  }

  // Sleeps in small steps so stop() is never held up for long.
  void sleep_for(std::chrono::microseconds d) {
    const auto end = std::chrono::steady_clock::now() + d;
    while (!stopping_ && std::chrono::steady_clock::now() < end)
      std::this_thread::sleep_for(std::min<std::chrono::microseconds>(
          d, std::chrono::microseconds(20000)));
  }
  // Sleeps until an absolute steady time (drift-free pacing of the chunks).
  void sleep_until(std::int64_t t_ns) {
    while (!stopping_) {
      const std::int64_t left = t_ns - steady_ns();
      if (left <= 0) return;
      std::this_thread::sleep_for(std::chrono::nanoseconds(std::min<std::int64_t>(left, 20'000'000)));
    }
  }

  void handle(const httplib::Request& req, httplib::Response& res, bool chat) {
    const std::int64_t t0 = steady_ns();
    {
      std::lock_guard lock(mu_);
      received_.push_back(t0);
      bodies_.push_back(req.body);
    }
    const Script s = script_;
    if (s.behaviour == Behaviour::kStatus500) {
      res.status = 500;
      res.set_content(R"({"error":{"message":"scripted failure","type":"server_error"}})",
                      "application/json");
      return;
    }
    const auto body = nlohmann::json::parse(req.body, nullptr, false);
    if (s.reject_token_ids && body.is_object() && body.contains("prompt") &&
        body["prompt"].is_array()) {
      res.status = 400;
      res.set_content(R"({"error":{"message":"prompt must be a string","type":"invalid_request_error"}})",
                      "application/json");
      return;
    }
    // A probe (stream: false) gets a plain completion.
    if (body.is_object() && body.value("stream", false) == false) {
      res.set_content(R"({"choices":[{"index":0,"text":"x","finish_reason":"length"}],"usage":{"prompt_tokens":4,"completion_tokens":1,"total_tokens":5}})",
                      "application/json");
      return;
    }
    if (s.behaviour == Behaviour::kSlowHeaders)
      sleep_for(std::chrono::microseconds(std::int64_t(s.slow_s * 1e6)));
    res.set_chunked_content_provider(
        "text/event-stream", [this, s, chat, t0, i = 0](std::size_t, httplib::DataSink& sink) mutable {
          if (stopping_) return false;
          if (s.behaviour == Behaviour::kRaw) {
            const std::string piece = s.raw(i++);
            if (piece.empty()) {
              sink.done();
              return true;
            }
            return sink.write(piece.data(), piece.size());
          }
          if (s.behaviour == Behaviour::kMalformed) {
            const std::string out = chunk(0, chat, false, steady_ns()) + "data: {oops\n\n" +
                                    "data: [DONE]\n\n";
            sink.write(out.data(), out.size());
            sink.done();
            return true;
          }
          if ((s.behaviour == Behaviour::kCutMidway) && i == s.cut_after) return false;
          if (s.behaviour == Behaviour::kStallMidway && i == s.cut_after)
            sleep_for(std::chrono::microseconds(std::int64_t(s.slow_s * 1e6)));
          if (i < s.tokens) {
            sleep_until(t0 + std::chrono::nanoseconds(s.first_delay).count() +
                        std::int64_t(i) * std::chrono::nanoseconds(s.gap).count());
            const std::string out = chunk(i, chat, i + 1 == s.tokens, steady_ns());
            ++i;
            return sink.write(out.data(), out.size());
          }
          const std::string tail =
              "data: " +
              nlohmann::json{{"choices", nlohmann::json::array()},
                             {"usage", {{"prompt_tokens", 4}, {"completion_tokens", s.tokens},
                                        {"total_tokens", 4 + s.tokens}}}}
                  .dump() +
              "\n\ndata: [DONE]\n\n";
          sink.write(tail.data(), tail.size());
          sink.done();
          return true;
        });
  }

  Script script_;
  httplib::Server http_;
  int port_ = 0;
  int listen_fd_ = -1;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::vector<std::int64_t> received_;
  std::vector<std::string> bodies_;
};

}  // namespace llmbench::test
