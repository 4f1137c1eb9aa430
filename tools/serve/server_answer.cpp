// Answering a parsed completion, for both APIs (see server.h): the checks that need the
// server (draining, model name, engine limits, queue), then the whole response or the one SSE
// writer. A stream is one chunk per token (chat: a role chunk before the first token's chunk,
// in the same write), the finish reason on the last token's chunk, then the usage chunk
// (stream_options.include_usage) and [DONE]. An aborted request's stream sends no token-like
// chunk: it ends with an error event (code "aborted"), the usage chunk if asked, and [DONE].
// Text, stop strings, echo and log-probabilities: completion_output.h.
#include <algorithm>
#include <chrono>

#include "kernels/common/error.h"
#include "tools/serve/server.h"
#include "tools/serve/completion_output.h"

namespace llmbench {

using json = nlohmann::json;

namespace {

constexpr auto kPoll = std::chrono::milliseconds(50);  // how often a waiting handler wakes

// Which parameter an engine-side refusal is about (for the error object's "param").
std::string param_of(const std::string& message) {
  return message.find("max_tokens") != std::string::npos ? "max_tokens" : "prompt";
}

std::int64_t unix_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The event that ends an aborted stream.
std::string abort_event(const StreamEvent& e) {
  const bool failed = !e.error.empty();
  const json err = {{"message", failed ? e.error
                                       : std::string("the request was aborted before it "
                                                     "finished (the server is shutting down)")},
                    {"type", "server_error"},
                    {"param", nullptr},
                    {"code", failed ? "engine_error" : "aborted"}};
  return dump_json({{"error", err}});
}

}  // namespace

void Server::answer(CompletionRequest r, bool chat, const std::string& request_id,
                    HttpReply& res) {
  if (draining_) {
    send_error(res, ApiError(503, "the server is shutting down", "service_unavailable"),
               {{"Retry-After", "5"}});
    return;
  }
  if (!r.model.empty() && r.model != opt_.model_name)
    throw ApiError(404, "the model '" + r.model + "' does not exist; this server serves '" +
                            opt_.model_name + "'",
                   "not_found_error", "model");
  // A chat request without max_tokens runs to EOS or the context length, as vLLM's and
  // OpenAI's do (completions keep OpenAI's default of 16).
  if (chat && !r.max_tokens_given)
    r.max_tokens = std::max(1, engine_->options().max_len - int(r.prompt.size()));
  GenerationRequest g{r.prompt, r.max_tokens, r.ignore_eos};
  g.sampling = r.sampling;
  g.stop_token_ids = r.stop_token_ids;
  try {
    engine_->validate(g);
  } catch (const BadInput& e) {
    throw ApiError(400, e.what(), "invalid_request_error", param_of(e.what()));
  }
  ResponseShape shape;
  shape.chat = chat;
  shape.id = (chat ? "chatcmpl-" : "cmpl-") + std::to_string(++completion_ids_);
  shape.created = unix_seconds();
  shape.model = opt_.model_name;
  shape.prompt_tokens = int(g.prompt.size());
  RequestId id = 0;
  std::unique_ptr<TokenStop> stop;  // stop strings end the request on the engine thread
  if (!r.stop.empty()) stop = std::make_unique<TokenStop>(tokenizer_, r.stop);
  const std::shared_ptr<RequestStream> stream =
      engine_->submit(std::move(g), id, request_id, std::move(stop));
  if (!stream) {
    send_error(res,
               ApiError(429,
                        "too many requests waiting (" + std::to_string(opt_.max_waiting) +
                            "); retry later",
                        "rate_limit_error"),
               {{"Retry-After", "1"}});
    return;
  }
  ++active_handlers_;  // counted until the response is written
  struct Release {
    std::atomic<int>& n;
    ~Release() { --n; }
  } release{active_handlers_};
  CompletionOutput out(tokenizer_, r, chat);
  if (r.stream) answer_stream(id, *stream, shape, out, r.include_usage, res);
  else answer_whole(id, *stream, shape, out, res);
}

void Server::answer_whole(RequestId id, RequestStream& stream, const ResponseShape& shape,
                          CompletionOutput& out, HttpReply& res) {
  FinishReason finish = FinishReason::kNone;
  std::string error;
  int cached_tokens = 0;
  std::vector<StreamEvent> events;
  while (finish == FinishReason::kNone) {
    events.clear();
    stream.wait(events, kPoll);
    if (events.empty() && res.client_gone()) {
      engine_->cancel(id);  // nobody will read the answer
      return;
    }
    for (StreamEvent& e : events) {
      cached_tokens = std::max(cached_tokens, e.cached_tokens);
      if (e.token) {
        out.add(e);
        if (out.done()) finish = out.finish();
      } else if (e.finish != FinishReason::kNone && finish == FinishReason::kNone) {
        finish = e.finish, error = e.error;
      }
      if (finish != FinishReason::kNone) break;
    }
  }
  if (!error.empty()) {
    send_error(res, ApiError(500, error, "server_error"));
    return;
  }
  json body = whole_response(shape, out.tokens(), out.text(), finish, cached_tokens);
  body["choices"][0]["logprobs"] = out.logprobs();
  body["choices"][0]["stop_reason"] = out.stop_reason();
  res.send(200, "application/json", dump_json(body));
}

void Server::answer_stream(RequestId id, RequestStream& stream, const ResponseShape& shape,
                           CompletionOutput& output, bool include_usage, HttpReply& res) {
  bool finished = false;
  if (res.start_stream(200, "text/event-stream", {{"Cache-Control", "no-cache"}})) {
    bool role_sent = !shape.chat;
    int cached_tokens = 0;
    std::vector<StreamEvent> events;
    // echo: the prompt's text goes first, in a chunk of its own.
    std::string out;
    auto add = [&out](const std::string& data) { out += "data: " + data + "\n\n"; };
    if (!output.echo_text().empty()) {
      json chunk = token_chunk(shape, 0, output.echo_text(), FinishReason::kNone, include_usage);
      chunk["choices"][0]["token_ids"] = json::array();
      add(dump_json(chunk));
    }
    while (!finished) {
      events.clear();
      stream.wait(events, kPoll);
      if (events.empty()) {
        if (res.client_gone()) break;
        continue;
      }
      // Every event of one wake-up goes out in one write: when the engine steps faster than
      // this thread writes, tokens are coalesced instead of queueing one syscall each. A
      // character split over tokens, or text that may start a stop string, goes out in the
      // chunk of the token that settles it (completion_output.h).
      for (const StreamEvent& e : events) {
        cached_tokens = std::max(cached_tokens, e.cached_tokens);
        if (e.token) {
          if (!role_sent) add(dump_json(role_chunk(shape, include_usage)));
          role_sent = true;
          const CompletionOutput::Piece piece = output.add(e);
          const FinishReason finish = output.finish();
          json chunk = token_chunk(shape, *e.token, piece.text, finish, include_usage);
          chunk["choices"][0]["logprobs"] = piece.logprobs;
          if (finish != FinishReason::kNone) chunk["choices"][0]["stop_reason"] = output.stop_reason();
          add(dump_json(chunk));
          finished = output.done();
        } else if (e.finish != FinishReason::kNone) {
          finished = true;
          if (e.finish == FinishReason::kAbort) add(abort_event(e));
        }
        if (finished) break;
      }
      if (finished) {
        if (include_usage)
          add(dump_json(usage_chunk(shape, int(output.tokens().size()), cached_tokens)));
        add("[DONE]");
      }
      if (!res.write(out)) break;
      out.clear();
    }
    if (finished) res.end_stream();
  }
  if (!finished) engine_->cancel(id);  // the client is gone: free its blocks
}

}  // namespace llmbench
