// Metric arithmetic (see metrics.h and docs/metrics.md).
#include "engine/bench/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "kernels/common/error.h"
#include "engine/bench/stats.h"

namespace llmbench {

std::int64_t RepSample::e2e_ns() const {
  std::int64_t t = ttft_ns;
  for (auto d : decode_ns) t += d;
  return t;
}

std::int64_t prefill_flops(const ModelConfig& c, int batch, int prompt_len) {
  const std::int64_t B = batch, P = prompt_len;
  const std::int64_t matmul = 2 * c.n_layers * c.layer_matmul_params() * B * P;
  const std::int64_t head = 2 * std::int64_t(c.vocab_size) * c.dim * B;
  const std::int64_t attn = 2 * std::int64_t(c.n_layers) * B * c.n_heads * c.head_dim() * P * (P + 1);
  return matmul + head + attn;
}

std::int64_t decode_step_bytes(const ModelConfig& c, int batch, int past, DType dtype,
                               int kv_elem_bytes) {
  // The KV cache's element type is its own (--kv-cache-dtype), whatever the weights' dtype.
  const std::int64_t kv =
      2 * std::int64_t(c.n_layers) * batch * c.kv_dim() * (past + 1) * kv_elem_bytes;
  return c.decode_weight_bytes(batch, dtype) + kv;
}

CaseCost case_cost(const ModelConfig& c, int batch, int prompt_len, int max_new_tokens,
                   DType dtype, int kv_elem_bytes) {
  CaseCost cost;
  cost.prefill_flops = prefill_flops(c, batch, prompt_len);
  // Decode step s (1-based) feeds the token at position prompt_len + s - 1.
  for (int s = 1; s < max_new_tokens; ++s)
    cost.decode_bytes.push_back(decode_step_bytes(c, batch, prompt_len + s - 1, dtype, kv_elem_bytes));
  return cost;
}

CaseCost ragged_case_cost(const ModelConfig& c, const std::vector<int>& prompt_lens,
                          const std::vector<int>& output_lens, DType dtype, int kv_elem_bytes) {
  LLMBENCH_CHECK(prompt_lens.size() == output_lens.size(), "one output length per prompt");
  CaseCost cost;
  int max_out = 0;
  for (std::size_t i = 0; i < prompt_lens.size(); ++i) {
    cost.prefill_flops += prefill_flops(c, 1, prompt_lens[i]);
    cost.prompt_tokens += prompt_lens[i];
    cost.generated_tokens += output_lens[i];
    max_out = std::max(max_out, output_lens[i]);
  }
  const std::int64_t kv_per_position = 2 * std::int64_t(c.n_layers) * c.kv_dim() * kv_elem_bytes;
  for (int k = 1; k < max_out; ++k) {
    int rows = 0;
    std::int64_t positions = 0;
    for (std::size_t i = 0; i < prompt_lens.size(); ++i)
      if (output_lens[i] > k) {
        ++rows;
        positions += prompt_lens[i] + k;
      }
    cost.decode_rows.push_back(rows);
    cost.decode_bytes.push_back(c.decode_weight_bytes(rows, dtype) + kv_per_position * positions);
  }
  return cost;
}

CaseMetrics compute_metrics(int batch, int prompt_len, int max_new_tokens,
                            const CaseCost& cost, const std::vector<RepSample>& samples,
                            const Peaks& peaks) {
  LLMBENCH_CHECK(!samples.empty(), "no measured repetitions");
  CaseMetrics m;
  m.repetitions = int(samples.size());
  std::vector<double> ttft_ms, e2e_ms, tpot_ms;
  double decode_bytes = 0, decode_s = 0;
  for (const auto& s : samples) {
    LLMBENCH_CHECK(s.decode_ns.size() == cost.decode_bytes.size(),
                   "decode steps do not match max_new_tokens - 1");
    ttft_ms.push_back(double(s.ttft_ns) / 1e6);
    e2e_ms.push_back(double(s.e2e_ns()) / 1e6);
    for (std::size_t i = 0; i < s.decode_ns.size(); ++i) {
      tpot_ms.push_back(double(s.decode_ns[i]) / 1e6);
      decode_bytes += double(cost.decode_bytes[i]);
      decode_s += double(s.decode_ns[i]) / 1e9;
    }
  }
  m.ttft_ms = sample_stats(std::move(ttft_ms));
  m.e2e_ms = sample_stats(std::move(e2e_ms));
  const double ttft_s = m.ttft_ms.percentile(50) / 1e3;
  // Static cases: batch x prompt_len and batch x max_new_tokens; ragged ones: their real counts.
  const double prompt_tokens =
      cost.prompt_tokens > 0 ? double(cost.prompt_tokens) : double(batch) * prompt_len;
  const double generated_tokens =
      cost.generated_tokens > 0 ? double(cost.generated_tokens) : double(batch) * max_new_tokens;
  m.prefill_tok_s = prompt_tokens / ttft_s;
  m.throughput_tok_s = generated_tokens / (m.e2e_ms.percentile(50) / 1e3);
  m.prefill_tflops = double(cost.prefill_flops) / ttft_s / 1e12;
  if (peaks.tflops > 0) m.mfu = m.prefill_tflops / peaks.tflops;
  if (!tpot_ms.empty()) {
    m.tpot_samples = int(tpot_ms.size());
    m.tpot_ms = sample_stats(std::move(tpot_ms));
    // Sequences per decode step: batch for a static case; a ragged case's mean over its steps
    // (every repetition runs the same steps, so this is decode tokens / decode time).
    double rows = double(batch);
    if (!cost.decode_rows.empty()) {
      std::int64_t sum = 0;
      for (int r : cost.decode_rows) sum += r;
      rows = double(sum) / double(cost.decode_rows.size());
    }
    m.decode_tok_s = rows / (m.tpot_ms->mean / 1e3);
    m.decode_gbps = decode_bytes / decode_s / 1e9;
    if (peaks.bandwidth_gbps > 0) m.mbu = *m.decode_gbps / peaks.bandwidth_gbps;
  }
  return m;
}

Peaks Peaks::for_dtype(DType dtype) const {
  Peaks p = *this;
  if (const auto it = gemm_tflops.find(dtype); it != gemm_tflops.end()) p.tflops = it->second;
  return p;
}

CaseRoof apply_case_roof(CaseMetrics& m, const Peaks& peaks, std::optional<double> before,
                         std::optional<double> after, std::optional<double> gemm_before,
                         std::optional<double> gemm_after) {
  CaseRoof r;
  r.read_gbps_before = before;
  r.read_gbps_after = after;
  r.reference_gbps = peaks.bandwidth_gbps;
  r.mbu_peak_gbps = peaks.bandwidth_gbps;
  if (before && after && !peaks.bandwidth_given) r.mbu_peak_gbps = std::max(*before, *after);
  if (m.decode_gbps && r.mbu_peak_gbps > 0) m.mbu = *m.decode_gbps / r.mbu_peak_gbps;
  r.gemm_tflops_before = gemm_before;
  r.gemm_tflops_after = gemm_after;
  r.reference_tflops = peaks.tflops;
  r.mfu_peak_tflops = peaks.tflops;
  // The larger of the probe and the cache: a busy minute lowers the probe, a busy roofline
  // lowers the cache; neither can raise a rate above what the hardware reached.
  if (!peaks.tflops_given)
    for (const auto& g : {gemm_before, gemm_after})
      if (g) r.mfu_peak_tflops = std::max(r.mfu_peak_tflops, *g);
  if (r.mfu_peak_tflops > 0) m.mfu = m.prefill_tflops / r.mfu_peak_tflops;
  return r;
}

bool compute_peak_stale(const CaseRoof& r) {
  if (r.reference_tflops <= 0) return false;
  double best = 0;
  for (const auto& g : {r.gemm_tflops_before, r.gemm_tflops_after})
    if (g) best = std::max(best, *g);
  return best / r.reference_tflops > 1 + kRoofTolerance + 1e-12;
}

std::optional<std::string> roof_check(const CaseRoof& r, const CaseMetrics& m) {
  std::string out;
  auto append = [&](const std::string& what) { out += (out.empty() ? "" : "; ") + what; };
  auto add = [&](const char* what, double ratio) {
    if (std::fabs(ratio - 1) <= kRoofTolerance + 1e-12) return;  // exactly 10% is not "more"
    char buf[64];
    std::snprintf(buf, sizeof buf, what, (ratio - 1) * 100);
    append(buf);
  };
  const bool read_probed = r.read_gbps_before && r.read_gbps_after;
  if (read_probed) {
    if (r.reference_gbps > 0)
      add("probe %+.0f%% vs roofline", std::max(*r.read_gbps_before, *r.read_gbps_after) /
                                           r.reference_gbps);
    if (*r.read_gbps_before > 0)
      add("probe moved %+.0f%%", *r.read_gbps_after / *r.read_gbps_before);
  }
  const bool gemm_probed = r.gemm_tflops_before || r.gemm_tflops_after;
  if (compute_peak_stale(r)) {
    const double best = std::max(r.gemm_tflops_before.value_or(0), r.gemm_tflops_after.value_or(0));
    char buf[64];
    std::snprintf(buf, sizeof buf, "GEMM probe %+.0f%% vs cached peak",
                  (best / r.reference_tflops - 1) * 100);
    append(buf);
  }
  char buf[64];
  if (m.mfu > 1 + 1e-9) {
    std::snprintf(buf, sizeof buf, "MFU %.2f > 1", m.mfu);
    append(buf);
  }
  if (m.mbu && *m.mbu > 1 + 1e-9) {
    std::snprintf(buf, sizeof buf, "MBU %.2f > 1", *m.mbu);
    append(buf);
  }
  if (out.empty() && !read_probed && !gemm_probed) return std::nullopt;
  return out.empty() ? "ok" : out;
}

std::string roof_check_advice(const std::string& check) {
  const bool above = check.find(" > 1") != std::string::npos;
  const bool stale = check.find("vs cached peak") != std::string::npos;
  if (!above && !stale) return "";
  if (above)
    return "a utilisation above 1 means its denominator is too low: the cached peak is stale "
           "(measured on a busy machine?); run `llmbench roofline` on a quiet machine";
  return "the cached GEMM peak is below what the probe beside the case reached: the cache was "
         "raised to the probe's figure; `llmbench roofline` re-measures every peak";
}

}  // namespace llmbench
