// The serving metrics of one level, from the client's records (docs/metrics.md, "Serving
// metrics (llmbench load)", defines each with its clock points): TTFT, ITL per gap, TPOT per
// request, E2EL, per-user tokens/s, request and token throughput, goodput under SLOs, errors.
// Pure arithmetic on the records, tested with exact values; the statistics are engine/bench/stats.h's
// (type-7 percentiles, sample stdev), the same as the SQL functions of `llmbench query`.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "engine/bench/stats.h"
#include "tools/load/load_client.h"
#include "tools/load/load_plan.h"

namespace llmbench {

// Mean, sample stdev and percentiles of one latency (or rate), over its samples.
using Dist = SampleStats;
// nullopt for no samples.
std::optional<Dist> distribution(const std::vector<double>& xs);

struct LevelSummary {
  int requests = 0, ok = 0, failed = 0;
  double duration_s = 0;            // earliest send to latest end, over every request
  double request_throughput = 0;    // ok requests / duration_s
  long long input_tokens = 0, output_tokens = 0;  // over ok requests
  // Per ok request, means: the tokens asked for (prompt length sent or aimed at, max_tokens)
  // and the tokens the server says it ran (usage; nullopt when no request reported usage).
  std::optional<double> input_tokens_requested, output_tokens_requested;
  std::optional<double> input_tokens_run, output_tokens_run;
  double output_tok_s = 0, total_tok_s = 0;       // / duration_s
  std::optional<Dist> ttft_ms, tpot_ms, itl_ms, e2el_ms, user_tok_s;
  // Time to second token: send to the chunk that brings the output to 2 tokens, over ok requests
  // with at least 2 tokens. TTFT alone hides a first chunk sent early (a role-only or empty
  // delta that still counts as output) or a prefill that finishes in a second step.
  std::optional<Dist> ttst_ms;
  // With --goodput: ok requests meeting every limit, per second, and their share of requests.
  std::optional<double> goodput_req_s, good_fraction;
  int good = 0;
  std::string first_error;          // of the first failed request ("" if none)
};

LevelSummary summarize_level(const std::vector<RequestRecord>& requests, const GoodputSlo& slo);

// Send to the arrival of the chunk that brings the request's output to 2 tokens; nullopt for a
// failed request or one with fewer than 2 tokens.
std::optional<std::int64_t> ttst_ns(const RequestRecord& r);

// The input tokens of a request: the server's usage.prompt_tokens when reported, else the
// prompt length sent.
int input_tokens_of(const RequestRecord& r);

// Whether an ok request meets every limit of `slo` (TPOT is not checked for one-token
// outputs, which have none).
bool meets_slo(const RequestRecord& r, const GoodputSlo& slo);

}  // namespace llmbench
