// POST /v1/completions: the request body, parsed and checked (the OpenAI completions API; its
// sampling fields are sampling_params.h's). Everything a client can get wrong ends as ApiError,
// which the server turns into an OpenAI-style error object: {"error": {"message", "type",
// "param", "code"}}.
// Not here: the context-length and vocabulary checks that need the engine (Scheduler::validate).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "engine/serving/sampler.h"

#include "tools/text/tokenizer.h"

namespace llmbench {

// An error for the client: HTTP status, OpenAI error type, and the parameter at fault.
struct ApiError : std::runtime_error {
  ApiError(int status, std::string message, std::string type = "invalid_request_error",
           std::string param = "")
      : std::runtime_error(std::move(message)), status(status), type(std::move(type)),
        param(std::move(param)) {}
  int status;
  std::string type;
  std::string param;
};

// The error object's JSON text.
std::string error_json(const ApiError& e);

struct CompletionRequest {
  std::string model;                // as sent (may be empty)
  std::vector<std::int32_t> prompt;  // token ids (a text prompt is encoded)
  int max_tokens = 16;              // max_tokens or max_completion_tokens (OpenAI's default 16)
  bool stream = false;
  bool include_usage = false;       // stream_options.include_usage
  bool ignore_eos = false;          // extension (vLLM's name)
  bool max_tokens_given = false;    // chat without it: to EOS or the context length
  // Sampling (sampling_params.h).
  SamplingParams sampling;
  std::vector<std::string> stop;    // stop strings, matched in the text
  std::vector<std::int32_t> stop_token_ids;
  bool include_stop_str = false;    // include_stop_str_in_output
  bool echo = false;                // completions: the prompt's text before the completion
};

// Parses the body (through parse_json: nesting deeper than 64 levels is a 400, and no refusal
// quotes more than a short excerpt of the client's value). The sampling fields, and the
// refusals of what is not supported, are sampling_params.h's. An absent temperature is greedy.
// Unknown fields are ignored, as OpenAI-compatible servers do.
// Integer fields accept integer-valued JSON numbers (2.0 is 2).
// `max_values` (0: none) bounds the JSON values of the body, checked before it is parsed into
// values: the server passes a bound derived from its context length.
CompletionRequest parse_completion_request(const std::string& body, const Tokenizer& tok,
                                           std::size_t max_values = 0);

// Shared by /v1/completions and /v1/chat/completions: the body parsed as a JSON object (400
// otherwise), and every field but the prompt (model, max_tokens / max_completion_tokens,
// stream, stream_options, ignore_eos) read into `r`.
nlohmann::json parse_body_object(const std::string& body_text, std::size_t max_values = 0);
void parse_common_fields(const nlohmann::json& body, CompletionRequest& r);
ApiError bad_request(const std::string& param, const std::string& message);

}  // namespace llmbench
