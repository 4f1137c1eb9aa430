// Inside the load client (load_client.h): one request in flight as libcurl's easy handle sees
// it, the callbacks that stamp its bytes, and the step that turns a finished transfer into its
// RequestRecord. Shared by the level loop (client_level.cpp) and load_client.cpp; not a public
// interface of the library.
#pragma once
#include <curl/curl.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "tools/load/load_client.h"

namespace llmbench::client_detail {

using Clock = std::chrono::steady_clock;

inline std::int64_t since(Clock::time_point origin, Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t - origin).count();
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
  std::string answer;  // a non-streamed answer's whole body (ClientOptions::stream false)
  bool stream = true;
  std::int64_t last_data_ns = -1;  // the last body byte (-1: no body yet)
  std::int64_t first_event_ns = -1;  // the first SSE data event's arrival (live progress)
  Clock::time_point origin;
  char errbuf[CURL_ERROR_SIZE] = {};
  CURLcode result = CURLE_OK;
  std::string timeout;  // set when the loop gave up on it
  std::string limit;    // set when the response passed a bound (line, events, bytes): aborted
  std::size_t body_bytes = 0;
  std::size_t max_events = 0;      // data events this response may carry
  std::size_t max_body_bytes = 0;  // bytes this response may carry
  std::int64_t deadline_ns = 0;    // since the level's origin: the whole request's deadline
  std::size_t sse_max_line = 0;    // the splitter's line bound (for the message)
  bool parsed = false;  // finish_record has run (multi-turn parses in the loop)
  bool ttft_seen = false;  // its first event was given to the saturation guard

  Transfer() = default;
  Transfer(const Transfer&) = delete;
  Transfer& operator=(const Transfer&) = delete;
  curl_slist* headers = nullptr;  // its own request headers (X-Request-Id), when it has any
  ~Transfer() {
    if (easy) curl_easy_cleanup(easy);
    if (headers) curl_slist_free_all(headers);
  }
};

// libcurl's write callback: every byte of the response body passes here as it arrives.
std::size_t on_write(char* p, std::size_t size, std::size_t n, void* user);
// Headers count as the response's first byte (a 500 may come with no body at all).
std::size_t on_header(char* p, std::size_t size, std::size_t n, void* user);

// Turns a finished transfer into its record: transport result, status, then the stream.
// `collect_text`: keep the output text in rec.reply_text.
void finish_record(Transfer& t, bool chat, bool keep_events, bool collect_text);

void global_init();

}  // namespace llmbench::client_detail
