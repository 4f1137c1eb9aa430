// Reading the sampling fields of a request body (see sampling_params.h).
#include "tools/serve/sampling_params.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>

#include "engine/checkpoint/json_describe.h"

namespace llmbench {

using json = nlohmann::json;

namespace {

const json* present(const json& body, const char* name) {
  auto it = body.find(name);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

std::string quoted(const char* name) { return std::string("'") + name + "'"; }

// An integer, or a JSON number with an integral value (2.0); nullopt for anything else.
std::optional<std::int64_t> integral(const json& v) {
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15) return std::int64_t(d);
  }
  return std::nullopt;
}

// A number in [lo, hi] (fallback when absent or null).
float number(const json& body, const char* name, float fallback, double lo, double hi,
             const char* range) {
  const json* v = present(body, name);
  if (!v) return fallback;
  if (!v->is_number())
    throw bad_request(name, quoted(name) + " must be a number; got " + describe_json(*v));
  const double d = v->get<double>();
  if (!(d >= lo && d <= hi))
    throw bad_request(name, quoted(name) + " must be in " + range + "; got " + describe_json(*v));
  return float(d);
}

std::int64_t integer(const json& body, const char* name, std::int64_t fallback, std::int64_t lo,
                     std::int64_t hi) {
  const json* v = present(body, name);
  if (!v) return fallback;
  const auto i = integral(*v);
  if (!i) throw bad_request(name, quoted(name) + " must be an integer; got " + describe_json(*v));
  if (*i < lo || *i > hi)
    throw bad_request(name, quoted(name) + " must be in [" + std::to_string(lo) + ", " +
                                std::to_string(hi) + "]; got " + std::to_string(*i));
  return *i;
}

bool boolean(const json& body, const char* name, bool fallback) {
  const json* v = present(body, name);
  if (!v) return fallback;
  if (!v->is_boolean())
    throw bad_request(name, quoted(name) + " must be true or false; got " + describe_json(*v));
  return v->get<bool>();
}

// A field we do not implement: absent, null, or its neutral value is fine.
void refuse_unless(const json& body, const char* name, const json& neutral,
                   const char* why = "it is not implemented") {
  const json* v = present(body, name);
  if (!v || *v == neutral) return;
  if (neutral.is_number() && v->is_number() && v->get<double>() == neutral.get<double>()) return;
  // describe_json, not dump(): the client's value may be nested deep or be megabytes long.
  throw bad_request(name, quoted(name) + " = " + describe_json(*v) + " is not supported: " +
                              why + " (supported: " + neutral.dump() + " or absent)");
}

std::vector<std::string> stop_strings(const json& body) {
  const json* v = present(body, "stop");
  if (!v) return {};
  std::vector<std::string> out;
  if (v->is_string()) {
    out.push_back(v->get<std::string>());
  } else if (v->is_array()) {
    if (v->size() > std::size_t(kMaxStopStrings))
      throw bad_request("stop", "'stop' holds " + std::to_string(v->size()) +
                                    " strings; at most " + std::to_string(kMaxStopStrings));
    for (const json& s : *v) {
      if (!s.is_string()) throw bad_request("stop", "'stop' must be a string or a list of strings");
      out.push_back(s.get<std::string>());
    }
  } else {
    throw bad_request("stop", "'stop' must be a string or a list of strings");
  }
  for (const std::string& s : out)
    if (s.size() > kMaxStopStringBytes)
      throw bad_request("stop", "a stop string of " + std::to_string(s.size()) +
                                    " bytes; at most " + std::to_string(kMaxStopStringBytes));
  return out;
}

std::vector<std::int32_t> stop_token_ids(const json& body) {
  const json* v = present(body, "stop_token_ids");
  if (!v) return {};
  if (!v->is_array() || v->size() > std::size_t(kMaxStopStrings))
    throw bad_request("stop_token_ids", "'stop_token_ids' must be a list of at most " +
                                            std::to_string(kMaxStopStrings) + " token ids");
  std::vector<std::int32_t> out;
  for (const json& t : *v) {
    const auto id = integral(t);
    if (!id || *id < 0 || *id > INT32_MAX)
      throw bad_request("stop_token_ids", "'stop_token_ids' must hold non-negative integer "
                                          "token ids; got " + describe_json(t));
    out.push_back(std::int32_t(*id));
  }
  return out;
}

void read_logprobs(const json& body, bool chat, CompletionRequest& r) {
  if (!chat) {
    // Completions: an integer, the number of top tokens besides the sampled one.
    if (const json* v = present(body, "logprobs"); v && v->is_boolean())
      throw bad_request("logprobs", "'logprobs' of /v1/completions is an integer (0.." +
                                        std::to_string(kMaxLogprobs) + "), not a bool");
    r.sampling.logprobs = int(integer(body, "logprobs", -1, 0, kMaxLogprobs));
    refuse_unless(body, "top_logprobs", json(nullptr),
                  "/v1/completions takes the count in 'logprobs'");
    return;
  }
  // Chat: logprobs a bool, top_logprobs the count (OpenAI's rule: only with logprobs).
  const bool on = boolean(body, "logprobs", false);
  const int top = int(integer(body, "top_logprobs", 0, 0, kMaxLogprobs));
  if (present(body, "top_logprobs") && !on)
    throw bad_request("top_logprobs", "'top_logprobs' needs 'logprobs': true");
  r.sampling.logprobs = on ? top : -1;
}

}  // namespace

void parse_sampling_fields(const json& body, bool chat, CompletionRequest& r) {
  SamplingParams& p = r.sampling;
  p.temperature = number(body, "temperature", 0.0f, 0.0, 1e6, "[0, 1e6]");
  p.top_p = number(body, "top_p", 1.0f, 0.0, 1.0, "(0, 1]");
  if (p.top_p <= 0.0f) throw bad_request("top_p", "'top_p' must be in (0, 1]; got 0");
  // -1 and 0 both mean every token (vLLM's and others' spellings of "off").
  p.top_k = int(integer(body, "top_k", 0, -1, 1 << 30));
  if (p.top_k < 0) p.top_k = 0;
  p.min_p = number(body, "min_p", 0.0f, 0.0, 1.0, "[0, 1]");
  if (const json* v = present(body, "seed")) {
    const auto s = integral(*v);
    if (!s) throw bad_request("seed", "'seed' must be an integer");
    p.seed = std::uint64_t(*s);
  }
  r.stop = stop_strings(body);
  r.stop_token_ids = stop_token_ids(body);
  r.include_stop_str = boolean(body, "include_stop_str_in_output", false);
  read_logprobs(body, chat, r);
  if (chat) {
    refuse_unless(body, "echo", false, "chat echo (the last message) is not implemented");
  } else {
    r.echo = boolean(body, "echo", false);
    if (r.echo && p.logprobs >= 0)
      throw bad_request("echo", "'echo' with 'logprobs' is not supported: it needs the prompt's "
                                "log-probabilities, which this server does not compute; send "
                                "echo or logprobs");
  }

  refuse_unless(body, "n", 1, "one choice per request");
  refuse_unless(body, "best_of", 1, "one choice per request");
  refuse_unless(body, "presence_penalty", 0);
  refuse_unless(body, "frequency_penalty", 0);
  refuse_unless(body, "repetition_penalty", 1);
  refuse_unless(body, "min_tokens", 0);
  refuse_unless(body, "suffix", json(nullptr));
  refuse_unless(body, "prompt_logprobs", json(nullptr),
                "this server does not compute the prompt's log-probabilities");
  if (const json* v = present(body, "logit_bias"); v && !(v->is_object() && v->empty()))
    throw bad_request("logit_bias", "'logit_bias' is not supported: it is not implemented");

  // Fields that change what the answer is, not how it is sampled: ignoring them would hand a
  // client that asked for JSON or tool calls plain text with a 200.
  for (const char* name : {"tools", "tool_choice", "functions", "function_call",
                           "response_format", "guided_json", "guided_regex", "guided_choice",
                           "guided_grammar", "structured_outputs"}) {
    const json* v = present(body, name);
    if (!v || (v->is_array() && v->empty())) continue;
    if (std::string(name) == "tool_choice" && *v == "none") continue;
    if (std::string(name) == "response_format" && v->is_object() && v->value("type", "") == "text")
      continue;
    throw bad_request(name, quoted(name) + " is not supported: llmbench serve generates plain "
                                           "text only");
  }
  if (!chat) return;
  // Chat fields that change the rendered prompt: the server renders its one template, always
  // ending with the generation prompt.
  refuse_unless(body, "add_generation_prompt", true,
                "the prompt always ends with the template's generation prompt");
  refuse_unless(body, "continue_final_message", false,
                "the prompt always ends with the template's generation prompt");
  refuse_unless(body, "chat_template", json(nullptr),
                "the server renders the template it was started with (--chat-template)");
  if (const json* v = present(body, "chat_template_kwargs"); v && !(v->is_object() && v->empty()))
    throw bad_request("chat_template_kwargs", "'chat_template_kwargs' = " + describe_json(*v) +
                                                  " is not supported: the server renders its "
                                                  "template without arguments");
}

}  // namespace llmbench
