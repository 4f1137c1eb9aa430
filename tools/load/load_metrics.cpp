// Serving metrics of a level (see load_metrics.h and docs/metrics.md).
#include "tools/load/load_metrics.h"

#include <algorithm>
#include <limits>

#include "engine/bench/stats.h"

namespace llmbench {

std::optional<Dist> distribution(const std::vector<double>& xs) {
  if (xs.empty()) return std::nullopt;
  return sample_stats(xs);
}

int input_tokens_of(const RequestRecord& r) { return r.prompt_tokens.value_or(r.input_len); }

std::optional<std::int64_t> ttst_ns(const RequestRecord& r) {
  if (!r.ok || r.send_ns < 0) return std::nullopt;
  int tokens = 0;
  for (const ChunkRecord& c : r.chunks) {
    tokens += c.tokens;
    if (tokens >= 2) return c.arrival_ns - r.send_ns;
  }
  return std::nullopt;
}

bool meets_slo(const RequestRecord& r, const GoodputSlo& slo) {
  if (!r.ok) return false;
  // An unknown TTFT (--no-stream; the plan refuses that pairing) cannot be shown to meet it.
  if (slo.ttft_ms && (!r.ttft_ns() || double(*r.ttft_ns()) / 1e6 > *slo.ttft_ms)) return false;
  if (slo.e2el_ms && double(*r.e2el_ns()) / 1e6 > *slo.e2el_ms) return false;
  if (slo.tpot_ms) {
    const auto tpot = r.tpot_ns();
    if (tpot && *tpot / 1e6 > *slo.tpot_ms) return false;
  }
  return true;
}

LevelSummary summarize_level(const std::vector<RequestRecord>& requests, const GoodputSlo& slo) {
  LevelSummary s;
  s.requests = int(requests.size());
  std::int64_t first = std::numeric_limits<std::int64_t>::max(), last = 0;
  std::vector<double> ttft, ttst, tpot, itl, e2el, user;
  double asked_in = 0, asked_out = 0, run_in = 0, run_out = 0;
  int n_run_in = 0, n_run_out = 0;
  for (const RequestRecord& r : requests) {
    first = std::min(first, r.send_ns);
    last = std::max(last, r.end_ns);
    if (!r.ok) {
      ++s.failed;
      if (s.first_error.empty()) s.first_error = r.error;
      continue;
    }
    ++s.ok;
    s.input_tokens += input_tokens_of(r);
    s.output_tokens += r.output_tokens;
    asked_in += r.input_len;
    asked_out += r.max_tokens;
    if (r.prompt_tokens) run_in += *r.prompt_tokens, ++n_run_in;
    if (r.completion_tokens) run_out += *r.completion_tokens, ++n_run_out;
    if (auto t = r.ttft_ns()) ttft.push_back(double(*t) / 1e6);
    if (auto t = ttst_ns(r)) ttst.push_back(double(*t) / 1e6);
    e2el.push_back(double(*r.e2el_ns()) / 1e6);
    if (auto t = r.tpot_ns()) tpot.push_back(*t / 1e6);
    for (std::size_t i = 1; i < r.chunks.size(); ++i)
      itl.push_back(double(r.chunks[i].arrival_ns - r.chunks[i - 1].arrival_ns) / 1e6);
    if (*r.e2el_ns() > 0) user.push_back(double(r.output_tokens) / (double(*r.e2el_ns()) / 1e9));
    if (slo.any() && meets_slo(r, slo)) ++s.good;
  }
  if (s.requests > 0 && last > first) s.duration_s = double(last - first) / 1e9;
  if (s.duration_s > 0) {
    s.request_throughput = s.ok / s.duration_s;
    s.output_tok_s = double(s.output_tokens) / s.duration_s;
    s.total_tok_s = double(s.input_tokens + s.output_tokens) / s.duration_s;
    if (slo.any()) s.goodput_req_s = s.good / s.duration_s;
  }
  if (slo.any() && s.requests > 0) s.good_fraction = double(s.good) / s.requests;
  if (s.ok > 0) {
    s.input_tokens_requested = asked_in / s.ok;
    s.output_tokens_requested = asked_out / s.ok;
  }
  if (n_run_in > 0) s.input_tokens_run = run_in / n_run_in;
  if (n_run_out > 0) s.output_tokens_run = run_out / n_run_out;
  s.ttft_ms = distribution(ttft);
  s.ttst_ms = distribution(ttst);
  s.tpot_ms = distribution(tpot);
  s.itl_ms = distribution(itl);
  s.e2el_ms = distribution(e2el);
  s.user_tok_s = distribution(user);
  return s;
}

}  // namespace llmbench
