// vLLM's --save-result object of one level (see vllm_json.h).
#include "tools/load/vllm_json.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/bench/stats.h"
#include "tools/load/load_metrics.h"
#include "tools/store/store.h"

namespace llmbench {

namespace {

// mean, median, population std and p99 of `xs` (ms) under vLLM's key names; 0 when empty, as
// numpy's mean of an empty list would be NaN and vLLM writes 0 there ("or 0").
void add_stats(nlohmann::ordered_json& j, const std::string& metric, std::vector<double> xs) {
  double m = 0, med = 0, sd = 0, p99 = 0;
  if (!xs.empty()) {
    std::sort(xs.begin(), xs.end());
    m = mean(xs);
    med = percentile_sorted(xs, 50);
    p99 = percentile_sorted(xs, 99);
    double ss = 0;
    for (double x : xs) ss += (x - m) * (x - m);
    sd = std::sqrt(ss / double(xs.size()));
  }
  j["mean_" + metric + "_ms"] = m;
  j["median_" + metric + "_ms"] = med;
  j["std_" + metric + "_ms"] = sd;
  j["p99_" + metric + "_ms"] = p99;
}

// vLLM's peak figures: one-second buckets from the earliest send of an ok request; every output
// token counted in the bucket its chunk arrived in, every ok request in each bucket from its
// send's to its end's.
struct PeakSeconds {
  double tokens = 0;
  int requests = 0;
};
PeakSeconds peak_seconds(const std::vector<RequestRecord>& requests) {
  std::int64_t first = std::numeric_limits<std::int64_t>::max(), last = 0;
  for (const RequestRecord& r : requests)
    if (r.ok) first = std::min(first, r.send_ns), last = std::max(last, r.end_ns);
  PeakSeconds p;
  if (last < first) return p;
  const auto buckets = std::size_t((last - first) / 1'000'000'000) + 2;
  std::vector<double> tokens(buckets, 0);
  std::vector<int> active(buckets, 0);
  for (const RequestRecord& r : requests) {
    if (!r.ok) continue;
    for (const ChunkRecord& c : r.chunks) {
      const auto b = std::size_t(std::max<std::int64_t>(0, c.arrival_ns - first) / 1'000'000'000);
      if (b < buckets) tokens[b] += c.tokens;
    }
    const auto from = std::size_t((r.send_ns - first) / 1'000'000'000);
    const auto to = std::min(buckets - 1, std::size_t((r.end_ns - first) / 1'000'000'000));
    for (std::size_t b = from; b <= to; ++b) ++active[b];
  }
  p.tokens = *std::max_element(tokens.begin(), tokens.end());
  p.requests = *std::max_element(active.begin(), active.end());
  return p;
}

}  // namespace

nlohmann::ordered_json vllm_result_json(const LevelSpec& level, int max_in_flight,
                                        const std::vector<RequestRecord>& requests,
                                        const GoodputSlo& slo, const VllmRunFields& run) {
  const LevelSummary s = summarize_level(requests, slo);
  nlohmann::ordered_json j;
  j["date"] = run.date;
  j["endpoint_type"] = run.backend;
  j["label"] = run.label;
  j["backend"] = run.backend;
  j["model_id"] = run.model_id;
  j["tokenizer_id"] = run.model_id;
  j["num_prompts"] = requests.size();
  const bool rate = level.mode == LoadMode::kRate && !std::isinf(level.request_rate);
  j["request_rate"] = rate ? nlohmann::ordered_json(level.request_rate) : nlohmann::ordered_json("inf");
  j["burstiness"] = level.mode == LoadMode::kRate ? level.burstiness : 1.0;
  if (level.mode == LoadMode::kConcurrency) j["max_concurrency"] = level.concurrency;
  else if (max_in_flight > 0) j["max_concurrency"] = max_in_flight;
  else j["max_concurrency"] = nullptr;
  j["duration"] = s.duration_s;
  j["completed"] = s.ok;
  j["failed"] = s.failed;
  j["total_input_tokens"] = s.input_tokens;
  j["total_output_tokens"] = s.output_tokens;
  j["request_throughput"] = s.request_throughput;
  const auto goodput = run.with_goodput && s.goodput_req_s ? nlohmann::ordered_json(*s.goodput_req_s)
                                                           : nlohmann::ordered_json(nullptr);
  j["request_goodput"] = goodput;
  j["request_goodput:"] = goodput;  // the key as older vLLM versions spell it
  j["output_throughput"] = s.output_tok_s;
  j["total_token_throughput"] = s.total_tok_s;

  std::vector<double> ttft, tpot, itl, e2el;
  nlohmann::ordered_json input_lens = nlohmann::ordered_json::array(), output_lens = input_lens,
                         ttfts = input_lens, itls = input_lens, texts = input_lens,
                         errors = input_lens;
  for (const RequestRecord& r : requests) {
    input_lens.push_back(input_tokens_of(r));
    output_lens.push_back(r.ok ? r.output_tokens : 0);
    ttfts.push_back(r.ttft_ns() ? double(*r.ttft_ns()) / 1e9 : 0.0);
    nlohmann::ordered_json gaps = nlohmann::ordered_json::array();
    for (std::size_t i = 1; r.ok && i < r.chunks.size(); ++i) {
      const double gap_s = double(r.chunks[i].arrival_ns - r.chunks[i - 1].arrival_ns) / 1e9;
      gaps.push_back(gap_s);
      itl.push_back(gap_s * 1e3);
    }
    itls.push_back(gaps);
    texts.push_back("");
    errors.push_back(r.error);
    if (!r.ok) continue;
    if (auto t = r.ttft_ns()) ttft.push_back(double(*t) / 1e6);
    e2el.push_back(double(*r.e2el_ns()) / 1e6);
    if (auto t = r.tpot_ns()) tpot.push_back(*t / 1e6);
  }
  j["input_lens"] = input_lens;
  j["output_lens"] = output_lens;
  j["ttfts"] = ttfts;
  j["itls"] = itls;
  j["generated_texts"] = texts;
  j["errors"] = errors;
  nlohmann::ordered_json starts = nlohmann::ordered_json::array();
  for (const RequestRecord& r : requests) starts.push_back(double(r.send_ns) / 1e9);
  j["start_times"] = starts;
  const PeakSeconds peak = peak_seconds(requests);
  j["max_output_tokens_per_s"] = peak.tokens;
  j["max_concurrent_requests"] = peak.requests;
  add_stats(j, "ttft", ttft);
  add_stats(j, "tpot", tpot);
  add_stats(j, "itl", itl);
  add_stats(j, "e2el", e2el);
  j["llmbench_schema_version"] = kSchemaVersion;
  return j;
}

}  // namespace llmbench
