// `llmbench serve`: an OpenAI-compatible HTTP server over the continuous-batching engine
// (its own HTTP/1.x layer, http_server.h). Endpoints (docs/serving.md):
//   POST /v1/completions        completions (greedy or sampled, sampling_params.h), JSON or
//                               server-sent events (stream: true)
//   POST /v1/chat/completions   the same for `messages`, rendered with the chat template
//   GET  /v1/models, /v1/models/{id}   the one served model
//   GET  /health                200 while serving, 503 while shutting down
//   GET  /metrics               Prometheus text: running / waiting requests, KV blocks, tokens
// /health and /metrics are answered on the HTTP I/O thread (they never wait for a worker);
// completions run on a worker that waits on the request's stream from the engine thread
// (engine_loop.h). A client that disconnects mid-stream is cancelled and its blocks freed at
// the next step boundary. shutdown() stops accepting (new completions get 503, /health 503),
// lets in-flight requests finish for a grace period, aborts the rest (an aborted stream ends
// with an error event and [DONE]), and only then stops the HTTP server.
// Not here: loading the model or the CLI (tools/cli/cmd_serve.cpp).
#pragma once
#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include <optional>

#include "engine/model/model.h"
#include "engine/serving/scheduler.h"
#include "tools/serve/completion_output.h"
#include "tools/serve/completion_request.h"
#include "tools/serve/completion_response.h"
#include "tools/serve/engine_loop.h"
#include "tools/serve/http_server.h"
#include "tools/serve/request_id.h"
#include "tools/text/chat_template.h"
#include "tools/text/tokenizer.h"

namespace llmbench {

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8000;               // 0: an ephemeral port (bind() says which)
  std::string model_name;        // what /v1/models lists and requests may name
  // /v1/models' `root`: the model it serves (the --model preset or checkpoint directory); ""
  // means model_name. vLLM's clients read it (`vllm bench serve` without --model).
  std::string model_root;
  int max_waiting = 256;         // queued requests beyond this get 429
  int http_threads = 64;         // worker threads: completions answered at once
  int max_connections = 256;     // open connections; one more is answered 503
  std::chrono::milliseconds head_timeout{10000};  // a request head must arrive within this
  // Larger bodies get 413; the server lowers it to what its context length can need.
  std::size_t max_body_bytes = std::size_t(64) << 20;
  int omp_threads = 0;           // the engine thread's OpenMP threads (0: the runtime's default)
  TraceLevel trace = TraceLevel::kOff;  // --trace steps|ops: engine steps and ops to the log
  // A tokenizer.json or tokenizer.model for text prompts ("": the byte-level mapping;
  // tools/text/tokenizer.h).
  std::string tokenizer_file;
  // The chat template (nullopt: /v1/chat/completions answers 400 saying how to choose one).
  std::optional<ChatTemplate> chat_template;
  // serve --backend cuda with NVML: the board's energy counter, read around spans of engine
  // steps (engine/bench/energy.h; nullptr: not metered). It must outlive the server.
  const EnergyMeter* energy = nullptr;
};

class Server {
 public:
  Server(const Model& model, const SchedulerOptions& scheduler, const ServeOptions& options);
  ~Server();

  // Binds the listening socket; returns the port. Throws BadInput naming the address when
  // it cannot (in use, not local).
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
  // Route handlers.
  void handle_health(const HttpRequest& req, HttpReply& res);
  void handle_models(const HttpRequest& req, HttpReply& res);
  void handle_model(const HttpRequest& req, HttpReply& res);
  void handle_metrics(const HttpRequest& req, HttpReply& res);
  void handle_completions(const HttpRequest& req, HttpReply& res);
  void handle_chat(const HttpRequest& req, HttpReply& res);
  // Shared by both completion APIs (server_answer.cpp): checks, queues and answers a parsed
  // request, whole or as server-sent events.
  // `request_id`: the X-Request-Id it is served under (request_id.h).
  void answer(CompletionRequest r, bool chat, const std::string& request_id, HttpReply& res);
  void answer_whole(RequestId id, RequestStream& stream, const ResponseShape& shape,
                    CompletionOutput& out, HttpReply& res);
  // The one SSE writer: token chunks as the engine produces them, then usage and [DONE].
  void answer_stream(RequestId id, RequestStream& stream, const ResponseShape& shape,
                     CompletionOutput& out, bool include_usage, HttpReply& res);
  void send_error(HttpReply& res, const ApiError& e, const HttpHeaders& extra = {});
  nlohmann::json model_json() const;

  const Model& model_;
  ServeOptions opt_;
  Tokenizer tokenizer_;
  std::chrono::steady_clock::time_point origin_;
  std::unique_ptr<EngineLoop> engine_;
  std::unique_ptr<HttpServer> http_;
  std::atomic<bool> draining_{false};
  std::atomic<int> active_handlers_{0};  // completions being answered (streams until released)
  std::atomic<std::uint64_t> completion_ids_{0};
  RequestIds request_ids_;
  std::size_t max_body_values_ = 0;  // JSON values a body may hold (from the context length)
};

}  // namespace llmbench
