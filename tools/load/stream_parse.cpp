// SSE splitting and stream parsing (see stream_parse.h).
#include "tools/load/stream_parse.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstring>
#include <limits>

#include "engine/checkpoint/json_describe.h"
#include "engine/checkpoint/json_input.h"

namespace llmbench {

void SseSplitter::feed(const char* p, std::size_t n, std::int64_t arrival_ns,
                       std::vector<SseEvent>& out) {
  if (overflowed_) return;
  const char* end = p + n;
  while (p < end) {
    const char* nl = static_cast<const char*>(memchr(p, '\n', std::size_t(end - p)));
    const std::size_t take = std::size_t((nl ? nl : end) - p);
    if (line_.size() + take > max_line_ || data_.size() + take > max_line_) {
      overflowed_ = true;
      line_.clear();
      data_.clear();
      return;
    }
    if (!nl) {
      line_.append(p, take);
      return;
    }
    line_.append(p, take);
    p = nl + 1;
    if (!line_.empty() && line_.back() == '\r') line_.pop_back();
    if (line_.empty()) {  // a blank line ends the event
      if (in_event_) out.push_back({arrival_ns, std::move(data_)});
      data_.clear();
      in_event_ = false;
      continue;
    }
    if (line_.compare(0, 5, "data:") == 0) {
      std::size_t from = 5;
      if (line_.size() > 5 && line_[5] == ' ') from = 6;
      if (in_event_) data_ += '\n';
      data_.append(line_, from, std::string::npos);
      in_event_ = true;
    }
    line_.clear();
  }
}

namespace {

// One event is one chunk of one response: a megabyte is already far beyond any real one.
const JsonLimits kEventLimits{std::size_t(1) << 20, 64};

std::string excerpt(const std::string& s) {
  std::string e = s.substr(0, 80);
  for (char& c : e)
    if (c == '\n' || c == '\r') c = ' ';
  return s.size() > 80 ? e + "..." : e;
}

}  // namespace

ParsedStream parse_stream(const std::vector<SseEvent>& events, bool chat, bool collect_text) {
  using nlohmann::json;
  ParsedStream s;
  auto fail = [&](std::string why) {
    if (s.error.empty()) s.error = std::move(why);
  };
  for (const SseEvent& e : events) {
    if (e.data == "[DONE]") {
      s.done = true;
      continue;
    }
    if (s.done) {
      fail("malformed SSE: an event after [DONE]");
      break;
    }
    auto parsed = parse_json(e.data, kEventLimits);
    if (!parsed.ok() && json_limit_violation(e.data, kEventLimits)) {
      fail("malformed SSE: event refused (" + parsed.error + "): '" + excerpt(e.data) + "'");
      break;
    }
    const json j = std::move(parsed.value);
    if (!parsed.ok() || !j.is_object()) {
      fail("malformed SSE: event is not a JSON object: '" + excerpt(e.data) + "'");
      break;
    }
    if (j.contains("error")) {
      const json& err = j["error"];
      const std::string msg = err.is_object() && err.contains("message") && err["message"].is_string()
                                  ? err["message"].get<std::string>()
                                  : describe_json(err);
      fail("server error in stream: " + excerpt(msg));
      break;
    }
    if (auto u = j.find("usage"); u != j.end() && !u->is_null()) {
      // Counts that are not whole numbers in [0, 2^31) are a broken server, not a measurement:
      // stored as-is they made throughput negative (-1.36e9 tok/s) or wrapped (2^31 + 5).
      std::string bad;
      if (!u->is_object()) bad = "usage is " + describe_json(*u);
      for (const char* key : {"prompt_tokens", "completion_tokens"}) {
        if (!bad.empty()) break;
        auto v = u->find(key);
        if (v == u->end() || v->is_null()) continue;
        const bool whole = v->is_number_unsigned() ||
                           (v->is_number_integer() && v->get<std::int64_t>() >= 0);
        if (!whole || v->get<double>() > double(std::numeric_limits<std::int32_t>::max()))
          bad = std::string(key) + " = " + describe_json(*v) + " (expected an integer in [0, 2^31))";
        else if (std::string(key) == "prompt_tokens") s.prompt_tokens = v->get<int>();
        else s.completion_tokens = v->get<int>();
      }
      if (!bad.empty()) {
        fail("malformed usage: " + bad);
        break;
      }
    }
    const auto choices = j.find("choices");
    if (choices == j.end() || !choices->is_array() || choices->empty()) continue;
    const json& c = (*choices)[0];
    if (!c.is_object()) {
      fail("malformed SSE: choices[0] is not an object");
      break;
    }
    int tokens = 0;
    if (auto ids = c.find("token_ids"); ids != c.end() && ids->is_array()) tokens = int(ids->size());
    const json* holder = &c;
    if (chat) {
      auto d = c.find("delta");
      holder = d != c.end() && d->is_object() ? &*d : nullptr;
    }
    if (collect_text && holder) {
      auto t = holder->find(chat ? "content" : "text");
      if (t != holder->end() && t->is_string()) s.text += t->get_ref<const std::string&>();
    }
    if (tokens == 0) {
      if (holder) {
        static const char* const kChatKeys[] = {"content", "reasoning_content", nullptr};
        static const char* const kTextKeys[] = {"text", nullptr};
        for (const char* const* k = chat ? kChatKeys : kTextKeys; *k; ++k) {
          const char* key = *k;
          auto t = holder->find(key);
          if (t != holder->end() && t->is_string() && !t->get_ref<const std::string&>().empty()) {
            tokens = 1;
            break;
          }
        }
      }
    }
    if (tokens > 0) s.chunks.push_back({e.arrival_ns, tokens});
    if (auto f = c.find("finish_reason"); f != c.end() && f->is_string())
      s.finish_reason = f->get<std::string>();
  }
  if (s.error.empty() && s.chunks.empty())
    fail(events.empty() ? "malformed SSE: no data events in a 200 response"
                        : "stream carried no output tokens");
  return s;
}

ParsedStream parse_completion(const std::string& body, bool chat, bool collect_text) {
  using nlohmann::json;
  ParsedStream s;
  auto parsed = parse_json(body, kEventLimits);
  if (!parsed.ok() || !parsed.value.is_object()) {
    s.error = json_limit_violation(body, kEventLimits)
                  ? "malformed answer: refused (" + parsed.error + "): '" + excerpt(body) + "'"
                  : "malformed answer: not a JSON object: '" + excerpt(body) + "'";
    return s;
  }
  json j = std::move(parsed.value);
  // The chat answer's message read as a stream's delta: one event, the same rules.
  if (chat) {
    if (auto c = j.find("choices"); c != j.end() && c->is_array() && !c->empty() &&
                                    (*c)[0].is_object() && (*c)[0].contains("message"))
      (*c)[0]["delta"] = (*c)[0]["message"];
  }
  std::vector<SseEvent> events{{0, j.dump()}, {0, "[DONE]"}};
  s = parse_stream(events, chat, collect_text);
  int counted = 0;
  for (const ChunkRecord& c : s.chunks) counted += c.tokens;
  s.chunks.clear();
  if (!s.completion_tokens && s.error.empty()) {
    // token_ids (llmbench serve, vLLM with return_token_ids) count exactly; text alone does not.
    const auto& c0 = j["choices"][0];
    if (auto ids = c0.find("token_ids"); ids != c0.end() && ids->is_array())
      s.completion_tokens = counted;
    else
      s.error = "the answer has no usage.completion_tokens: --no-stream counts tokens from usage";
  }
  return s;
}

}  // namespace llmbench
