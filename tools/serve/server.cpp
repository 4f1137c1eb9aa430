// The HTTP side of `llmbench serve` (see server.h).
#include "tools/serve/server.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <sys/socket.h>

#include <csignal>
#include <ctime>
#include <nlohmann/json.hpp>
#include <thread>

#include "kernels/common/error.h"
#include "tools/serve/completion_request.h"

namespace llmbench {

using json = nlohmann::json;

namespace {

constexpr auto kPoll = std::chrono::milliseconds(50);  // how often a waiting handler wakes

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

void send_error(httplib::Response& res, const ApiError& e) {
  res.status = e.status;
  res.set_content(error_json(e), "application/json");
}

std::int64_t unix_seconds() { return std::int64_t(std::time(nullptr)); }

json usage_json(int prompt_tokens, int completion_tokens) {
  return {{"prompt_tokens", prompt_tokens},
          {"completion_tokens", completion_tokens},
          {"total_tokens", prompt_tokens + completion_tokens}};
}

json finish_json(FinishReason r) {
  return r == FinishReason::kNone ? json(nullptr) : json(std::string(finish_reason_name(r)));
}

// Which parameter an engine-side refusal is about (for the error object's "param").
std::string param_of(const std::string& message) {
  return message.find("max_tokens") != std::string::npos ? "max_tokens" : "prompt";
}

// One streamed request's state, shared by the content provider and its releaser.
struct StreamState {
  RequestId id = 0;
  std::shared_ptr<RequestStream> stream;
  std::string completion_id;
  std::int64_t created = 0;
  bool include_usage = false;
  int prompt_tokens = 0, completion_tokens = 0;
  bool finished = false;  // the engine is done with it (nothing to cancel)
  bool done = false;      // [DONE] written
};

}  // namespace

Server::Server(const Model& model, const SchedulerOptions& scheduler, const ServeOptions& options)
    : model_(model), opt_(options),
      tokenizer_(options.tokenizer_model.empty()
                     ? Tokenizer(model.config().vocab_size)
                     : Tokenizer::sentencepiece(options.tokenizer_model,
                                                model.config().vocab_size)),
      origin_(std::chrono::steady_clock::now()) {
  std::signal(SIGPIPE, SIG_IGN);  // a client that goes away must not kill the server
  if (opt_.model_name.empty()) opt_.model_name = model.config().name;
  engine_ = std::make_unique<EngineLoop>(model, scheduler, opt_.max_waiting, origin_,
                                         opt_.omp_threads);
  http_ = std::make_unique<httplib::Server>();
  const int threads = std::max(4, opt_.http_threads);
  http_->new_task_queue = [threads] { return new httplib::ThreadPool(std::size_t(threads)); };
  http_->set_payload_max_length(std::size_t(64) << 20);
  http_->set_keep_alive_timeout(2);  // idle keep-alive connections hold a thread each
  // Each streamed token is a small write: with Nagle's algorithm on, a chunk written while the
  // previous one is unacknowledged waits for the client's delayed ACK (40 ms on Linux), so
  // `llmbench load` measured every stream's tokens arriving together ~40 ms after the headers.
  http_->set_tcp_nodelay(true);
  routes();
}

Server::~Server() = default;

int Server::bind() {
  // cpp-httplib listens with a backlog of 5 (CPPHTTPLIB_LISTEN_BACKLOG, compiled into Debian's
  // libcpp-httplib): a burst of more simultaneous connects (a load generator starting 16
  // streams) overflows it, and the kernel retries the dropped SYNs only after 1 s, which
  // `llmbench load` saw as TTFTs of 1 s. The listening socket is kept when it is created and
  // its backlog raised after bind (Linux updates the backlog on a second listen()).
  int listen_fd = -1;
  http_->set_socket_options([&listen_fd](socket_t sock) {
    httplib::default_socket_options(sock);
    listen_fd = sock;
  });
  int port = opt_.port;
  if (opt_.port == 0) {
    port = http_->bind_to_any_port(opt_.host);
    if (port <= 0) throw Error("serve: cannot bind " + opt_.host + " (any port)");
  } else if (!http_->bind_to_port(opt_.host, opt_.port)) {
    throw Error("serve: cannot bind " + opt_.host + ":" + std::to_string(opt_.port) +
                " (in use, or not a local address)");
  }
  http_->set_socket_options(httplib::default_socket_options);
  if (listen_fd >= 0) ::listen(listen_fd, 1024);
  return port;
}

void Server::serve() {
  if (draining_) return;
  http_->listen_after_bind();
}

void Server::shutdown(std::chrono::milliseconds grace) {
  draining_ = true;  // new completions get 503 from here on
  auto wait_until = [&](std::chrono::steady_clock::time_point deadline) {
    while ((!engine_->idle() || active_handlers_ > 0) &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  };
  wait_until(std::chrono::steady_clock::now() + grace);
  engine_->abort_all();  // what is left ends with finish_reason "abort"
  wait_until(std::chrono::steady_clock::now() + std::chrono::seconds(2));
  http_->stop();  // closes the listening socket; serve() returns once handlers have
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

void Server::routes() {
  httplib::Server& s = *http_;

  s.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    if (draining_) {
      res.status = 503;
      res.set_content(R"({"status":"shutting down"})", "application/json");
    } else {
      res.set_content(R"({"status":"ok"})", "application/json");
    }
  });

  s.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
    const json model = {{"id", opt_.model_name},
                        {"object", "model"},
                        {"created", unix_seconds()},
                        {"owned_by", "llmbench"},
                        {"max_model_len", engine_->options().max_len}};
    res.set_content(dump({{"object", "list"}, {"data", json::array({model})}}),
                    "application/json");
  });

  s.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics_text(), "text/plain; version=0.0.4");
  });

  s.Post("/v1/completions", [this](const httplib::Request& req, httplib::Response& res) {
    if (draining_) {
      send_error(res, ApiError(503, "the server is shutting down", "service_unavailable"));
      return;
    }
    CompletionRequest r;
    try {
      r = parse_completion_request(req.body, tokenizer_);
      if (!r.model.empty() && r.model != opt_.model_name)
        throw ApiError(404, "the model '" + r.model + "' does not exist; this server serves '" +
                                opt_.model_name + "'",
                       "invalid_request_error", "model");
    } catch (const ApiError& e) {
      send_error(res, e);
      return;
    }
    GenerationRequest g{r.prompt, r.max_tokens, r.ignore_eos};
    try {
      engine_->validate(g);
    } catch (const BadInput& e) {
      send_error(res, ApiError(400, e.what(), "invalid_request_error", param_of(e.what())));
      return;
    }
    const int prompt_tokens = int(g.prompt.size());
    RequestId id = 0;
    std::shared_ptr<RequestStream> stream = engine_->submit(std::move(g), id);
    if (!stream) {
      send_error(res, ApiError(429,
                               "too many requests waiting (" + std::to_string(opt_.max_waiting) +
                                   "); retry later",
                               "rate_limit_error"));
      return;
    }
    // Counted until the response is written (a stream: until its releaser runs).
    ++active_handlers_;
    struct Done {
      std::atomic<int>& n;
      bool armed = true;
      ~Done() {
        if (armed) --n;
      }
    } done{active_handlers_};
    const std::string completion_id = "cmpl-" + std::to_string(++completion_ids_);
    const std::int64_t created = unix_seconds();

    if (!r.stream) {
      // Wait for the whole completion.
      std::vector<std::int32_t> tokens;
      FinishReason finish = FinishReason::kNone;
      std::string error;
      std::vector<StreamEvent> events;
      while (finish == FinishReason::kNone) {
        events.clear();
        stream->wait(events, kPoll);
        for (StreamEvent& e : events) {
          if (e.token) tokens.push_back(*e.token);
          if (e.finish != FinishReason::kNone) finish = e.finish, error = e.error;
        }
      }
      if (!error.empty()) {
        send_error(res, ApiError(500, error, "server_error"));
        return;
      }
      const json choice = {{"index", 0},
                           {"text", tokenizer_.decode(tokens)},
                           {"logprobs", nullptr},
                           {"finish_reason", finish_json(finish)},
                           {"token_ids", tokens}};
      res.set_content(dump({{"id", completion_id},
                            {"object", "text_completion"},
                            {"created", created},
                            {"model", opt_.model_name},
                            {"choices", json::array({choice})},
                            {"usage", usage_json(prompt_tokens, int(tokens.size()))}}),
                      "application/json");
      return;
    }

    // Server-sent events: one chunk per token, the finish reason on the last token's chunk,
    // then the usage chunk (stream_options.include_usage) and [DONE].
    auto st = std::make_shared<StreamState>();
    st->id = id;
    st->stream = stream;
    st->completion_id = completion_id;
    st->created = created;
    st->include_usage = r.include_usage;
    st->prompt_tokens = prompt_tokens;
    res.set_header("Cache-Control", "no-cache");
    done.armed = false;  // the releaser below counts this stream out
    res.set_chunked_content_provider(
        "text/event-stream",
        [this, st](std::size_t, httplib::DataSink& sink) {
          // Every event of one wake-up goes out in one write (one chunk, one send): when the
          // engine steps faster than this thread writes, tokens are coalesced instead of
          // queueing one syscall each.
          std::string out;
          auto add = [&out](const std::string& data) { out += "data: " + data + "\n\n"; };
          std::vector<StreamEvent> events;
          st->stream->wait(events, kPoll);
          if (events.empty()) return sink.is_writable();  // false: the client is gone
          for (StreamEvent& e : events) {
            if (e.finish != FinishReason::kNone) st->finished = true;
            if (!e.error.empty()) {
              add(error_json(ApiError(500, e.error, "server_error")));
              continue;
            }
            if (!e.token && e.finish == FinishReason::kNone) continue;
            json choice = {{"index", 0},
                           {"text", e.token ? tokenizer_.decode(*e.token) : std::string()},
                           {"logprobs", nullptr},
                           {"finish_reason", finish_json(e.finish)},
                           {"token_ids", e.token ? json::array({*e.token}) : json::array()}};
            if (e.token) ++st->completion_tokens;
            json chunk = {{"id", st->completion_id},
                          {"object", "text_completion"},
                          {"created", st->created},
                          {"model", opt_.model_name},
                          {"choices", json::array({choice})}};
            if (st->include_usage) chunk["usage"] = nullptr;
            add(dump(chunk));
          }
          if (st->finished) {
            if (st->include_usage)
              add(dump({{"id", st->completion_id},
                        {"object", "text_completion"},
                        {"created", st->created},
                        {"model", opt_.model_name},
                        {"choices", json::array()},
                        {"usage", usage_json(st->prompt_tokens, st->completion_tokens)}}));
            add("[DONE]");
          }
          if (!out.empty() && !sink.write(out.data(), out.size())) return false;
          if (st->finished) {
            st->done = true;
            sink.done();
          }
          return true;
        },
        [this, st](bool) {
          // The connection is finished, or broken: a request still running is cancelled.
          if (!st->finished) engine_->cancel(st->id);
          --active_handlers_;
        });
  });

  s.set_exception_handler([](const httplib::Request&, httplib::Response& res,
                             std::exception_ptr ep) {
    std::string what = "internal error";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    send_error(res, ApiError(500, what, "server_error"));
  });
  s.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;  // ours already carry an error object
    if (res.status == 404)
      send_error(res, ApiError(404, "no route " + req.method + " " + req.path, "not_found_error"));
  });
}

}  // namespace llmbench
