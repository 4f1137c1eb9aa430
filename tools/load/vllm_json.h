// `llmbench load --format vllm-json`: one level as the result object vLLM's
// benchmarks/benchmark_serving.py --save-result writes (and `vllm bench serve`), so dashboards
// that read those files read ours unchanged: date, backend, model_id, num_prompts,
// request_rate, burstiness, max_concurrency, duration, completed, total_input_tokens,
// total_output_tokens, request_throughput, request_goodput, output_throughput,
// total_token_throughput, the per-request lists (input_lens, output_lens, ttfts, itls,
// generated_texts, errors) and mean/median/std/p99 of ttft, tpot, itl and e2el in ms; and the
// keys of `vllm bench serve`: failed, label, endpoint_type, max_output_tokens_per_s (the most
// output tokens that arrived in one whole second since the first ok request's send),
// max_concurrent_requests (the most ok requests active in one such second), and start_times
// (each request's send, s since the level's origin). As vLLM
// computes them: over successful requests, std the population one (numpy's default), TPOT of
// requests with more than one token, times in seconds in the lists. llmbench keeps no
// generated text: generated_texts holds empty strings. docs/serving.md lists the mapping.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "tools/load/load_client.h"
#include "tools/load/load_plan.h"

namespace llmbench {

struct VllmRunFields {
  std::string backend;   // "openai" (completions) or "openai-chat"
  std::string model_id;
  std::string date;      // "%Y%m%d-%H%M%S", UTC
  bool with_goodput = false;
  std::string label;     // --label (else the model): vLLM's `label`
};

nlohmann::ordered_json vllm_result_json(const LevelSpec& level, int max_in_flight,
                                        const std::vector<RequestRecord>& requests,
                                        const GoodputSlo& slo, const VllmRunFields& run);

}  // namespace llmbench
