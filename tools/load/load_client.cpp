// The load client: records, the per-level entry point, finishing a transfer into its record,
// and the blocking helpers (see load_client.h; the level loop itself is client_level.cpp).
#include "tools/load/load_client.h"

#include <curl/curl.h>
#include <nlohmann/json.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>

#include "engine/checkpoint/json_describe.h"
#include "engine/checkpoint/json_input.h"
#include "kernels/common/error.h"
#include "tools/load/client_level.h"
#include "tools/load/client_transfer.h"

namespace llmbench {

namespace client_detail {

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) throw Error("curl_global_init failed");
  });
}

std::size_t on_write(char* p, std::size_t size, std::size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::int64_t now = since(t->origin, Clock::now());
  const std::size_t len = size * n;
  if (t->rec.first_byte_ns < 0) t->rec.first_byte_ns = now;
  t->last_data_ns = now;
  if (t->head.size() < kErrorBodyBytes)
    t->head.append(p, std::min(len, kErrorBodyBytes - t->head.size()));
  // Bounds on what one response can make the client hold; past one the transfer is aborted
  // (returning less than `len` makes libcurl stop with CURLE_WRITE_ERROR) and the request fails.
  t->body_bytes += len;
  if (t->max_body_bytes && t->body_bytes > t->max_body_bytes) {
    t->limit = "response larger than " + std::to_string(t->max_body_bytes) + " bytes for max_tokens " +
               std::to_string(t->rec.max_tokens);
    return 0;
  }
  if (!t->stream) {
    t->answer.append(p, len);  // bounded by max_body_bytes above
    return len;
  }
  t->sse.feed(p, len, now, t->events);
  if (t->sse.overflowed()) {
    t->limit = "malformed SSE: a line longer than " + std::to_string(t->sse_max_line) + " bytes";
    return 0;
  }
  if (t->max_events && t->events.size() > t->max_events) {
    t->limit = "the server sent more than " + std::to_string(t->max_events) +
               " events for max_tokens " + std::to_string(t->rec.max_tokens);
    return 0;
  }
  if (t->first_event_ns < 0 && !t->events.empty()) t->first_event_ns = t->events.front().arrival_ns;
  return len;
}

// Headers are the response's first byte (a 500 may come with no body at all). The timeouts
// look at the body only: a server that sends its headers at once and the first token after a
// long queue is still waiting for its first byte of output (the first-byte timeout), not idle.
std::size_t on_header(char*, std::size_t size, std::size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  if (t->rec.first_byte_ns < 0) t->rec.first_byte_ns = since(t->origin, Clock::now());
  return size * n;
}

namespace {

std::string server_message(const std::string& body) {
  // OpenAI-style {"error": {"message": ...}}, else the text itself.
  const auto j = parse_json(body).value;
  std::string msg = body;
  if (j.is_object() && j.contains("error")) {
    const auto& e = j["error"];
    msg = e.is_object() && e.contains("message") && e["message"].is_string()
              ? e["message"].get<std::string>()
              : e.is_string() ? e.get<std::string>() : describe_json(e);
  } else if (j.is_object() && j.contains("message") && j["message"].is_string()) {
    msg = j["message"].get<std::string>();
  }
  for (char& c : msg)
    if (c == '\n' || c == '\r') c = ' ';
  return msg.size() > 200 ? msg.substr(0, 200) + "..." : msg;
}

}  // namespace

void finish_record(Transfer& t, bool chat, bool keep_events, bool collect_text) {
  RequestRecord& r = t.rec;
  if (r.end_ns < 0) r.end_ns = t.last_data_ns >= 0 ? t.last_data_ns : r.send_ns;
  if (!t.limit.empty()) {
    r.error = t.limit;
  } else if (!t.timeout.empty()) {
    r.error = t.timeout;
  } else if (t.result != CURLE_OK) {
    const std::string detail = t.errbuf[0] ? t.errbuf : curl_easy_strerror(t.result);
    switch (t.result) {
      case CURLE_COULDNT_CONNECT:
      case CURLE_COULDNT_RESOLVE_HOST:
        r.error = "connect failed: " + detail;
        break;
      case CURLE_OPERATION_TIMEDOUT:
        r.error = (r.first_byte_ns < 0 ? "connect timeout: " : "timeout: ") + detail;
        break;
      case CURLE_GOT_NOTHING:
        r.error = "server closed the connection without a response: " + detail;
        break;
      case CURLE_PARTIAL_FILE:
      case CURLE_RECV_ERROR:
        r.error = "stream cut off after " + std::to_string(t.events.size()) + " events: " + detail;
        break;
      default:
        r.error = "transport error: " + detail;
    }
  } else if (r.http_status != 200) {
    r.error = "HTTP " + std::to_string(r.http_status) + ": " + server_message(t.head);
  }
  if (r.error.empty() || r.http_status == 200) {
    ParsedStream s = t.stream ? parse_stream(t.events, chat, collect_text)
                              : parse_completion(t.answer, chat, collect_text);
    r.chunks = std::move(s.chunks);
    r.reply_text = std::move(s.text);
    r.prompt_tokens = s.prompt_tokens;
    r.completion_tokens = s.completion_tokens;
    r.finish_reason = s.finish_reason;
    if (r.error.empty()) {
      if (!s.error.empty()) r.error = s.error;
      else if (!t.stream)
        ;  // one answer: no [DONE] to wait for
      else if (!s.done && s.finish_reason.empty())
        r.error = "stream ended without a finish_reason or [DONE] after " +
                  std::to_string(r.chunks.size()) + " chunks";
      else if (t.sse.has_partial() && !s.done)
        r.error = "stream ended in the middle of an event";
    }
  }
  if (!r.chunks.empty()) r.first_token_ns = r.chunks.front().arrival_ns;
  int counted = 0;
  for (const ChunkRecord& c : r.chunks) counted += c.tokens;
  r.output_tokens = r.completion_tokens.value_or(counted);
  r.ok = r.error.empty();
  if (keep_events) r.events = std::move(t.events);
}

}  // namespace client_detail

std::optional<std::int64_t> RequestRecord::ttft_ns() const {
  if (!ok || first_token_ns < 0) return std::nullopt;
  return first_token_ns - send_ns;
}

std::optional<std::int64_t> RequestRecord::e2el_ns() const {
  if (!ok) return std::nullopt;
  return end_ns - send_ns;
}

std::optional<double> RequestRecord::tpot_ns() const {
  const auto ttft = ttft_ns();  // unknown without a streamed first token (--no-stream)
  if (!ok || output_tokens < 2 || !ttft) return std::nullopt;
  return double(*e2el_ns() - *ttft) / double(output_tokens - 1);
}

LoadClient::LoadClient(ClientOptions opt) : opt_(std::move(opt)) {
  client_detail::global_init();
  multi_ = curl_multi_init();
  if (!multi_) throw Error("curl_multi_init failed");
}

LoadClient::~LoadClient() {
  if (multi_) curl_multi_cleanup(static_cast<CURLM*>(multi_));
}

LevelOutcome LoadClient::run(const LevelDrive& d) {
  CURLM* multi = static_cast<CURLM*>(multi_);
  const int cap = d.concurrency > 0 ? d.concurrency : d.max_in_flight > 0 ? d.max_in_flight : 1 << 30;
  // Keep a connection per stream open between requests (and levels).
  curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, long(std::min(cap, 4096) + 8));
  curl_slist* raw = nullptr;
  raw = curl_slist_append(raw, "Content-Type: application/json");
  raw = curl_slist_append(raw, "Accept: text/event-stream");
  raw = curl_slist_append(raw, "Expect:");  // no 100-continue round trip
  if (!opt_.api_key.empty())
    raw = curl_slist_append(raw, ("Authorization: Bearer " + opt_.api_key).c_str());
  std::unique_ptr<curl_slist, void (*)(curl_slist*)> headers(raw, curl_slist_free_all);
  client_detail::LevelRun level(multi, headers.get(), opt_, d);
  return level.run();
}

namespace {

struct BoundedBody {
  std::string* out;
  std::size_t max_bytes;  // 0: none
  bool over = false;
};

HttpResponse simple_request(const std::string& url, const std::string* post_body,
                            double timeout_s, const std::string& api_key,
                            std::size_t max_bytes = 0) {
  client_detail::global_init();
  HttpResponse r;
  std::unique_ptr<CURL, void (*)(CURL*)> e(curl_easy_init(), curl_easy_cleanup);
  if (!e) throw Error("curl_easy_init failed");
  char errbuf[CURL_ERROR_SIZE] = {};
  curl_slist* h = nullptr;
  h = curl_slist_append(h, "Content-Type: application/json");
  h = curl_slist_append(h, "Expect:");
  if (!api_key.empty()) h = curl_slist_append(h, ("Authorization: Bearer " + api_key).c_str());
  std::unique_ptr<curl_slist, void (*)(curl_slist*)> headers(h, curl_slist_free_all);
  curl_easy_setopt(e.get(), CURLOPT_URL, url.c_str());
  if (post_body) {
    curl_easy_setopt(e.get(), CURLOPT_POST, 1L);
    curl_easy_setopt(e.get(), CURLOPT_POSTFIELDS, post_body->c_str());
    curl_easy_setopt(e.get(), CURLOPT_POSTFIELDSIZE, long(post_body->size()));
  }
  curl_easy_setopt(e.get(), CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(e.get(), CURLOPT_TIMEOUT_MS, long(timeout_s * 1000));
  curl_easy_setopt(e.get(), CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e.get(), CURLOPT_ERRORBUFFER, errbuf);
  BoundedBody sink{&r.body, max_bytes};
  curl_easy_setopt(e.get(), CURLOPT_WRITEFUNCTION,
                   +[](char* p, std::size_t s, std::size_t n, void* u) -> std::size_t {
                     auto* b = static_cast<BoundedBody*>(u);
                     if (b->max_bytes && b->out->size() + s * n > b->max_bytes) {
                       b->over = true;
                       return 0;  // ends the transfer
                     }
                     b->out->append(p, s * n);
                     return s * n;
                   });
  curl_easy_setopt(e.get(), CURLOPT_WRITEDATA, &sink);
  const CURLcode rc = curl_easy_perform(e.get());
  if (sink.over) {
    r.body.clear();
    r.error = "response larger than " + std::to_string(max_bytes) + " bytes";
    return r;
  }
  if (rc != CURLE_OK) {
    r.error = errbuf[0] ? errbuf : curl_easy_strerror(rc);
    return r;
  }
  long code = 0;
  curl_easy_getinfo(e.get(), CURLINFO_RESPONSE_CODE, &code);
  r.status = int(code);
  return r;
}

}  // namespace

HttpResponse http_get(const std::string& url, double timeout_s, std::size_t max_bytes) {
  return simple_request(url, nullptr, timeout_s, "", max_bytes);
}

HttpResponse http_post_json(const std::string& url, const std::string& body, double timeout_s,
                            const std::string& api_key) {
  return simple_request(url, &body, timeout_s, api_key);
}

}  // namespace llmbench
