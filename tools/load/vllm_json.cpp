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

}  // namespace

nlohmann::ordered_json vllm_result_json(const LevelSpec& level, int max_in_flight,
                                        const std::vector<RequestRecord>& requests,
                                        const GoodputSlo& slo, const VllmRunFields& run) {
  const LevelSummary s = summarize_level(requests, slo);
  nlohmann::ordered_json j;
  j["date"] = run.date;
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
    ttft.push_back(double(*r.ttft_ns()) / 1e6);
    e2el.push_back(double(*r.e2el_ns()) / 1e6);
    if (auto t = r.tpot_ns()) tpot.push_back(*t / 1e6);
  }
  j["input_lens"] = input_lens;
  j["output_lens"] = output_lens;
  j["ttfts"] = ttfts;
  j["itls"] = itls;
  j["generated_texts"] = texts;
  j["errors"] = errors;
  add_stats(j, "ttft", ttft);
  add_stats(j, "tpot", tpot);
  add_stats(j, "itl", itl);
  add_stats(j, "e2el", e2el);
  j["llmbench_schema_version"] = kSchemaVersion;
  return j;
}

}  // namespace llmbench
