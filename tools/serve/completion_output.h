// What a client gets of one request, built from the engine's events as they come: the text
// (streamed in pieces that never split a UTF-8 character), `stop` strings matched across token
// boundaries (stop_strings.h), the text of a `stop_token_ids` token left out unless
// include_stop_str_in_output (as vLLM does), the echoed prompt, the log-probabilities in the
// API's shape, the finish reason and vLLM's `stop_reason` (the stop string, the stop token id,
// or null). The engine thread ends the request at the token that completes a stop string
// (TokenStop, stop_strings.h); the same match here cuts the text.
// Log-probability shapes (OpenAI's):
//   completions {"tokens": [piece], "token_logprobs": [lp], "top_logprobs": [{piece: lp}],
//                "text_offset": [offset in the choice's text]} (the sampled token is in its
//                top_logprobs entry too, as vLLM writes it)
//   chat        {"content": [{"token", "logprob", "bytes", "top_logprobs": [{"token",
//                "logprob", "bytes"}]}]}
// A piece is the token decoded alone (Tokenizer::decode of that one id).
// Not here: HTTP or SSE framing (server_answer.cpp), the envelope JSON (completion_response.h).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tools/serve/completion_request.h"
#include "tools/serve/engine_loop.h"
#include "tools/serve/stop_strings.h"
#include "tools/text/stream_decoder.h"
#include "tools/text/tokenizer.h"

namespace llmbench {

class CompletionOutput {
 public:
  // `r` as parsed (its prompt is what echo writes); `chat` picks the log-probability shape.
  CompletionOutput(const Tokenizer& tok, const CompletionRequest& r, bool chat);

  // What one token adds: its text to send now ("" while held back) and its log-probabilities
  // entry (null when not asked for).
  struct Piece {
    std::string text;
    nlohmann::json logprobs;
  };
  // One engine event carrying a token (and maybe the finish). Ignored (an empty piece) once
  // done(). The piece of the last token includes everything still held back.
  Piece add(const StreamEvent& e);

  // The request is over: the engine finished it, or a stop string matched.
  bool done() const { return finish_ != FinishReason::kNone; }
  // Done by a stop string.
  bool stopped_by_string() const { return stops_.stopped(); }
  FinishReason finish() const { return finish_; }
  nlohmann::json stop_reason() const;
  // Tokens taken (those after a stop string's token are not).
  const std::vector<std::int32_t>& tokens() const { return tokens_; }
  // The echoed prompt's text ("" without echo): a stream sends it first.
  const std::string& echo_text() const { return echo_; }
  // The whole choice text: echo, then the completion (cut at a stop string).
  std::string text() const;
  // The whole log-probabilities object (null when not asked for).
  nlohmann::json logprobs() const;

 private:
  nlohmann::json entry(std::int32_t token, const SampledLogprobs& lp);
  void append(nlohmann::json& all, const nlohmann::json& one) const;

  const Tokenizer& tok_;
  bool chat_;
  bool include_stop_;
  bool want_logprobs_;
  bool plain_text_;  // no stop strings and no stop-token text left out: decode() the whole
  StreamDecoder decoder_;
  StopStrings stops_;
  std::string echo_, text_;
  std::vector<std::int32_t> tokens_;
  nlohmann::json logprobs_;
  std::size_t text_offset_ = 0;  // completions: where the next token's piece starts
  FinishReason finish_ = FinishReason::kNone;
  std::optional<std::int32_t> stop_token_;
};

}  // namespace llmbench
