// Result fields and formats (see result_rows.h; docs/metrics.md defines each field).
#include "tools/report/result_rows.h"

#include <fmt/core.h>

#include <algorithm>

#include "tools/store/variants_json.h"

namespace llmbench {

namespace {

bool host_nosync(const CaseSpec& s) { return s.variants.timer == TimerMode::kHostNoSync; }

// The engine variants of a case, without the timer (which has its own column).
std::string engine_variants(const CaseSpec& s) {
  Variants v = s.variants;
  v.timer = TimerMode::kDevice;
  const std::string d = v.describe();
  return d.empty() ? "default" : d;
}

// The op timer, labelled where its figures are wrong on purpose.
std::string op_timer(const CaseSpec& s) {
  return host_nosync(s) ? "host-nosync (wrong on purpose)" : "device";
}

}  // namespace

Row result_header() {
  return {"model",   "dtype",       "backend",      "batch",         "prompt",
          "gen",     "variants",    "ttft_ms",      "tpot_ms",       "tpot_p99_ms",
          "e2e_ms",  "prefill_tok_s", "decode_tok_s", "throughput_tok_s", "mfu", "mbu",
          "trace_ttft_x", "trace_tpot_x", "op_timer", "status"};
}

Row result_row(const CaseResult& r, const std::string& na) {
  const CaseSpec& s = r.spec;
  const CaseMetrics& m = r.metrics;
  auto num = [](double v, int prec) { return fmt::format("{:.{}f}", v, prec); };
  auto opt = [&](const std::optional<double>& v, int prec) { return v ? num(*v, prec) : na; };
  const bool ok = r.status == "ok";
  auto when_ok = [&](std::string v) { return ok ? v : std::string(); };
  return {s.model,
          std::string(dtype_name(s.dtype)),
          s.backend,
          std::to_string(s.batch),
          std::to_string(s.prompt_len),
          std::to_string(s.max_new_tokens),
          engine_variants(s),
          when_ok(num(m.ttft_ms_median, 2)),
          when_ok(opt(m.tpot_ms_mean, 2)),
          when_ok(opt(m.tpot_ms_p99, 2)),
          when_ok(num(m.e2e_ms_median, 2)),
          when_ok(num(m.prefill_tok_s, 1)),
          when_ok(opt(m.decode_tok_s, 1)),
          when_ok(num(m.throughput_tok_s, 1)),
          when_ok(num(m.mfu, 3)),
          when_ok(opt(m.mbu, 3)),
          when_ok(r.spec.trace == TraceLevel::kOff ? "off" : opt(r.trace_overhead_ttft, 3)),
          when_ok(r.spec.trace == TraceLevel::kOff ? "off" : opt(r.trace_overhead_tpot, 3)),
          op_timer(s),
          ok ? r.status : "error: " + r.error};
}

nlohmann::json case_json(const CaseResult& r) {
  using nlohmann::json;
  const CaseSpec& s = r.spec;
  const CaseMetrics& m = r.metrics;
  auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  json j = {{"model", s.model},
            {"dtype", dtype_name(s.dtype)},
            {"backend", s.backend},
            {"batch", s.batch},
            {"prompt_len", s.prompt_len},
            {"max_new_tokens", s.max_new_tokens},
            {"warmup", s.warmup},
            {"repeat", s.repeat},
            {"threads", s.threads},
            {"seed", s.seed},
            {"distinct_prompts", s.distinct_prompts},
            {"variants", variants_json(s.variants)},
            {"status", r.status}};
  if (host_nosync(s)) j["timer_warning"] = std::string(kHostNoSyncWarning);
  if (r.status != "ok") {
    j["error"] = r.error;
    return j;
  }
  j["metrics"] = {{"ttft_ms", m.ttft_ms_median},
                  {"ttft_ms_p90", m.ttft_ms_p90},
                  {"ttft_ms_p99", m.ttft_ms_p99},
                  {"ttft_ms_mean", m.ttft_ms_mean},
                  {"ttft_ms_stdev", m.ttft_ms_stdev},
                  {"tpot_ms_mean", opt(m.tpot_ms_mean)},
                  {"tpot_ms_p50", opt(m.tpot_ms_p50)},
                  {"tpot_ms_p90", opt(m.tpot_ms_p90)},
                  {"tpot_ms_p99", opt(m.tpot_ms_p99)},
                  {"e2e_ms", m.e2e_ms_median},
                  {"prefill_tok_s", m.prefill_tok_s},
                  {"decode_tok_s", opt(m.decode_tok_s)},
                  {"throughput_tok_s", m.throughput_tok_s},
                  {"prefill_tflops", m.prefill_tflops},
                  {"decode_gbps", opt(m.decode_gbps)},
                  {"mfu", m.mfu},
                  {"mbu", opt(m.mbu)}};
  j["trace"] = {{"level", trace_level_name(s.trace)},
                {"events", r.trace.size()},
                {"overhead_ttft", opt(r.trace_overhead_ttft)},
                {"overhead_tpot", opt(r.trace_overhead_tpot)}};
  j["work"] = {{"prefill_flops", r.cost.prefill_flops},
               {"decode_bytes_per_step", r.cost.decode_bytes},
               {"weight_bytes", r.memory.weight_bytes},
               {"kv_cache_bytes", r.memory.kv_cache_bytes}};
  json samples = json::array();
  for (const auto& rep : r.samples)
    samples.push_back({{"ttft_ns", rep.ttft_ns}, {"decode_ns", rep.decode_ns}, {"e2e_ns", rep.e2e_ns()}});
  j["samples"] = samples;
  json prompts = json::array();
  const std::size_t per = std::size_t(s.prompt_len);
  for (int b = 0; b < s.batch; ++b)
    prompts.push_back(std::vector<std::int32_t>(r.prompt_ids.begin() + b * per,
                                                r.prompt_ids.begin() + (b + 1) * per));
  j["prompt_ids"] = prompts;
  j["generated_ids"] = r.generated;
  return j;
}

void print_results(std::ostream& out, const std::string& format,
                   const std::vector<CaseResult>& results, const Peaks& peaks,
                   const nlohmann::json& extra) {
  const bool any_nosync = std::any_of(results.begin(), results.end(),
                                      [](const CaseResult& r) { return host_nosync(r.spec); });
  if (format == "json") {
    nlohmann::json cases = nlohmann::json::array();
    for (const auto& r : results) cases.push_back(case_json(r));
    nlohmann::json doc = {{"peaks", {{"bandwidth_gbps", peaks.bandwidth_gbps},
                                     {"tflops", peaks.tflops},
                                     {"source", peaks.source}}},
                          {"cases", cases}};
    if (any_nosync) doc["warnings"] = {std::string(kHostNoSyncWarning)};
    if (extra.is_object()) doc.update(extra);
    out << doc.dump(2) << "\n";
    return;
  }
  std::vector<Row> rows;
  for (const auto& r : results) rows.push_back(result_row(r, format == "csv" ? "" : "n/a"));
  print_rows(out, format, result_header(), rows);
  // csv stays one header and its rows (the op_timer cell carries the label there).
  if (any_nosync && format == "md") out << "\n> **warning:** " << kHostNoSyncWarning << "\n";
  if (any_nosync && format != "md" && format != "csv")
    out << "warning: " << kHostNoSyncWarning << "\n";
}

}  // namespace llmbench
