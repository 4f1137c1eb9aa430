// `llmbench serve`: an OpenAI-compatible HTTP server over the continuous-batching engine
// (cpp-httplib, Debian libcpp-httplib-dev). Endpoints (docs/serving.md):
//   POST /v1/completions   greedy completions, JSON or server-sent events (stream: true)
//   GET  /v1/models        the one served model
//   GET  /health           200 while serving, 503 while shutting down
//   GET  /metrics          Prometheus text: running / waiting requests, KV blocks, tokens, steps
// One engine thread (engine_loop.h) runs the steps; each HTTP request waits on its own stream.
// A client that disconnects mid-stream is cancelled and its blocks freed at the next step
// boundary. shutdown() stops accepting (new completions get 503, /health 503), lets in-flight
// requests finish for a grace period, aborts the rest (their streams end with finish_reason
// "abort" and [DONE]), and only then closes the listening socket: cpp-httplib ends every
// chunked response at once when its server stops, so closing first would cut streams.
// Writing to a closed socket must not kill the process: constructing a Server ignores SIGPIPE
// (process-wide).
// Not here: loading the model or the CLI (tools/cli/cmd_serve.cpp).
#pragma once
#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "engine/model/model.h"
#include "engine/serving/scheduler.h"
#include "tools/serve/engine_loop.h"
#include "tools/serve/tokenizer.h"

namespace httplib {
class Server;
}

namespace llmbench {

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8000;               // 0: an ephemeral port (bind() says which)
  std::string model_name;        // what /v1/models lists and requests may name
  int max_waiting = 256;         // queued requests beyond this get 429
  int http_threads = 64;         // concurrent connections served
  int omp_threads = 0;           // the engine thread's OpenMP threads (0: the runtime's default)
  // A SentencePiece tokenizer.model for text prompts ("": the byte-level mapping; tokenizer.h).
  std::string tokenizer_model;
};

class Server {
 public:
  Server(const Model& model, const SchedulerOptions& scheduler, const ServeOptions& options);
  ~Server();

  // Binds the listening socket; returns the port. Throws Error when it cannot.
  int bind();
  // Serves until shutdown(); call from one thread after bind().
  void serve();
  // From any thread: stop accepting (new completions get 503), wait up to `grace` for
  // in-flight requests, abort what is left, and wait (bounded) until serve() can return.
  void shutdown(std::chrono::milliseconds grace);

  EngineLoop& engine() { return *engine_; }
  const Tokenizer& tokenizer() const { return tokenizer_; }
  std::chrono::steady_clock::time_point origin() const { return origin_; }
  // The Prometheus text of /metrics.
  std::string metrics_text() const;

 private:
  void routes();

  const Model& model_;
  ServeOptions opt_;
  Tokenizer tokenizer_;
  std::chrono::steady_clock::time_point origin_;
  std::unique_ptr<EngineLoop> engine_;
  std::unique_ptr<httplib::Server> http_;
  std::atomic<bool> draining_{false};
  std::atomic<int> active_handlers_{0};  // completions being answered (streams until released)
  std::atomic<std::uint64_t> completion_ids_{0};
};

}  // namespace llmbench
