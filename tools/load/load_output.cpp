// Printed forms of load results (see load_output.h).
#include "tools/load/load_output.h"

#include <fmt/core.h>

#include <cmath>

#include "tools/console/field_rows.h"
#include "tools/store/store.h"

namespace llmbench {

namespace {

using T = FieldType;
using R = FieldRole;

FieldValue opt(const std::optional<double>& v) {
  return v ? FieldValue(*v) : FieldValue(std::monostate{});
}
FieldValue i64(std::int64_t v) { return v; }

// One plain field: `get` reads the level.
LoadField field(std::string name, T type, bool compact, int decimals, std::string doc,
                FieldValue (*get)(const LevelResult&)) {
  return LoadField{std::move(name), type, R::kMetric, compact ? unsigned(kTable | kCsv) : unsigned(kCsv),
                   decimals, std::move(doc), [get](const LevelResult& r, FieldSink) { return get(r); }};
}

// Each latency or rate, one entry: expanded over kStatistics (mean, stdev, percentiles).
struct DistMetric {
  const char* name;
  const char* what;
  int decimals;
  bool higher_is_better;
  const Dist* (*of)(const LevelResult&);
};
#define LLMBENCH_DIST(member) [](const LevelResult& r) -> const Dist* { \
    return r.summary.member ? &*r.summary.member : nullptr; }
const DistMetric kDistMetrics[] = {
    {"ttft_ms", "time to first token, ms", 2, false, LLMBENCH_DIST(ttft_ms)},
    {"ttst_ms", "time to second token, ms", 2, false, LLMBENCH_DIST(ttst_ms)},
    {"tpot_ms", "time per output token after the first, ms", 3, false, LLMBENCH_DIST(tpot_ms)},
    {"itl_ms", "inter-token latency per gap, ms", 3, false, LLMBENCH_DIST(itl_ms)},
    {"e2el_ms", "end-to-end request latency, ms", 2, false, LLMBENCH_DIST(e2el_ms)},
    {"user_tok_s", "output tokens/s one user sees", 1, true, LLMBENCH_DIST(user_tok_s)},
};
#undef LLMBENCH_DIST

std::vector<LoadField> build_fields(bool with_goodput) {
  std::vector<LoadField> f;
  f.push_back(LoadField{"level", T::kText, R::kKey, kTable | kCsv, 0, "the level's label",
                        [](const LevelResult& r, FieldSink) -> FieldValue { return r.spec.label(); }});
  f.push_back(field("concurrency", T::kInt, false, 0, "requests in flight", [](const LevelResult& r) {
    return r.spec.mode == LoadMode::kConcurrency ? i64(r.spec.concurrency) : FieldValue{};
  }));
  f.push_back(field("request_rate", T::kReal, false, 2, "requests/s", [](const LevelResult& r) {
    return r.spec.mode == LoadMode::kRate ? FieldValue(r.spec.request_rate) : FieldValue{};
  }));
  f.push_back(field("burstiness", T::kReal, false, 2, "gamma shape of the arrivals",
                    [](const LevelResult& r) {
    // At an infinite rate every request arrives at 0: burstiness does not apply.
    return r.spec.mode == LoadMode::kRate && !std::isinf(r.spec.request_rate)
               ? FieldValue(r.spec.burstiness) : FieldValue{};
  }));
  f.push_back(field("input_len", T::kInt, false, 0, "prompt tokens asked for",
                    [](const LevelResult& r) { return i64(r.spec.input_len); }));
  f.push_back(field("output_len", T::kInt, false, 0, "output tokens asked for",
                    [](const LevelResult& r) { return i64(r.spec.output_len); }));
  f.push_back(field("requests", T::kInt, true, 0, "measured requests",
                    [](const LevelResult& r) { return i64(r.summary.requests); }));
  f.push_back(field("ok", T::kInt, false, 0, "requests that succeeded",
                    [](const LevelResult& r) { return i64(r.summary.ok); }));
  f.push_back(field("failed", T::kInt, true, 0, "requests that failed",
                    [](const LevelResult& r) { return i64(r.summary.failed); }));
  f.push_back(field("duration_s", T::kReal, false, 3, "earliest send to latest end, s",
                    [](const LevelResult& r) { return FieldValue(r.summary.duration_s); }));
  f.push_back(field("request_throughput", T::kReal, true, 2, "ok requests / duration, req/s",
                    [](const LevelResult& r) { return FieldValue(r.summary.request_throughput); }));
  f.push_back(field("input_tokens", T::kInt, false, 0, "input tokens of ok requests",
                    [](const LevelResult& r) { return i64(r.summary.input_tokens); }));
  f.push_back(field("output_tokens", T::kInt, false, 0, "output tokens of ok requests",
                    [](const LevelResult& r) { return i64(r.summary.output_tokens); }));
  f.push_back(field("input_tokens_requested", T::kReal, false, 1,
                    "mean prompt tokens sent or aimed at, over ok requests",
                    [](const LevelResult& r) { return opt(r.summary.input_tokens_requested); }));
  f.push_back(field("input_tokens_run", T::kReal, true, 1,
                    "mean usage.prompt_tokens over ok requests that reported it",
                    [](const LevelResult& r) { return opt(r.summary.input_tokens_run); }));
  f.push_back(field("output_tokens_requested", T::kReal, false, 1,
                    "mean max_tokens asked for, over ok requests",
                    [](const LevelResult& r) { return opt(r.summary.output_tokens_requested); }));
  f.push_back(field("output_tokens_run", T::kReal, true, 1,
                    "mean usage.completion_tokens over ok requests that reported it",
                    [](const LevelResult& r) { return opt(r.summary.output_tokens_run); }));
  f.push_back(field("output_tok_s", T::kReal, true, 1, "output tokens / duration",
                    [](const LevelResult& r) { return FieldValue(r.summary.output_tok_s); }));
  f.push_back(field("total_tok_s", T::kReal, false, 1, "(input + output tokens) / duration",
                    [](const LevelResult& r) { return FieldValue(r.summary.total_tok_s); }));
  for (const DistMetric& m : kDistMetrics)
    add_statistic_fields(f, m.name, m.what, m.decimals, m.higher_is_better, m.of);
  if (with_goodput) {
    f.push_back(field("goodput_req_s", T::kReal, true, 2, "ok requests meeting every SLO / duration",
                      [](const LevelResult& r) { return opt(r.summary.goodput_req_s); }));
    f.push_back(field("good_fraction", T::kReal, false, 3, "good requests / requests",
                      [](const LevelResult& r) { return opt(r.summary.good_fraction); }));
  }
  // The steady-state window (steady_state.h): its length, requests and figures within it.
  auto steady = [&](std::string name, int decimals, std::string doc,
                    FieldValue (*get)(const SteadyWindow&)) {
    f.push_back(LoadField{std::move(name), T::kReal, R::kMetric, unsigned(kCsv | kWide), decimals,
                          std::move(doc), [get](const LevelResult& r, FieldSink) -> FieldValue {
                            return r.steady ? get(*r.steady) : FieldValue{};
                          }});
  };
  steady("steady_s", 3, "the steady-state window's length, s",
         [](const SteadyWindow& w) { return FieldValue(w.length_s); });
  f.push_back(LoadField{"steady_requests", T::kInt, R::kMetric, unsigned(kCsv | kWide), 0,
                        "ok requests sent in the steady-state window",
                        [](const LevelResult& r, FieldSink) -> FieldValue {
                          return r.steady ? i64(r.steady->requests) : FieldValue{};
                        }});
  steady("steady_output_tok_s", 1, "output tokens that arrived in the window / its length",
         [](const SteadyWindow& w) { return FieldValue(w.output_tok_s); });
  steady("steady_ttft_ms_p50", 2, "TTFT of requests sent in the window, ms, median",
         [](const SteadyWindow& w) { return w.ttft_ms ? FieldValue(w.ttft_ms->percentile(50)) : FieldValue{}; });
  steady("steady_ttft_ms_p99", 2, "TTFT of requests sent in the window, ms, p99",
         [](const SteadyWindow& w) { return w.ttft_ms ? FieldValue(w.ttft_ms->percentile(99)) : FieldValue{}; });
  steady("steady_tpot_ms_p50", 3, "TPOT of requests sent and finished in the window, ms, median",
         [](const SteadyWindow& w) { return w.tpot_ms ? FieldValue(w.tpot_ms->percentile(50)) : FieldValue{}; });
  steady("steady_tpot_ms_p99", 3, "TPOT of requests sent and finished in the window, ms, p99",
         [](const SteadyWindow& w) { return w.tpot_ms ? FieldValue(w.tpot_ms->percentile(99)) : FieldValue{}; });
  steady("steady_itl_ms_p50", 3, "ITL of gaps whose both chunks arrived in the window, ms, median",
         [](const SteadyWindow& w) { return w.itl_ms ? FieldValue(w.itl_ms->percentile(50)) : FieldValue{}; });
  steady("steady_itl_ms_p99", 3, "ITL of gaps whose both chunks arrived in the window, ms, p99",
         [](const SteadyWindow& w) { return w.itl_ms ? FieldValue(w.itl_ms->percentile(99)) : FieldValue{}; });
  f.push_back(LoadField{"capacity", T::kText, R::kMetric, unsigned(kCsv | kWide), 0,
                        "rate levels: over (the saturation guard fired: a growing queue), ok "
                        "(watched and not), empty when not judged",
                        [](const LevelResult& r, FieldSink) -> FieldValue {
                          if (!r.over_capacity) return FieldValue{};
                          return std::string(*r.over_capacity ? "over" : "ok");
                        }});
  f.push_back(field("saturation_s", T::kReal, false, 1,
                    "when the saturation guard fired, s since the level's start",
                    [](const LevelResult& r) { return opt(r.saturation_s); }));
  // The default table fits 120 columns: the level, how many requests and failures, throughput,
  // TTFT p50/p99 and TPOT p50 (and goodput with SLOs); --format wide shows every table column.
  keep_compact(f, {"level", "requests", "failed", "request_throughput", "output_tok_s",
                   "ttft_ms_p50", "ttft_ms_p99", "tpot_ms_p50", "goodput_req_s"});
  return f;
}

}  // namespace

std::span<const LoadField> load_fields(bool with_goodput) {
  static const std::vector<LoadField> kWith = build_fields(true), kWithout = build_fields(false);
  return with_goodput ? kWith : kWithout;
}

nlohmann::ordered_json level_json(const LevelResult& r, bool with_goodput) {
  nlohmann::ordered_json l;
  l["level_id"] = r.level_id;
  add_field_json(l, load_fields(with_goodput), r);
  l["first_error"] = r.summary.first_error.empty() ? nlohmann::ordered_json(nullptr)
                                                   : nlohmann::ordered_json(r.summary.first_error);
  return l;
}

void print_load_results(std::ostream& out, const std::string& format,
                        const std::vector<LevelResult>& levels, bool with_goodput,
                        const nlohmann::ordered_json& run) {
  const auto fields = load_fields(with_goodput);
  OutputStamp stamp{"load_run_id", 0, ""};
  if (run.is_object()) {
    stamp.run_id = run.value("load_run_id", std::int64_t(0));
    stamp.git_commit = run.value("git_commit", std::string());
  }
  if (format == "json") {
    nlohmann::ordered_json j;
    j["schema_version"] = kSchemaVersion;
    j["run"] = run;
    j["levels"] = nlohmann::ordered_json::array();
    for (const LevelResult& r : levels) j["levels"].push_back(level_json(r, with_goodput));
    out << j.dump(2) << "\n";
    return;
  }
  if (format == "jsonl") {
    // One object a line: the run first, then each level; every line says its kind and version.
    out << nlohmann::ordered_json{{"schema_version", kSchemaVersion}, {"kind", "run"}, {"run", run}}.dump()
        << "\n";
    for (const LevelResult& r : levels) {
      nlohmann::ordered_json l{{"schema_version", kSchemaVersion}, {"kind", "level"},
                               {"load_run_id", run.value("load_run_id", std::int64_t(0))}};
      const nlohmann::ordered_json fields_j = level_json(r, with_goodput);
      for (const auto& [k, v] : fields_j.items()) l[k] = v;
      out << l.dump() << "\n";
    }
    return;
  }
  if (format == "vllm-json") {
    // vLLM's --save-result object per level (vllm_json.h), one a line.
    for (const LevelResult& r : levels) out << r.vllm.dump() << "\n";
    return;
  }
  const FieldView view = field_view(format);
  std::vector<Row> rows;
  for (const LevelResult& r : levels) rows.push_back(field_row(fields, r, view));
  print_stamped_rows(out, format, stamp, field_header(fields, view), std::move(rows));
}

std::string level_progress_line(const LevelResult& r) {
  const LevelSummary& s = r.summary;
  std::string line = fmt::format("{}: {} ok, {} failed in {:.2f} s, {:.2f} req/s, {:.1f} output tok/s",
                                 r.spec.label(), s.ok, s.failed, s.duration_s,
                                 s.request_throughput, s.output_tok_s);
  if (s.ttft_ms) line += fmt::format(", TTFT p50 {:.2f} ms", s.ttft_ms->percentile(50));
  if (s.tpot_ms) line += fmt::format(", TPOT p50 {:.3f} ms", s.tpot_ms->percentile(50));
  if (r.over_capacity.value_or(false))
    line += fmt::format(", OVER CAPACITY from {:.1f} s{}", r.saturation_s.value_or(0),
                        r.stopped_early ? " (stopped there)" : "");
  if (!s.first_error.empty()) line += " (first error: " + s.first_error + ")";
  return line;
}

}  // namespace llmbench
