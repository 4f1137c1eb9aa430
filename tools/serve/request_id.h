// The X-Request-Id of a served request (docs/serving.md, "Request ids"): the id a client sent,
// when it is one a database and a log line can hold safely, else one the server makes. Either
// way the response carries it back in its own X-Request-Id header and `serve --db` stores it in
// serve_request.x_request_id, where `load`'s copy (load_request.x_request_id) joins it.
// Not here: reading headers (http_request.h) or storing rows (serve_store.h).
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

namespace llmbench {

// Longest X-Request-Id kept as sent (vLLM and most proxies send 32-64 characters).
inline constexpr std::size_t kMaxRequestIdBytes = 128;

// True when `id` may be kept as sent: 1..kMaxRequestIdBytes bytes, each printable ASCII
// (0x21..0x7e: no spaces, controls, quotes' escapes or bytes >= 0x80 to confuse a log or a
// terminal). Anything else is replaced, never echoed.
bool acceptable_request_id(std::string_view id);

class RequestIds {
 public:
  // `seed` makes the server's own ids differ between runs (serve: its start time and pid).
  explicit RequestIds(std::uint64_t seed);
  // The id a request is served under: `sent` when acceptable, else "llmbench-<16 hex>-<n>".
  std::string accept(std::string_view sent);

 private:
  std::string prefix_;
  std::atomic<std::uint64_t> next_{0};
};

}  // namespace llmbench
