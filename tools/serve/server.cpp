// The HTTP side of `llmbench serve`: construction, routes and the small handlers (see
// server.h). The completion handlers' shared answer and SSE writer: server_answer.cpp.
#include "tools/serve/server.h"

#include <algorithm>
#include <csignal>
#include <ctime>
#include <thread>

#include <unistd.h>

#include "kernels/common/error.h"
#include "tools/serve/chat_request.h"
#include "tools/text/end_of_sequence.h"

namespace llmbench {

using json = nlohmann::json;

namespace {

// The OpenAI error type of an HTTP-layer refusal.
const char* error_type(int status) {
  switch (status) {
    case 404: return "not_found_error";
    case 429: return "rate_limit_error";
    case 503: return "service_unavailable";
    default: return status >= 500 ? "server_error" : "invalid_request_error";
  }
}

}  // namespace

Server::Server(const Model& model, const SchedulerOptions& scheduler, const ServeOptions& options)
    : model_(model), opt_(options),
      tokenizer_(options.tokenizer_file.empty()
                     ? Tokenizer(model.config().vocab_size)
                     : Tokenizer::from_file(options.tokenizer_file, model.config().vocab_size)),
      origin_(std::chrono::steady_clock::now()),
      request_ids_(std::uint64_t(origin_.time_since_epoch().count()) ^
                   (std::uint64_t(::getpid()) << 40)) {
  std::signal(SIGPIPE, SIG_IGN);  // belt and braces: every send already uses MSG_NOSIGNAL
  if (opt_.model_name.empty()) opt_.model_name = model.config().name;
  // A checkpoint's end-of-sequence ids (none for a preset), unless the caller chose them.
  SchedulerOptions sched = scheduler;
  if (sched.eos_token_ids.empty())
    sched.eos_token_ids = end_of_sequence_ids(opt_.model_root, tokenizer_,
                                              model.config().vocab_size);
  engine_ = std::make_unique<EngineLoop>(model, sched, opt_.max_waiting, origin_,
                                         opt_.omp_threads, opt_.trace, opt_.energy);
  HttpServerOptions h;
  h.host = opt_.host;
  h.port = opt_.port;
  h.worker_threads = std::max(1, opt_.http_threads);
  h.max_connections = std::max(1, opt_.max_connections);
  h.head_timeout = opt_.head_timeout;
  // Bodies are refused by what the context can hold before they are parsed into values (a
  // 65 MB list of 32 M ids would build a 1.4 GB tree only to be refused as too long): a token
  // is at most a few dozen bytes of JSON text (16 UTF-8 bytes, 6 each when escaped, and far
  // less as an id), and each token costs a handful of JSON values at most (a chat message is
  // an object of two strings and holds at least one token).
  const std::size_t context = std::size_t(std::max<std::int64_t>(1, engine_->options().max_len));
  max_body_values_ = 8 * context + 4096;
  h.max_body_bytes = std::min(opt_.max_body_bytes, context * 128 + (std::size_t(1) << 20));
  h.error_body = [](int status, const std::string& message) {
    return error_json(ApiError(status, message, error_type(status)));
  };
  http_ = std::make_unique<HttpServer>(std::move(h));
  routes();
}

Server::~Server() = default;

int Server::bind() { return http_->bind(); }

void Server::serve() {
  if (draining_) return;
  http_->run();
}

void Server::shutdown(std::chrono::milliseconds grace) {
  draining_ = true;  // new completions get 503 from here on
  auto wait_until = [&](std::chrono::steady_clock::time_point deadline) {
    while ((!engine_->idle() || active_handlers_ > 0) &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  };
  wait_until(std::chrono::steady_clock::now() + grace);
  engine_->abort_all();  // what is left ends as aborted
  wait_until(std::chrono::steady_clock::now() + std::chrono::seconds(2));
  http_->stop();  // serve() returns once the workers are done
}

void Server::routes() {
  using std::placeholders::_1;
  using std::placeholders::_2;
  HttpServer& s = *http_;
  const bool io_thread = true, prefix = true;
  s.route("GET", "/health", std::bind(&Server::handle_health, this, _1, _2), io_thread);
  s.route("GET", "/metrics", std::bind(&Server::handle_metrics, this, _1, _2), io_thread);
  s.route("GET", "/v1/models", std::bind(&Server::handle_models, this, _1, _2), io_thread);
  s.route("GET", "/v1/models/", std::bind(&Server::handle_model, this, _1, _2), io_thread,
          prefix);
  s.route("POST", "/v1/completions", std::bind(&Server::handle_completions, this, _1, _2));
  s.route("POST", "/v1/chat/completions", std::bind(&Server::handle_chat, this, _1, _2));
}

void Server::send_error(HttpReply& res, const ApiError& e, const HttpHeaders& extra) {
  res.send(e.status, "application/json", error_json(e), extra);
}

void Server::handle_health(const HttpRequest&, HttpReply& res) {
  if (draining_) res.send(503, "application/json", R"({"status":"shutting down"})");
  else res.send(200, "application/json", R"({"status":"ok"})");
}

json Server::model_json() const {
  return {{"id", opt_.model_name},
          {"object", "model"},
          {"created", std::int64_t(std::time(nullptr))},
          {"owned_by", "llmbench"},
          {"root", opt_.model_root.empty() ? opt_.model_name : opt_.model_root},
          {"parent", nullptr},
          {"max_model_len", engine_->options().max_len}};
}

void Server::handle_models(const HttpRequest&, HttpReply& res) {
  res.send(200, "application/json",
           dump_json({{"object", "list"}, {"data", json::array({model_json()})}}));
}

void Server::handle_model(const HttpRequest& req, HttpReply& res) {
  const std::string id = req.target.substr(std::string("/v1/models/").size());
  if (id != opt_.model_name) {
    send_error(res, ApiError(404, "the model '" + id + "' does not exist; this server serves '" +
                                      opt_.model_name + "'",
                             "not_found_error", "model"));
    return;
  }
  res.send(200, "application/json", dump_json(model_json()));
}

void Server::handle_metrics(const HttpRequest&, HttpReply& res) {
  res.send(200, "text/plain; version=0.0.4", metrics_text());
}

void Server::handle_completions(const HttpRequest& req, HttpReply& res) {
  const std::string request_id = request_ids_.accept(req.header("x-request-id"));
  res.add_header("X-Request-Id", request_id);
  try {
    answer(parse_completion_request(req.body, tokenizer_, max_body_values_), false, request_id,
           res);
  } catch (const ApiError& e) {
    send_error(res, e);
  }
}

void Server::handle_chat(const HttpRequest& req, HttpReply& res) {
  const std::string request_id = request_ids_.accept(req.header("x-request-id"));
  res.add_header("X-Request-Id", request_id);
  try {
    answer(parse_chat_request(req.body, opt_.chat_template ? &*opt_.chat_template : nullptr,
                              tokenizer_, max_body_values_),
           true, request_id, res);
  } catch (const ApiError& e) {
    send_error(res, e);
  }
}

std::string Server::metrics_text() const {
  const EngineCounters c = engine_->counters();
  std::string out;
  auto metric = [&](const char* name, const char* type, const char* help, auto value,
                    const char* labels = "") {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
    out += std::string(name) + labels + " " + std::to_string(value) + "\n";
  };
  metric("llmbench_requests_running", "gauge", "Requests holding KV blocks (prefilling or decoding).",
         c.running);
  metric("llmbench_requests_waiting", "gauge", "Requests queued, not yet admitted.", c.waiting);
  metric("llmbench_kv_blocks_used", "gauge", "KV cache blocks held by running requests.",
         c.kv_blocks_used);
  metric("llmbench_kv_blocks_total", "gauge", "KV cache blocks in the pool.", c.kv_blocks_total);
  metric("llmbench_kv_block_size", "gauge", "Positions per KV block.",
         engine_->options().block_size);
  metric("llmbench_kv_pool_bytes", "gauge", "Bytes of the KV pools (all layers, k and v).",
         c.kv_pool_bytes);
  metric("llmbench_prompt_tokens_total", "counter", "Prompt tokens run (prefill rows).",
         c.prompt_tokens_total);
  metric("llmbench_generation_tokens_total", "counter", "Tokens generated.",
         c.generation_tokens_total);
  metric("llmbench_prefix_cache_queries_total", "counter",
         "Prompt tokens looked up in the prefix cache (every admitted request's prompt).",
         c.prefix_query_tokens_total);
  metric("llmbench_prefix_cache_hits_total", "counter",
         "Prompt tokens found in the prefix cache (not prefilled).", c.prefix_hit_tokens_total);
  metric("llmbench_kv_blocks_cached", "gauge",
         "KV blocks holding a cached prefix (in use or kept for reuse).", c.kv_blocks_cached);
  out += "# HELP llmbench_requests_finished_total Requests finished, by finish reason.\n"
         "# TYPE llmbench_requests_finished_total counter\n";
  out += "llmbench_requests_finished_total{reason=\"length\"} " +
         std::to_string(c.finished_length) + "\n";
  out += "llmbench_requests_finished_total{reason=\"stop\"} " + std::to_string(c.finished_stop) +
         "\n";
  out += "llmbench_requests_finished_total{reason=\"abort\"} " +
         std::to_string(c.finished_abort) + "\n";
  metric("llmbench_engine_steps_total", "counter", "Engine steps run.", c.steps_total);
  metric("llmbench_engine_step_seconds_total", "counter",
         "Time in engine steps (scheduling, forward pass, bookkeeping).",
         double(c.step_ns_total) * 1e-9);
  metric("llmbench_engine_forward_seconds_total", "counter",
         "Time in the forward pass of engine steps.", double(c.forward_ns_total) * 1e-9);
  return out;
}

}  // namespace llmbench
