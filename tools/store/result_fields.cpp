// The result field list (see result_fields.h). Each entry's getter reads a CaseResult; order
// is output order. Spread columns (p10-p90) exist for the table only: csv, json and the
// database carry p10 and p90 as numbers.
#include "tools/store/result_fields.h"

#include <array>

#include "tools/store/variants_json.h"

namespace llmbench {

namespace {

using S = FieldSink;
using T = FieldType;
using R = FieldRole;

FieldValue opt(const std::optional<double>& v) {
  return v ? FieldValue(*v) : FieldValue(std::monostate{});
}
FieldValue i64(std::int64_t v) { return v; }

bool host_nosync(const CaseSpec& s) { return s.variants.timer == TimerMode::kHostNoSync; }

// "a-b" with the table's precision, for the spread columns.
FieldValue spread(const std::optional<double>& lo, const std::optional<double>& hi) {
  if (!lo || !hi) return std::monostate{};
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f-%.2f", *lo, *hi);
  return std::string(buf);
}

const std::array kFields = {
    // ---- configuration (the case key) ----
    ResultField{"model", T::kText, R::kKey, kAll, 0, "model preset or checkpoint directory",
                [](const CaseResult& r, S) -> FieldValue { return r.spec.model; }},
    ResultField{"dtype", T::kText, R::kKey, kAll, 0, "weight dtype",
                [](const CaseResult& r, S) -> FieldValue {
                  return std::string(dtype_name(r.spec.dtype));
                }},
    ResultField{"backend", T::kText, R::kKey, kAll, 0, "cpu or cuda",
                [](const CaseResult& r, S) -> FieldValue { return r.spec.backend; }},
    ResultField{"batch", T::kInt, R::kKey, kAll, 0, "sequences per case",
                [](const CaseResult& r, S) { return i64(r.spec.batch); }},
    ResultField{"prompt_len", T::kInt, R::kKey, kAll, 0, "prompt tokens per sequence",
                [](const CaseResult& r, S) { return i64(r.spec.prompt_len); }},
    ResultField{"max_new_tokens", T::kInt, R::kKey, kAll, 0, "generated tokens per sequence",
                [](const CaseResult& r, S) { return i64(r.spec.max_new_tokens); }},
    // Text for people (table, csv: "default" or "qkv=permute ..."), a JSON object for programs
    // (json, the database column).
    ResultField{"variants", T::kText, R::kKey, kAll, 0, "engine variants (docs/variants.md)",
                [](const CaseResult& r, S sink) -> FieldValue {
                  if (sink == S::kJson || sink == S::kDb) return variants_json(r.spec.variants).dump();
                  Variants v = r.spec.variants;
                  v.timer = TimerMode::kDevice;  // the timer has its own column
                  const std::string d = v.describe();
                  return d.empty() ? "default" : d;
                },
                true},
    ResultField{"warmup", T::kInt, R::kKey, kCsv | kDb, 0, "unmeasured repetitions",
                [](const CaseResult& r, S) { return i64(r.spec.warmup); }},
    ResultField{"repeat", T::kInt, R::kKey, kCsv | kDb, 0, "measured repetitions asked for",
                [](const CaseResult& r, S) { return i64(r.spec.repeat); }},
    ResultField{"threads", T::kInt, R::kKey, kCsv | kDb, 0, "CPU threads (0: the default)",
                [](const CaseResult& r, S) { return i64(r.spec.threads); }},
    ResultField{"seed", T::kInt, R::kKey, kCsv | kDb, 0, "weights and synthetic prompts",
                [](const CaseResult& r, S) { return i64(std::int64_t(r.spec.seed)); }},
    ResultField{"distinct_prompts", T::kInt, R::kKey, kCsv | kDb, 0, "1: one prompt per sequence",
                [](const CaseResult& r, S) { return i64(r.spec.distinct_prompts); }},
    ResultField{"trace", T::kText, R::kKey, kCsv | kDb, 0, "trace level of the traced repetition",
                [](const CaseResult& r, S) -> FieldValue {
                  return std::string(trace_level_name(r.spec.trace));
                }},
    // ---- measured ----
    ResultField{"n", T::kInt, R::kMetric, kTable | kCsv, 0,
                "measured repetitions behind the TTFT and e2e figures",
                [](const CaseResult& r, S) { return i64(r.metrics.repetitions); }},
    ResultField{"ttft_ms_p50", T::kReal, R::kMetric, kAll, 2, "median TTFT, ms",
                [](const CaseResult& r, S) -> FieldValue { return r.metrics.ttft_ms_p50; }},
    ResultField{"ttft_ms_p10-p90", T::kText, R::kMetric, kTable, 0, "TTFT p10 to p90, ms",
                [](const CaseResult& r, S) {
                  return spread(r.metrics.ttft_ms_p10, r.metrics.ttft_ms_p90);
                }},
    ResultField{"ttft_ms_p10", T::kReal, R::kMetric, kCsv | kDb, 2, "TTFT 10th percentile, ms",
                [](const CaseResult& r, S) -> FieldValue { return r.metrics.ttft_ms_p10; }},
    ResultField{"ttft_ms_p90", T::kReal, R::kMetric, kCsv | kDb, 2, "TTFT 90th percentile, ms",
                [](const CaseResult& r, S) -> FieldValue { return r.metrics.ttft_ms_p90; }},
    ResultField{"ttft_ms_p99", T::kReal, R::kMetric, kCsv | kDb, 2, "TTFT 99th percentile, ms",
                [](const CaseResult& r, S) -> FieldValue { return r.metrics.ttft_ms_p99; }},
    ResultField{"ttft_ms_mean", T::kReal, R::kMetric, kCsv | kDb, 2, "mean TTFT, ms",
                [](const CaseResult& r, S) -> FieldValue { return r.metrics.ttft_ms_mean; }},
    ResultField{"ttft_ms_stdev", T::kReal, R::kMetric, kCsv | kDb, 2,
                "TTFT sample standard deviation, ms",
                [](const CaseResult& r, S) -> FieldValue { return r.metrics.ttft_ms_stdev; }},
    ResultField{"tpot_n", T::kInt, R::kMetric, kCsv | kDb, 0,
                "decode steps behind the TPOT figures (repetitions x steps)",
                [](const CaseResult& r, S) -> FieldValue {
                  if (!r.metrics.tpot_ms_mean) return std::monostate{};
                  return i64(r.metrics.tpot_samples);
                }},
    ResultField{"tpot_ms_mean", T::kReal, R::kMetric, kAll, 2, "mean TPOT, ms",
                [](const CaseResult& r, S) { return opt(r.metrics.tpot_ms_mean); }},
    ResultField{"tpot_ms_p10-p90", T::kText, R::kMetric, kTable, 0, "TPOT p10 to p90, ms",
                [](const CaseResult& r, S) {
                  return spread(r.metrics.tpot_ms_p10, r.metrics.tpot_ms_p90);
                }},
    ResultField{"tpot_ms_p10", T::kReal, R::kMetric, kCsv | kDb, 2, "TPOT 10th percentile, ms",
                [](const CaseResult& r, S) { return opt(r.metrics.tpot_ms_p10); }},
    ResultField{"tpot_ms_p50", T::kReal, R::kMetric, kCsv | kDb, 2, "median TPOT, ms",
                [](const CaseResult& r, S) { return opt(r.metrics.tpot_ms_p50); }},
    ResultField{"tpot_ms_p90", T::kReal, R::kMetric, kCsv | kDb, 2, "TPOT 90th percentile, ms",
                [](const CaseResult& r, S) { return opt(r.metrics.tpot_ms_p90); }},
    ResultField{"tpot_ms_p99", T::kReal, R::kMetric, kAll, 2, "TPOT 99th percentile, ms",
                [](const CaseResult& r, S) { return opt(r.metrics.tpot_ms_p99); }},
    ResultField{"tpot_ms_stdev", T::kReal, R::kMetric, kCsv | kDb, 2,
                "TPOT sample standard deviation, ms",
                [](const CaseResult& r, S) { return opt(r.metrics.tpot_ms_stdev); }},
    ResultField{"e2e_ms_p50", T::kReal, R::kMetric, kAll, 2, "median end-to-end latency, ms",
                [](const CaseResult& r, S) -> FieldValue { return r.metrics.e2e_ms_p50; }},
    ResultField{"e2e_ms_p10", T::kReal, R::kMetric, kCsv | kDb, 2, "e2e 10th percentile, ms",
                [](const CaseResult& r, S) -> FieldValue { return r.metrics.e2e_ms_p10; }},
    ResultField{"e2e_ms_p90", T::kReal, R::kMetric, kCsv | kDb, 2, "e2e 90th percentile, ms",
                [](const CaseResult& r, S) -> FieldValue { return r.metrics.e2e_ms_p90; }},
    ResultField{"prefill_tok_s", T::kReal, R::kMetric, kCsv | kDb, 1,
                "prompt tokens / median TTFT, tokens/s",
                [](const CaseResult& r, S) -> FieldValue { return r.metrics.prefill_tok_s; }},
    ResultField{"decode_tok_s", T::kReal, R::kMetric, kCsv | kDb, 1,
                "batch / mean TPOT, tokens/s",
                [](const CaseResult& r, S) { return opt(r.metrics.decode_tok_s); }},
    ResultField{"throughput_tok_s", T::kReal, R::kMetric, kAll, 1,
                "generated tokens / median e2e, tokens/s",
                [](const CaseResult& r, S) -> FieldValue { return r.metrics.throughput_tok_s; }},
    ResultField{"prefill_tflops", T::kReal, R::kMetric, kCsv | kDb, 4,
                "achieved prefill FLOP/s, 1e12",
                [](const CaseResult& r, S) -> FieldValue { return r.metrics.prefill_tflops; }},
    ResultField{"decode_gbps", T::kReal, R::kMetric, kCsv | kDb, 2,
                "achieved decode bytes/s, 1e9",
                [](const CaseResult& r, S) { return opt(r.metrics.decode_gbps); }},
    ResultField{"mfu", T::kReal, R::kMetric, kAll, 3, "prefill model FLOPs utilisation",
                [](const CaseResult& r, S) -> FieldValue { return r.metrics.mfu; }},
    ResultField{"mbu", T::kReal, R::kMetric, kAll, 3, "decode memory bandwidth utilisation",
                [](const CaseResult& r, S) { return opt(r.metrics.mbu); }},
    // The read roof probed beside the case and the denominators (docs/metrics.md, "The read
    // roof beside each case").
    ResultField{"read_gbps_before", T::kReal, R::kMetric, kCsv | kDb, 2,
                "read roof probed right before the case, GB/s (best pass)",
                [](const CaseResult& r, S) { return opt(r.roof.read_gbps_before); }},
    ResultField{"read_gbps_after", T::kReal, R::kMetric, kCsv | kDb, 2,
                "read roof probed right after the case, GB/s (best pass)",
                [](const CaseResult& r, S) { return opt(r.roof.read_gbps_after); }},
    ResultField{"mbu_peak_gbps", T::kReal, R::kMetric, kCsv | kDb, 2,
                "MBU's denominator: the larger probe (or --peak-bw-gbps), GB/s",
                [](const CaseResult& r, S) -> FieldValue {
                  if (!r.metrics.mbu) return std::monostate{};
                  return r.roof.mbu_peak_gbps;
                }},
    ResultField{"mfu_peak_tflops", T::kReal, R::kMetric, kCsv | kDb, 4,
                "MFU's denominator: the case dtype's GEMM peak, 1e12 FLOP/s",
                [](const CaseResult& r, S) -> FieldValue { return r.roof.mfu_peak_tflops; }},
    ResultField{"roof_check", T::kText, R::kMetric, kAll, 0,
                "ok, or how the probed read roof differed (> 10%) from the roofline or moved",
                [](const CaseResult& r, S) -> FieldValue {
                  const std::optional<std::string> c = roof_check(r.roof);
                  return c ? FieldValue(*c) : FieldValue(std::monostate{});
                }},
    ResultField{"prefill_flops", T::kInt, R::kMetric, kCsv | kDb, 0, "analytic prefill FLOPs",
                [](const CaseResult& r, S) { return i64(r.cost.prefill_flops); }},
    ResultField{"weight_bytes", T::kInt, R::kMetric, kCsv | kDb, 0, "bytes of all weights",
                [](const CaseResult& r, S) { return i64(r.memory.weight_bytes); }},
    ResultField{"kv_cache_bytes", T::kInt, R::kMetric, kCsv | kDb, 0, "bytes of the KV cache",
                [](const CaseResult& r, S) { return i64(r.memory.kv_cache_bytes); }},
    ResultField{"trace_overhead_ttft", T::kReal, R::kMetric, kAll, 3,
                "traced TTFT / median untraced TTFT",
                [](const CaseResult& r, S) { return opt(r.trace_overhead_ttft); }},
    ResultField{"trace_overhead_tpot", T::kReal, R::kMetric, kAll, 3,
                "traced mean TPOT / untraced mean TPOT",
                [](const CaseResult& r, S) { return opt(r.trace_overhead_tpot); }},
    // ---- status ----
    ResultField{"op_timer", T::kText, R::kKey, kTable | kCsv, 0,
                "timer of the traced repetition's ops",
                [](const CaseResult& r, S) -> FieldValue {
                  return host_nosync(r.spec) ? "host-nosync (wrong on purpose)" : "device";
                }},
    ResultField{"status", T::kText, R::kKey, kAll, 0, "ok or error",
                [](const CaseResult& r, S sink) -> FieldValue {
                  if (sink == S::kTable && r.status != "ok") return "error: " + r.error;
                  return r.status;
                }},
    ResultField{"error", T::kText, R::kKey, kCsv | kDb, 0, "the error of a failed case",
                [](const CaseResult& r, S) -> FieldValue {
                  if (r.status == "ok") return std::monostate{};
                  return r.error;
                }},
};

}  // namespace

std::span<const ResultField> result_fields() { return kFields; }

const ResultField* find_result_field(std::string_view name) {
  for (const auto& f : kFields)
    if (f.name == name) return &f;
  return nullptr;
}

FieldValue field_value(const ResultField& f, const CaseResult& r, FieldSink sink) {
  if (f.role == FieldRole::kMetric && r.status != "ok") return std::monostate{};
  return f.get(r, sink);
}

std::string_view sql_type(FieldType type) {
  switch (type) {
    case FieldType::kInt: return "INTEGER";
    case FieldType::kReal: return "REAL";
    case FieldType::kText: return "TEXT";
  }
  return "TEXT";
}

}  // namespace llmbench
