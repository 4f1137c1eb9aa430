// The steady part of a load level (issue 43): the span in which the server ran at the load the
// level asked for, and the latencies and throughput within it, beside the whole-level figures
// (which include the ramp-up, when requests in flight climb from 0, and the drain, when the
// last ones finish alone). docs/serving.md, "Steady state", states the rule:
//   - a concurrency level: the longest span in which the requests in flight stay at or above
//     ceil(fraction x concurrency) (fraction 0.9 by default; vllm-bench's rule), dips of less
//     than 50 ms (the client's turnaround between one request's end and the next send) ignored;
//   - a rate or trace level: from the first request's end (the ramp-up: until then the server
//     has never completed work in flow) to the last request's send (the drain: after it no
//     new arrival keeps the load up).
// Within the window: TTFT of requests sent in it, TPOT and E2EL of requests sent and finished in
// it, ITL of gaps whose both chunks arrived in it, output tokens of chunks that arrived in it
// per second of window. Pure arithmetic on the client's records, tested with exact values.
// Deliberately not: a saturation test (that is the over-capacity guard's job).
#pragma once
#include <optional>
#include <vector>

#include "engine/bench/stats.h"
#include "tools/load/load_client.h"
#include "tools/load/load_plan.h"

namespace llmbench {

inline constexpr double kSteadyFraction = 0.9;
// A dip below the level shorter than this does not end a concurrency window: the client's
// turnaround from one request's end to the next one's send.
inline constexpr std::int64_t kSteadyDipNs = 50'000'000;

struct SteadyWindow {
  std::int64_t start_ns = 0, end_ns = 0;  // on the level's clock (RequestRecord's)
  double length_s = 0;
  int requests = 0;                 // ok requests sent in the window
  std::optional<SampleStats> ttft_ms, tpot_ms, itl_ms, e2el_ms;
  double output_tok_s = 0;          // tokens of chunks that arrived in the window / length_s
  double level_s = 0;               // the whole level: earliest send to latest end
  // Shorter than max(10 s, 10% of the level): its figures rest on too little time.
  bool short_window = false;
};

// The window of `requests` (one level) run as `spec`; nullopt when there is none (no ok request,
// or the level never reached ceil(fraction x concurrency) in flight).
std::optional<SteadyWindow> steady_window(const std::vector<RequestRecord>& requests,
                                          const LevelSpec& spec,
                                          double fraction = kSteadyFraction);

}  // namespace llmbench
