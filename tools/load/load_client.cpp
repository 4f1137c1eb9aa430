// The libcurl multi event loop (see load_client.h).
#include "tools/load/load_client.h"

#include <curl/curl.h>
#include <nlohmann/json.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>

#include "kernels/common/error.h"

namespace llmbench {

namespace {

using Clock = std::chrono::steady_clock;

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) throw Error("curl_global_init failed");
  });
}

constexpr std::size_t kErrorBodyBytes = 2048;  // kept of a non-200 body, for the message

// One request in flight.
struct Transfer {
  CURL* easy = nullptr;
  std::string body;
  RequestRecord rec;
  SseSplitter sse;
  std::vector<SseEvent> events;
  std::string head;  // the first bytes of the body (error messages of non-200 answers)
  std::int64_t last_data_ns = -1;  // the last body byte (-1: no body yet)
  Clock::time_point origin;
  char errbuf[CURL_ERROR_SIZE] = {};
  CURLcode result = CURLE_OK;
  std::string timeout;  // set when the loop gave up on it

  ~Transfer() {
    if (easy) curl_easy_cleanup(easy);
  }
};

std::int64_t since(Clock::time_point origin, Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t - origin).count();
}

// libcurl's write callback: every byte of the response body passes here as it arrives.
std::size_t on_write(char* p, std::size_t size, std::size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::int64_t now = since(t->origin, Clock::now());
  const std::size_t len = size * n;
  if (t->rec.first_byte_ns < 0) t->rec.first_byte_ns = now;
  t->last_data_ns = now;
  if (t->head.size() < kErrorBodyBytes)
    t->head.append(p, std::min(len, kErrorBodyBytes - t->head.size()));
  t->sse.feed(p, len, now, t->events);
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

std::string server_message(const std::string& body) {
  // OpenAI-style {"error": {"message": ...}}, else the text itself.
  const auto j = nlohmann::json::parse(body, nullptr, false);
  std::string msg = body;
  if (j.is_object() && j.contains("error")) {
    const auto& e = j["error"];
    msg = e.is_object() && e.contains("message") && e["message"].is_string()
              ? e["message"].get<std::string>()
              : e.is_string() ? e.get<std::string>() : e.dump();
  } else if (j.is_object() && j.contains("message") && j["message"].is_string()) {
    msg = j["message"].get<std::string>();
  }
  for (char& c : msg)
    if (c == '\n' || c == '\r') c = ' ';
  return msg.size() > 200 ? msg.substr(0, 200) + "..." : msg;
}

// Turns a finished transfer into its record: transport result, status, then the stream.
void finish_record(Transfer& t, bool chat, bool keep_events) {
  RequestRecord& r = t.rec;
  if (r.end_ns < 0) r.end_ns = t.last_data_ns >= 0 ? t.last_data_ns : r.send_ns;
  if (!t.timeout.empty()) {
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
    ParsedStream s = parse_stream(t.events, chat);
    r.chunks = std::move(s.chunks);
    r.prompt_tokens = s.prompt_tokens;
    r.completion_tokens = s.completion_tokens;
    r.finish_reason = s.finish_reason;
    if (r.error.empty()) {
      if (!s.error.empty()) r.error = s.error;
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

}  // namespace

std::optional<std::int64_t> RequestRecord::ttft_ns() const {
  if (!ok || first_token_ns < 0) return std::nullopt;
  return first_token_ns - send_ns;
}

std::optional<std::int64_t> RequestRecord::e2el_ns() const {
  if (!ok) return std::nullopt;
  return end_ns - send_ns;
}

std::optional<double> RequestRecord::tpot_ns() const {
  if (!ok || output_tokens < 2) return std::nullopt;
  return double(*e2el_ns() - *ttft_ns()) / double(output_tokens - 1);
}

LoadClient::LoadClient(ClientOptions opt) : opt_(std::move(opt)) {
  global_init();
  multi_ = curl_multi_init();
  if (!multi_) throw Error("curl_multi_init failed");
}

LoadClient::~LoadClient() {
  if (multi_) curl_multi_cleanup(static_cast<CURLM*>(multi_));
}

LevelOutcome LoadClient::run(const LevelDrive& d) {
  CURLM* multi = static_cast<CURLM*>(multi_);
  const bool rate_mode = d.concurrency <= 0;
  const int cap = rate_mode ? (d.max_in_flight > 0 ? d.max_in_flight : 1 << 30) : d.concurrency;
  // Keep a connection per stream open between requests (and levels).
  curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, long(std::min(cap, 4096) + 8));

  struct SlistDeleter {
    void operator()(curl_slist* s) const { curl_slist_free_all(s); }
  };
  curl_slist* raw_headers = nullptr;
  raw_headers = curl_slist_append(raw_headers, "Content-Type: application/json");
  raw_headers = curl_slist_append(raw_headers, "Accept: text/event-stream");
  raw_headers = curl_slist_append(raw_headers, "Expect:");  // no 100-continue round trip
  if (!opt_.api_key.empty())
    raw_headers = curl_slist_append(raw_headers, ("Authorization: Bearer " + opt_.api_key).c_str());
  std::unique_ptr<curl_slist, SlistDeleter> headers(raw_headers);

  LevelOutcome out;
  out.origin = Clock::now();
  const std::int64_t duration_ns =
      d.duration_s > 0 ? std::int64_t(d.duration_s * 1e9) : std::numeric_limits<std::int64_t>::max();
  const std::int64_t connect_ms = std::int64_t(opt_.connect_timeout_s * 1000);
  const std::int64_t first_byte_ns = std::int64_t(opt_.first_byte_timeout_s * 1e9);
  const std::int64_t idle_ns = std::int64_t(opt_.idle_timeout_s * 1e9);

  std::vector<std::unique_ptr<Transfer>> done;  // parsed after the loop
  std::vector<Transfer*> active;
  int started = 0, finished = 0, failed_transport = 0;
  bool stop_starting = false;

  auto start_one = [&](std::int64_t scheduled_ns) {
    auto t = std::make_unique<Transfer>();
    t->origin = out.origin;
    t->rec.index = started;
    t->rec.scheduled_ns = scheduled_ns;
    t->body = d.make_body(started, t->rec);
    CURL* e = curl_easy_init();
    if (!e) throw Error("curl_easy_init failed");
    t->easy = e;
    curl_easy_setopt(e, CURLOPT_URL, opt_.url.c_str());
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, t->body.c_str());
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, long(t->body.size()));
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers.get());
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, t.get());
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, t.get());
    curl_easy_setopt(e, CURLOPT_PRIVATE, t.get());
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t->errbuf);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, long(connect_ms));
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, long(CURL_HTTP_VERSION_1_1));
    t->rec.send_ns = since(out.origin, Clock::now());
    if (curl_multi_add_handle(multi, e) != CURLM_OK) throw Error("curl_multi_add_handle failed");
    active.push_back(t.get());
    t.release();
    ++started;
  };
  auto retire = [&](Transfer* t) {
    curl_multi_remove_handle(multi, t->easy);
    active.erase(std::find(active.begin(), active.end(), t));
    done.emplace_back(t);
    ++finished;
  };

  Clock::time_point last_progress = out.origin, last_timeout_check = out.origin;
  while (true) {
    const Clock::time_point now_tp = Clock::now();
    const std::int64_t now = since(out.origin, now_tp);
    if (d.should_stop && d.should_stop()) {
      out.interrupted = true;
      break;
    }
    // Start what is due.
    if (!stop_starting) {
      if (now >= duration_ns) stop_starting = true;
      if (rate_mode) {
        while (started < d.max_requests && started < int(d.arrival_s.size()) &&
               int(active.size()) < cap && std::int64_t(d.arrival_s[started] * 1e9) <= now &&
               !stop_starting)
          start_one(std::int64_t(d.arrival_s[started] * 1e9));
      } else {
        while (started < d.max_requests && int(active.size()) < cap && !stop_starting)
          start_one(-1);
      }
    }
    const bool all_started = stop_starting || started >= d.max_requests ||
                             (rate_mode && started >= int(d.arrival_s.size()));
    if (all_started && active.empty()) break;

    int running = 0;
    curl_multi_perform(multi, &running);
    int left = 0;
    while (CURLMsg* m = curl_multi_info_read(multi, &left)) {
      if (m->msg != CURLMSG_DONE) continue;
      Transfer* t = nullptr;
      curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, reinterpret_cast<char**>(&t));
      t->result = m->data.result;
      long code = 0;
      curl_easy_getinfo(m->easy_handle, CURLINFO_RESPONSE_CODE, &code);
      t->rec.http_status = int(code);
      t->rec.end_ns = t->last_data_ns >= 0 ? t->last_data_ns : since(out.origin, Clock::now());
      if (t->result != CURLE_OK || code != 200) ++failed_transport;
      retire(t);
    }
    // Timeouts: first byte and idle stream (libcurl enforces the connect timeout).
    const Clock::time_point after = Clock::now();
    if (after - last_timeout_check > std::chrono::milliseconds(2)) {
      last_timeout_check = after;
      const std::int64_t t_now = since(out.origin, after);
      for (std::size_t i = 0; i < active.size();) {
        Transfer* t = active[i];
        if (t->last_data_ns < 0 && t_now - t->rec.send_ns > first_byte_ns)
          t->timeout = fmt::format("first-byte timeout: no response body within {:g} s",
                                   opt_.first_byte_timeout_s);
        else if (t->last_data_ns >= 0 && t_now - t->last_data_ns > idle_ns)
          t->timeout = fmt::format("idle timeout: no data for {:g} s after {} events",
                                   opt_.idle_timeout_s, t->events.size());
        if (!t->timeout.empty()) {
          t->rec.end_ns = t_now;
          long code = 0;
          curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &code);
          t->rec.http_status = int(code);
          ++failed_transport;
          retire(t);  // removes it from `active`: do not advance i
        } else {
          ++i;
        }
      }
    }
    if (d.progress && after - last_progress > std::chrono::seconds(1)) {
      last_progress = after;
      d.progress(started, finished, failed_transport);
    }
    // A finished request frees a slot: start the next one at once (concurrency mode).
    if (!rate_mode && !stop_starting && started < d.max_requests && int(active.size()) < cap)
      continue;
    // Sleep until a socket is ready, the next arrival is due, or a timeout check is due.
    std::int64_t wait_ns = 10'000'000;
    if (rate_mode && !stop_starting && started < int(d.arrival_s.size()) &&
        started < d.max_requests && int(active.size()) < cap)
      wait_ns = std::min(wait_ns, std::int64_t(d.arrival_s[started] * 1e9) - since(out.origin, Clock::now()));
    if (d.duration_s > 0 && !stop_starting)
      wait_ns = std::min(wait_ns, duration_ns - since(out.origin, Clock::now()));
    if (wait_ns >= 1'000'000 || !active.empty()) {
      // Poll in whole ms; an arrival less than 1 ms away is waited for by the next pass.
      int numfds = 0;
      curl_multi_poll(multi, nullptr, 0, int(std::max<std::int64_t>(0, wait_ns / 1'000'000)), &numfds);
    }
  }
  // Interrupted: abort what is in flight.
  for (Transfer* t : std::vector<Transfer*>(active)) {
    t->timeout = "interrupted";
    t->rec.end_ns = since(out.origin, Clock::now());
    retire(t);
  }
  // Parse every stream now that the timed loop is over; records in start order.
  std::sort(done.begin(), done.end(),
            [](const auto& a, const auto& b) { return a->rec.index < b->rec.index; });
  out.requests.reserve(done.size());
  for (auto& t : done) {
    finish_record(*t, opt_.chat, opt_.keep_events);
    out.requests.push_back(std::move(t->rec));
    t.reset();
  }
  if (d.progress) d.progress(started, finished, failed_transport);
  return out;
}

namespace {

HttpResponse simple_request(const std::string& url, const std::string* post_body,
                            double timeout_s, const std::string& api_key) {
  global_init();
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
  curl_easy_setopt(e.get(), CURLOPT_WRITEFUNCTION,
                   +[](char* p, std::size_t s, std::size_t n, void* u) {
                     static_cast<std::string*>(u)->append(p, s * n);
                     return s * n;
                   });
  curl_easy_setopt(e.get(), CURLOPT_WRITEDATA, &r.body);
  const CURLcode rc = curl_easy_perform(e.get());
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

HttpResponse http_get(const std::string& url, double timeout_s) {
  return simple_request(url, nullptr, timeout_s, "");
}

HttpResponse http_post_json(const std::string& url, const std::string& body, double timeout_s,
                            const std::string& api_key) {
  return simple_request(url, &body, timeout_s, api_key);
}

}  // namespace llmbench
