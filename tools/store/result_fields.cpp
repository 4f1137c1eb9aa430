// The result field list of `run` (see result_fields.h). Each entry's getter reads a CaseResult;
// order is output order; the latencies are one entry each, expanded over kStatistics. Spread
// columns (p10-p90) exist for the table only: csv, json and the database carry p10 and p90 as
// numbers.
#include "tools/store/result_fields.h"

#include <array>
#include <cstdio>

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

#if defined(LLMBENCH_HAVE_CUPTI)
constexpr const char* kCudaDeviceTimer = "device (cupti)";
#else
constexpr const char* kCudaDeviceTimer = "device (events)";
#endif

// "a-b" with the table's precision, for the spread columns.
FieldValue spread(const std::optional<double>& lo, const std::optional<double>& hi) {
  if (!lo || !hi) return std::monostate{};
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f-%.2f", *lo, *hi);
  return std::string(buf);
}

// Configuration, then n: the fields before the latencies.
std::vector<ResultField> before_latencies() {
  return {
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
    // One rendering in every output, the bundled queries included ("default" or "qkv=permute
    // kv_cache=paged/16": variants_label); the database column keeps the JSON object, the key
    // SQL groups by, which variants_label() renders the same way in SQL.
    ResultField{"variants", T::kText, R::kKey, kAll, 0, "engine variants (docs/variants.md)",
                [](const CaseResult& r, S sink) -> FieldValue {
                  if (sink == S::kDb) return variants_json(r.spec.variants).dump();
                  return variants_label(r.spec.variants);
                }},
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
};
}

const SampleStats* ttft_of(const CaseResult& r) { return &r.metrics.ttft_ms; }
const SampleStats* tpot_of(const CaseResult& r) {
  return r.metrics.tpot_ms ? &*r.metrics.tpot_ms : nullptr;
}
const SampleStats* e2e_of(const CaseResult& r) { return &r.metrics.e2e_ms; }

// "p10-p90" with the table's precision: the spread beside a median in the compact view.
ResultField spread_field(const std::string& metric, const std::string& what,
                         const SampleStats* (*of)(const CaseResult&)) {
  return ResultField{metric + "_p10-p90", T::kText, R::kMetric, kTable, 0,
                     what + " p10 to p90", [of](const CaseResult& r, S) -> FieldValue {
                       const SampleStats* d = of(r);
                       if (!d || d->n == 0) return std::monostate{};
                       return spread(d->percentile(10), d->percentile(90));
                     }};
}

// The latencies, each one entry expanded over kStatistics; the table shows the statistics named.
void add_latencies(std::vector<ResultField>& f) {
  add_statistic_fields(f, "ttft_ms", "TTFT, ms", 2, false, ttft_of, {"p50"});
  f.push_back(spread_field("ttft_ms", "TTFT, ms,", ttft_of));
  f.push_back(ResultField{"tpot_n", T::kInt, R::kMetric, kCsv | kDb, 0,
                          "decode steps behind the TPOT figures (repetitions x steps)",
                          [](const CaseResult& r, S) -> FieldValue {
                            if (!r.metrics.tpot_ms) return std::monostate{};
                            return i64(r.metrics.tpot_samples);
                          }});
  add_statistic_fields(f, "tpot_ms", "TPOT, ms", 2, false, tpot_of, {"mean", "p99"});
  f.push_back(spread_field("tpot_ms", "TPOT, ms,", tpot_of));
  add_statistic_fields(f, "e2e_ms", "end-to-end latency, ms", 2, false, e2e_of, {"p50"});
}

// Throughput, utilisation, costs, trace overheads and status: the fields after the latencies.
std::vector<ResultField> after_latencies() {
  return {
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
                [](const CaseResult& r, S) -> FieldValue { return r.metrics.mfu; }, false,
                true},
    ResultField{"mbu", T::kReal, R::kMetric, kAll, 3, "decode memory bandwidth utilisation",
                [](const CaseResult& r, S) { return opt(r.metrics.mbu); }, false, true},
    // Energy per phase (docs/metrics.md, "Energy per phase"): a CUDA case with NVML; NULL
    // otherwise (energy_check then carries the note when one applies).
    ResultField{"prefill_j_per_token", T::kReal, R::kMetric, kAll, 4,
                "prefill energy / prompt tokens, J (board counter over every repetition's prefill)",
                [](const CaseResult& r, S) { return opt(r.energy.prefill.j_per_token()); }},
    ResultField{"decode_j_per_token", T::kReal, R::kMetric, kAll, 4,
                "decode energy / tokens the decode steps generated, J",
                [](const CaseResult& r, S) { return opt(r.energy.decode.j_per_token()); }},
    ResultField{"prefill_w", T::kReal, R::kMetric, kAll, 1,
                "prefill energy / prefill time between the counter's reads, W",
                [](const CaseResult& r, S) { return opt(r.energy.prefill.watts()); }},
    ResultField{"decode_w", T::kReal, R::kMetric, kAll, 1,
                "decode energy / decode time between the counter's reads, W",
                [](const CaseResult& r, S) { return opt(r.energy.decode.watts()); }},
    ResultField{"prefill_energy_j", T::kReal, R::kMetric, kCsv | kDb, 3,
                "board energy over every measured repetition's prefill, J",
                [](const CaseResult& r, S) -> FieldValue {
                  if (r.energy.prefill.spans == 0) return std::monostate{};
                  return r.energy.prefill.joules;
                }},
    ResultField{"decode_energy_j", T::kReal, R::kMetric, kCsv | kDb, 3,
                "board energy over every measured repetition's decode steps, J",
                [](const CaseResult& r, S) -> FieldValue {
                  if (r.energy.decode.spans == 0) return std::monostate{};
                  return r.energy.decode.joules;
                }},
    ResultField{"prefill_energy_ms", T::kReal, R::kMetric, kCsv | kDb, 3,
                "summed time between the counter's reads around the prefills, ms",
                [](const CaseResult& r, S) -> FieldValue {
                  if (r.energy.prefill.spans == 0) return std::monostate{};
                  return double(r.energy.prefill.ns) / 1e6;
                }},
    ResultField{"decode_energy_ms", T::kReal, R::kMetric, kCsv | kDb, 3,
                "summed time between the counter's reads around the decode steps, ms",
                [](const CaseResult& r, S) -> FieldValue {
                  if (r.energy.decode.spans == 0) return std::monostate{};
                  return double(r.energy.decode.ns) / 1e6;
                }},
    ResultField{"energy_update_ms", T::kReal, R::kMetric, kCsv | kDb, 3,
                "the energy counter's update interval, measured right before the case, ms",
                [](const CaseResult& r, S) { return opt(r.energy.calibration.update_ms); }},
    ResultField{"idle_w", T::kReal, R::kMetric, kCsv | kDb, 1,
                "the board's power with nothing running, right before the case, W",
                [](const CaseResult& r, S) { return opt(r.energy.calibration.idle_w); }},
    ResultField{"power_limit_w", T::kReal, R::kMetric, kCsv | kDb, 1,
                "the board's enforced power limit (NVML), W",
                [](const CaseResult& r, S) -> FieldValue {
                  if (!r.energy.metered) return std::monostate{};
                  return opt(r.energy.power_limit_w);
                }},
    ResultField{"energy_check", T::kText, R::kMetric, kAll, 0,
                "ok, or what is wrong with a phase's energy: a span shorter than the counter's "
                "update, watts above the power limit or below idle; or why there is none",
                [](const CaseResult& r, S) -> FieldValue {
                  const std::optional<std::string> c = energy_check(r.energy);
                  return c ? FieldValue(*c) : FieldValue(std::monostate{});
                }},
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
    // The compute roof probed beside the case (engine/bench/compute_probe.h).
    ResultField{"gemm_tflops_before", T::kReal, R::kMetric, kCsv | kDb, 4,
                "compute roof probed right before the case: the dtype's GEMM, 1e12 FLOP/s (best call)",
                [](const CaseResult& r, S) { return opt(r.roof.gemm_tflops_before); }},
    ResultField{"gemm_tflops_after", T::kReal, R::kMetric, kCsv | kDb, 4,
                "compute roof probed right after the case: the dtype's GEMM, 1e12 FLOP/s (best call)",
                [](const CaseResult& r, S) { return opt(r.roof.gemm_tflops_after); }},
    ResultField{"mfu_peak_tflops", T::kReal, R::kMetric, kCsv | kDb, 4,
                "MFU's denominator: the larger of the compute probes and the dtype's cached GEMM "
                "peak (or --peak-tflops), 1e12 FLOP/s",
                [](const CaseResult& r, S) -> FieldValue { return r.roof.mfu_peak_tflops; }},
    ResultField{"roof_check", T::kText, R::kMetric, kAll, 0,
                "ok, or what is wrong with a denominator: a probe > 10% off the roofline or "
                "moving, a stale cached GEMM peak, a utilisation above 1",
                [](const CaseResult& r, S) -> FieldValue {
                  const std::optional<std::string> c = roof_check(r.roof, r.metrics);
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
    // --cuda-graphs on: how the decode steps ran (docs/schema.md, version 18); NULL when off.
    ResultField{"cuda_graph_steps", T::kInt, R::kMetric, kCsv | kDb, 0,
                "--cuda-graphs on: decode steps launched as a graph (captured or replayed), "
                "every repetition",
                [](const CaseResult& r, S) -> FieldValue {
                  if (!r.graphs.requested) return std::monostate{};
                  return std::int64_t(r.graphs.graph_steps);
                }},
    ResultField{"cuda_graph_eager_steps", T::kInt, R::kMetric, kCsv | kDb, 0,
                "--cuda-graphs on: decode steps run eagerly (warm-ups, fallbacks, traced steps "
                "the op timer cannot attribute in a graph)",
                [](const CaseResult& r, S) -> FieldValue {
                  if (!r.graphs.requested || r.graphs.eager_steps < 0) return std::monostate{};
                  return std::int64_t(r.graphs.eager_steps);
                }},
    ResultField{"cuda_graph_traced_steps", T::kInt, R::kMetric, kCsv | kDb, 0,
                "--cuda-graphs on: of cuda_graph_steps, the traced repetition's",
                [](const CaseResult& r, S) -> FieldValue {
                  if (!r.graphs.requested) return std::monostate{};
                  return std::int64_t(r.graphs.traced_graph_steps);
                }},
    ResultField{"cuda_graph_note", T::kText, R::kMetric, kCsv | kDb, 0,
                "--cuda-graphs on: why graphs were not, or not always, used (a capture's "
                "failure with CUDA's reason); NULL when they were",
                [](const CaseResult& r, S) -> FieldValue {
                  if (!r.graphs.requested || r.graphs.note.empty()) return std::monostate{};
                  return r.graphs.note;
                }},
    ResultField{"trace_unmatched_graph_nodes", T::kInt, R::kMetric, kCsv | kDb, 0,
                "traced graph replays: kernels, copies and sets whose graph node no op was "
                "recorded for (counted, not stored); NULL without traced graph steps",
                [](const CaseResult& r, S) -> FieldValue {
                  if (r.graphs.traced_graph_steps == 0) return std::monostate{};
                  return std::int64_t(r.trace_device.unmatched_graph_nodes);
                }},
    // ---- status ----
    ResultField{"op_timer", T::kText, R::kKey, kTable | kCsv, 0,
                "timer of the traced repetition's ops",
                [](const CaseResult& r, S) -> FieldValue {
                  if (host_nosync(r.spec)) return std::string("host-nosync (wrong on purpose)");
                  if (r.spec.variants.timer == TimerMode::kDevice && r.spec.backend == "cuda")
                    return std::string(kCudaDeviceTimer);  // which one `device` is on CUDA
                  return std::string(timer_mode_name(r.spec.variants.timer));
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
}

std::vector<ResultField> build_fields() {
  std::vector<ResultField> f = before_latencies();
  add_latencies(f);
  for (ResultField& x : after_latencies()) f.push_back(std::move(x));
  // The default table: the case's key and headline figures, 120 columns for the presets' names
  // (llama-bench's default table is about as wide); --format wide adds the spreads, p99, e2e,
  // variants, backend, roof_check, trace overheads and the op timer.
  keep_compact(f, {"model", "dtype", "batch", "prompt_len", "max_new_tokens", "ttft_ms_p50",
                   "tpot_ms_mean", "throughput_tok_s", "mfu", "mbu", "status"});
  return f;
}

}  // namespace

std::span<const ResultField> result_fields() {
  static const std::vector<ResultField> kFields = build_fields();
  return kFields;
}

const ResultField* find_result_field(std::string_view name) {
  for (const auto& f : result_fields())
    if (f.name == name) return &f;
  return nullptr;
}

FieldValue field_value(const ResultField& f, const CaseResult& r, FieldSink sink) {
  if (f.role == FieldRole::kMetric && r.status != "ok") return std::monostate{};
  return f.get(r, sink);
}

double statistic_percentile(const Statistic& s, bool higher_is_better) {
  if (s.percentile < 0) return s.percentile;
  return higher_is_better ? 100 - s.percentile : s.percentile;
}

std::string statistic_suffix(const Statistic& s, bool higher_is_better) {
  const double p = statistic_percentile(s, higher_is_better);
  if (p < 0) return std::string(s.name);
  char buf[32];
  std::snprintf(buf, sizeof buf, "p%g", p);
  return buf;
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
