// SLO report (see slo_report.h; docs/metrics.md defines the columns).
#include "tools/report/slo_report.h"

#include <fmt/core.h>

#include "tools/store/variants_json.h"

namespace llmbench {

bool meets_slo(const CaseResult& r, const SloLimits& limits) {
  if (r.status != "ok") return false;
  if (limits.ttft_p99_ms && !(r.metrics.ttft_ms_p99 <= *limits.ttft_p99_ms)) return false;
  if (limits.tpot_p99_ms && r.metrics.tpot_ms_p99 && !(*r.metrics.tpot_ms_p99 <= *limits.tpot_p99_ms))
    return false;
  return true;
}

namespace {

// Everything that identifies a case's configuration except its batch size.
std::string group_key(const CaseSpec& s) {
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}", s.model, dtype_name(s.dtype), s.backend,
                     s.prompt_len, s.max_new_tokens, s.threads, int(s.distinct_prompts),
                     s.variants.describe());
}

}  // namespace

std::vector<SloGroup> slo_groups(const std::vector<CaseResult>& results, const SloLimits& limits) {
  std::vector<SloGroup> groups;
  std::vector<std::string> keys;
  for (const CaseResult& r : results) {
    const std::string key = group_key(r.spec);
    std::size_t g = 0;
    while (g < keys.size() && keys[g] != key) ++g;
    if (g == keys.size()) {
      keys.push_back(key);
      groups.push_back({&r, nullptr, {}});
    }
    groups[g].batches_tested.push_back(r.spec.batch);
    if (meets_slo(r, limits) && (!groups[g].best || r.spec.batch > groups[g].best->spec.batch))
      groups[g].best = &r;
  }
  return groups;
}

Row slo_header() {
  return {"model", "dtype", "backend", "prompt_len", "max_new_tokens", "variants",
          "slo_ttft_ms_p99", "slo_tpot_ms_p99", "max_batch", "n", "ttft_ms_p99", "tpot_ms_p99",
          "throughput_tok_s"};
}

std::vector<Row> slo_rows(const std::vector<SloGroup>& groups, const SloLimits& limits,
                          const std::string& na) {
  auto limit = [&](const std::optional<double>& v) { return v ? fmt::format("{:g}", *v) : na; };
  std::vector<Row> rows;
  for (const SloGroup& g : groups) {
    const CaseSpec& s = g.first->spec;
    Row row{s.model, std::string(dtype_name(s.dtype)), s.backend, std::to_string(s.prompt_len),
            std::to_string(s.max_new_tokens),
            s.variants.describe().empty() ? "default" : s.variants.describe(),
            limit(limits.ttft_p99_ms), limit(limits.tpot_p99_ms)};
    if (!g.best) {
      row.insert(row.end(), {"none", na, na, na, na});
    } else {
      const CaseMetrics& m = g.best->metrics;
      row.push_back(std::to_string(g.best->spec.batch));
      row.push_back(std::to_string(m.repetitions));
      row.push_back(fmt::format("{:.2f}", m.ttft_ms_p99));
      row.push_back(m.tpot_ms_p99 ? fmt::format("{:.2f}", *m.tpot_ms_p99) : na);
      row.push_back(fmt::format("{:.1f}", m.throughput_tok_s));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

nlohmann::json slo_json(const std::vector<SloGroup>& groups, const SloLimits& limits) {
  using nlohmann::json;
  auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  json out = json::array();
  for (const SloGroup& g : groups) {
    const CaseSpec& s = g.first->spec;
    json j = {{"model", s.model}, {"dtype", dtype_name(s.dtype)}, {"backend", s.backend},
              {"prompt_len", s.prompt_len}, {"max_new_tokens", s.max_new_tokens},
              {"variants", variants_json(s.variants)},
              {"slo_ttft_ms_p99", opt(limits.ttft_p99_ms)},
              {"slo_tpot_ms_p99", opt(limits.tpot_p99_ms)},
              {"batches_tested", g.batches_tested}};
    if (g.best) {
      const CaseMetrics& m = g.best->metrics;
      j["max_batch"] = g.best->spec.batch;
      j["n"] = m.repetitions;
      j["ttft_ms_p99"] = m.ttft_ms_p99;
      j["tpot_ms_p99"] = opt(m.tpot_ms_p99);
      j["throughput_tok_s"] = m.throughput_tok_s;
    } else {
      j["max_batch"] = nullptr;
    }
    out.push_back(j);
  }
  return out;
}

}  // namespace llmbench
