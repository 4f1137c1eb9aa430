// Parsing POST /v1/completions bodies (see completion_request.h).
#include "tools/serve/completion_request.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>

#include "engine/checkpoint/json_input.h"
#include "tools/serve/sampling_params.h"

namespace llmbench {

using json = nlohmann::json;

std::string error_json(const ApiError& e) {
  json err = {{"message", e.what()}, {"type", e.type}, {"code", nullptr}};
  err["param"] = e.param.empty() ? json(nullptr) : json(e.param);
  return json{{"error", err}}.dump(-1, ' ', false, json::error_handler_t::replace);
}

namespace {

ApiError bad(const std::string& param, const std::string& message) {
  return bad_request(param, message);
}

// An integer, or a JSON number with an integral value (2.0); nullopt for anything else.
std::optional<std::int64_t> integral(const json& v) {
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15) return std::int64_t(d);
  }
  return std::nullopt;
}

int int_field(const json& body, const char* name, int fallback, int lo, int hi) {
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) return fallback;
  const auto parsed = integral(*it);
  if (!parsed) throw bad(name, std::string("'") + name + "' must be an integer");
  const auto v = *parsed;
  if (v < lo || v > hi)
    throw bad(name, std::string("'") + name + "' must be in [" + std::to_string(lo) + ", " +
                        std::to_string(hi) + "]; got " + std::to_string(v));
  return int(v);
}

bool bool_field(const json& body, const char* name, bool fallback) {
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) throw bad(name, std::string("'") + name + "' must be true or false");
  return it->get<bool>();
}

// The prompt array: token ids, or a one-element array holding a string or an id array.
std::vector<std::int32_t> array_prompt(const json& p, const Tokenizer& tok) {
  const json* ids = &p;
  if (p.size() == 1 && (p[0].is_string() || p[0].is_array())) ids = &p[0];
  if (ids->is_string()) return tok.encode(ids->get<std::string>());
  bool has_string = false, has_number = false;
  for (const json& v : *ids) {
    has_string |= v.is_string();
    has_number |= v.is_number();
  }
  if (has_string && has_number)
    throw bad("prompt", "'prompt' mixes token ids and strings; send one string or an array of "
                        "integer token ids");
  std::vector<std::int32_t> prompt;
  for (const json& v : *ids) {
    if (v.is_array() || v.is_string())
      throw bad("prompt", "several prompts in one request are not supported; send one "
                          "request per prompt");
    const auto id = integral(v);
    if (!id) throw bad("prompt", "'prompt' must be a string or an array of integer token ids");
    if (*id < INT32_MIN || *id > INT32_MAX)
      throw bad("prompt", "prompt token id " + std::to_string(*id) + " is out of range");
    prompt.push_back(std::int32_t(*id));
  }
  return prompt;
}

}  // namespace

ApiError bad_request(const std::string& param, const std::string& message) {
  return ApiError(400, message, "invalid_request_error", param);
}

json parse_body_object(const std::string& body_text, std::size_t max_values) {
  JsonLimits limits;
  limits.max_values = max_values;
  auto parsed = parse_json(body_text, limits);
  if (!parsed.ok()) {
    if (max_values && parsed.error.rfind("more than", 0) == 0)
      throw bad("", "the body holds " + parsed.error + " (refused before parsing): no request "
                    "this server can run needs that many");
    throw bad("", "the body is not valid JSON: " + parsed.error);
  }
  json body = std::move(parsed.value);
  if (!body.is_object()) throw bad("", "the body must be a JSON object");
  return body;
}

CompletionRequest parse_completion_request(const std::string& body_text, const Tokenizer& tok,
                                           std::size_t max_values) {
  const json body = parse_body_object(body_text, max_values);
  CompletionRequest r;

  auto p = body.find("prompt");
  if (p == body.end() || p->is_null()) throw bad("prompt", "'prompt' is required");
  if (p->is_string()) {
    r.prompt = tok.encode(p->get<std::string>());
  } else if (p->is_array()) {
    r.prompt = array_prompt(*p, tok);
  } else {
    throw bad("prompt", "'prompt' must be a string or an array of integer token ids");
  }
  if (r.prompt.empty()) throw bad("prompt", "'prompt' is empty");
  parse_common_fields(body, r);
  parse_sampling_fields(body, /*chat=*/false, r);
  return r;
}

void parse_common_fields(const json& body, CompletionRequest& r) {
  if (auto it = body.find("model"); it != body.end() && !it->is_null()) {
    if (!it->is_string()) throw bad("model", "'model' must be a string");
    r.model = it->get<std::string>();
  }
  // max_completion_tokens is OpenAI's current name; max_tokens the older one. Both: equal.
  const bool has_new = body.contains("max_completion_tokens") &&
                       !body["max_completion_tokens"].is_null();
  r.max_tokens = int_field(body, "max_tokens", 16, 1, 1 << 30);
  r.max_tokens_given = has_new || (body.contains("max_tokens") && !body["max_tokens"].is_null());
  if (has_new) {
    const int n = int_field(body, "max_completion_tokens", 16, 1, 1 << 30);
    if (body.contains("max_tokens") && !body["max_tokens"].is_null() && n != r.max_tokens)
      throw bad("max_completion_tokens",
                "'max_tokens' and 'max_completion_tokens' differ; send one of them");
    r.max_tokens = n;
  }
  r.stream = bool_field(body, "stream", false);
  r.ignore_eos = bool_field(body, "ignore_eos", false);
  if (auto it = body.find("stream_options"); it != body.end() && !it->is_null()) {
    if (!it->is_object()) throw bad("stream_options", "'stream_options' must be an object");
    if (!r.stream) throw bad("stream_options", "'stream_options' is only allowed with stream");
    r.include_usage = bool_field(*it, "include_usage", false);
  }
}

}  // namespace llmbench
