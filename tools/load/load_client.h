// The streaming HTTP client of `llmbench load`: libcurl's multi interface (Debian
// libcurl4-openssl-dev), one event loop on one thread for every stream of a level. It starts
// requests when they are due (a fixed number in flight, or at the arrival offsets of a rate
// level), stamps every byte's arrival with steady_clock inside the loop, and enforces the
// timeouts itself (connect, first byte, idle stream), so a dead or hung server costs at most
// a timeout per request, never a hang. SSE events are split in the loop; their JSON is parsed
// after the level, outside the timed loop (stream_parse.h). Also small blocking helpers for
// /health, /v1/models and the probe request.
// Not here: what the requests contain (load_plan.h), metrics, storage.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tools/load/saturation.h"
#include "tools/load/stream_parse.h"

namespace llmbench {

// One request as the client saw it. Times are ns since the level's origin (steady_clock at
// the level's start); -1 when the point was never reached.
struct RequestRecord {
  int index = 0;                  // 0-based in the level, in start order
  int session_index = 0;          // 0-based session (a single-turn request is its own session)
  int turn_index = 0;             // 0-based turn in its session
  int input_len = 0;              // prompt tokens sent (token ids) or aimed at (text)
  int max_tokens = 0;
  std::int64_t scheduled_ns = -1; // when it was due: a rate level's arrival offset, a trace's
                                  // timestamp, or a later turn's previous end + think time
  std::int64_t send_ns = -1;      // just before the request was handed to libcurl
  std::int64_t first_byte_ns = -1;   // first response byte (headers included)
  std::int64_t first_token_ns = -1;  // first chunk with output
  std::int64_t end_ns = -1;       // last byte of the response (normally [DONE]), or the failure
  int http_status = 0;            // 0: no response
  bool ok = false;
  std::string error;              // why it failed ("" when ok)
  std::string finish_reason;
  std::optional<int> prompt_tokens, completion_tokens;  // the server's usage
  int output_tokens = 0;          // usage.completion_tokens, else the chunks' token counts
  std::vector<ChunkRecord> chunks;
  std::vector<SseEvent> events;   // kept only with ClientOptions::keep_events
  std::string reply_text;         // the output text, kept only for multi-turn sessions
  std::string x_request_id;       // the X-Request-Id header it was sent with ("" none)

  std::optional<std::int64_t> ttft_ns() const;
  std::optional<std::int64_t> e2el_ns() const;
  // (E2EL - TTFT) / (output tokens - 1); nullopt below 2 tokens or for a failed request.
  std::optional<double> tpot_ns() const;
};

// The error of a request in flight when --stop-on-saturation ended its level: stored as failed
// (it did not complete), but the tool's own doing, not the server's: no exit 1 for it.
inline constexpr const char* kAbortedOverCapacity =
    "aborted: the level was over capacity (--stop-on-saturation)";

struct ClientOptions {
  std::string url;  // the endpoint: http://HOST:PORT/v1/completions or .../chat/completions
  bool chat = false;
  double connect_timeout_s = 10, first_byte_timeout_s = 600, idle_timeout_s = 60;
  // A request not finished this long after it was sent fails (a stream that never ends: a
  // token every 0.5 s, or only keep-alive comments). 0: 300 s + 1 s per max_tokens.
  double request_timeout_s = 0;
  // What one response may make the client hold, whatever the server sends: an SSE line (an
  // event's data included), and data events beyond max_tokens (a server that sends more chunks
  // than it was asked for tokens). Either fails the request and closes its connection.
  std::size_t max_line_bytes = std::size_t(1) << 20;
  // Events allowed: events_per_token x max_tokens + extra_events (role, usage, [DONE], ...).
  int events_per_token = 2, extra_events = 16;
  std::string api_key;       // "Authorization: Bearer KEY" when not empty
  bool keep_events = false;  // keep every SSE event in RequestRecord::events (tests, benches)
  // false (`load --no-stream`): requests ask for one JSON answer; no chunk is timed (TTFT, TPOT
  // and ITL unknown), tokens come from usage (stream_parse.h's parse_completion).
  bool stream = true;
};

// What the loop knows while a level runs, for the live progress line (load_progress.h). The
// streams are parsed only after the level, so the live figures come from the SSE splitter:
// first_event_ns is the first data event's arrival less the send (TTFT when the server's first
// event carries output, as vLLM's, SGLang's and llmbench's do), and output_events counts the
// finished requests' data events other than [DONE] and a final usage-only event.
struct LiveCounts {
  int started = 0, finished = 0, failed = 0;
  std::int64_t elapsed_ns = 0;                // since the level's origin
  std::vector<std::int64_t> first_event_ns;   // of finished requests that had an event
  long long output_events = 0;
};

// What one level asks of the loop. The loop starts sessions; a session is one request unless
// `turns` says otherwise, and then its turns go one after another (multi-turn), each after the
// previous one ended and its think time passed. Concurrency, arrivals, max_requests and
// max_in_flight count sessions: a session holds its slot through its think times.
struct LevelDrive {
  int max_requests = 0;                 // sessions to start (a cap when duration_s is set)
  double duration_s = 0;                // > 0: start no request after this many seconds
  int concurrency = 0;                  // > 0: keep this many sessions open (concurrency mode)
  std::vector<double> arrival_s;        // else: start session i at arrival_s[i] (rate mode)
  int max_in_flight = 0;                // rate mode: cap (0: none); a capped start is late
  // The body of a request; rec.index, session_index and turn_index are set, the callee fills
  // rec.input_len and rec.max_tokens. Called in the loop when the request is due: keep it cheap.
  std::function<std::string(int index, RequestRecord& rec)> make_body;
  // Request i is sent with the header "X-Request-Id: <request_id_prefix>-<i>" ("": none), the
  // id a `serve --db` database stores beside its own rows (docs/serving.md, "Request ids").
  std::string request_id_prefix;
  // Multi-turn (null: one request per session): the number of turns of session s, and the think
  // time in ns before turn t (> 0) of session s. A failed turn ends its session.
  std::function<int(int session)> turns;
  std::function<std::int64_t(int session, int turn)> think_ns;
  // Multi-turn: called in the loop when a turn has ended, with its record parsed (reply_text
  // set), before the session's next turn is made.
  std::function<void(const RequestRecord&)> on_turn_done;
  std::function<bool()> should_stop;    // polled in the loop (Ctrl-C)
  // Called at most every progress_interval_s (and once at the end) with what is known so far.
  std::function<void(const LiveCounts&)> progress;
  double progress_interval_s = 0.5;
  // Rate levels: the saturation guard (saturation.h) watches the level; with stop_on_saturation
  // the level ends when it fires (no new request starts, those in flight are aborted).
  std::optional<SaturationParams> saturation;
  bool stop_on_saturation = false;
};

struct LevelOutcome {
  std::chrono::steady_clock::time_point origin;
  std::vector<RequestRecord> requests;  // every started request, in start order
  bool interrupted = false;             // should_stop() ended it; in-flight requests aborted
  // The saturation guard's verdict (LevelDrive::saturation): nullopt when it did not watch or
  // the level was shorter than its window; the time it fired; whether that ended the level.
  std::optional<bool> over_capacity;
  std::optional<std::int64_t> saturation_ns;
  bool stopped_early = false;
  SaturationGuard::Evidence saturation_evidence;
};

class LoadClient {
 public:
  explicit LoadClient(ClientOptions opt);
  ~LoadClient();
  LoadClient(const LoadClient&) = delete;
  LoadClient& operator=(const LoadClient&) = delete;

  // Runs one level to its end: every started request finished, failed or timed out.
  LevelOutcome run(const LevelDrive& drive);

  const ClientOptions& options() const { return opt_; }

 private:
  ClientOptions opt_;
  void* multi_ = nullptr;  // CURLM*, kept across levels so connections are reused
};

struct HttpResponse {
  int status = 0;        // 0: no response
  std::string body;
  std::string error;     // transport error ("" when a response came)
};
// Blocking GET / POST (JSON body) with one overall timeout.
// `max_bytes` (0: none) bounds the body: a larger one ends the transfer, status 0, error
// "response larger than N bytes".
HttpResponse http_get(const std::string& url, double timeout_s, std::size_t max_bytes = 0);
HttpResponse http_post_json(const std::string& url, const std::string& body, double timeout_s,
                            const std::string& api_key = "");

}  // namespace llmbench
