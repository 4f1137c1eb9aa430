// Printed forms of load results (see load_output.h).
#include "tools/load/load_output.h"

#include <fmt/core.h>

#include <cmath>

#include "tools/report/printers.h"
#include "tools/store/store.h"

namespace llmbench {

namespace {

using Opt = std::optional<double>;

#define LLMBENCH_DIST_FIELDS(metric, dec)                                                        \
  LoadField{#metric "_mean", false, [](const LevelResult& r) -> Opt {                            \
              return r.summary.metric ? Opt(r.summary.metric->mean) : std::nullopt; },          \
            nullptr, dec},                                                                       \
      LoadField{#metric "_stdev", false, [](const LevelResult& r) -> Opt {                       \
                  return r.summary.metric ? Opt(r.summary.metric->stdev) : std::nullopt; },      \
                nullptr, dec},                                                                   \
      LoadField{#metric "_p50", true, [](const LevelResult& r) -> Opt {                          \
                  return r.summary.metric ? Opt(r.summary.metric->p50) : std::nullopt; },        \
                nullptr, dec},                                                                   \
      LoadField{#metric "_p90", false, [](const LevelResult& r) -> Opt {                         \
                  return r.summary.metric ? Opt(r.summary.metric->p90) : std::nullopt; },        \
                nullptr, dec},                                                                   \
      LoadField{#metric "_p95", false, [](const LevelResult& r) -> Opt {                         \
                  return r.summary.metric ? Opt(r.summary.metric->p95) : std::nullopt; },        \
                nullptr, dec},                                                                   \
      LoadField{#metric "_p99", true, [](const LevelResult& r) -> Opt {                          \
                  return r.summary.metric ? Opt(r.summary.metric->p99) : std::nullopt; },        \
                nullptr, dec}

const std::vector<LoadField>& all_fields() {
  static const std::vector<LoadField> kFields = {
      {"level", true, nullptr, [](const LevelResult& r) { return r.spec.label(); }, 0},
      {"concurrency", false,
       [](const LevelResult& r) -> Opt {
         return r.spec.mode == LoadMode::kConcurrency ? Opt(r.spec.concurrency) : std::nullopt;
       },
       nullptr, 0},
      {"request_rate", false,
       [](const LevelResult& r) -> Opt {
         return r.spec.mode == LoadMode::kRate ? Opt(r.spec.request_rate) : std::nullopt;
       },
       nullptr, 2},
      {"burstiness", false,
       [](const LevelResult& r) -> Opt {
         // At an infinite rate every request arrives at 0: burstiness does not apply.
         return r.spec.mode == LoadMode::kRate && !std::isinf(r.spec.request_rate)
                    ? Opt(r.spec.burstiness)
                    : std::nullopt;
       },
       nullptr, 2},
      {"input_len", false, [](const LevelResult& r) -> Opt { return r.spec.input_len; }, nullptr, 0},
      {"output_len", false, [](const LevelResult& r) -> Opt { return r.spec.output_len; }, nullptr, 0},
      {"requests", true, [](const LevelResult& r) -> Opt { return r.summary.requests; }, nullptr, 0},
      {"ok", false, [](const LevelResult& r) -> Opt { return r.summary.ok; }, nullptr, 0},
      {"failed", true, [](const LevelResult& r) -> Opt { return r.summary.failed; }, nullptr, 0},
      {"duration_s", false, [](const LevelResult& r) -> Opt { return r.summary.duration_s; }, nullptr, 3},
      {"request_throughput", true,
       [](const LevelResult& r) -> Opt { return r.summary.request_throughput; }, nullptr, 2},
      {"input_tokens", false,
       [](const LevelResult& r) -> Opt { return double(r.summary.input_tokens); }, nullptr, 0},
      {"output_tokens", false,
       [](const LevelResult& r) -> Opt { return double(r.summary.output_tokens); }, nullptr, 0},
      {"input_tokens_requested", false,
       [](const LevelResult& r) -> Opt { return r.summary.input_tokens_requested; }, nullptr, 1},
      {"input_tokens_run", true,
       [](const LevelResult& r) -> Opt { return r.summary.input_tokens_run; }, nullptr, 1},
      {"output_tokens_requested", false,
       [](const LevelResult& r) -> Opt { return r.summary.output_tokens_requested; }, nullptr, 1},
      {"output_tokens_run", true,
       [](const LevelResult& r) -> Opt { return r.summary.output_tokens_run; }, nullptr, 1},
      {"output_tok_s", true, [](const LevelResult& r) -> Opt { return r.summary.output_tok_s; },
       nullptr, 1},
      {"total_tok_s", false, [](const LevelResult& r) -> Opt { return r.summary.total_tok_s; },
       nullptr, 1},
      LLMBENCH_DIST_FIELDS(ttft_ms, 2),
      LLMBENCH_DIST_FIELDS(tpot_ms, 3),
      LLMBENCH_DIST_FIELDS(itl_ms, 3),
      LLMBENCH_DIST_FIELDS(e2el_ms, 2),
      LLMBENCH_DIST_FIELDS(user_tok_s, 1),
      {"goodput_req_s", true, [](const LevelResult& r) -> Opt { return r.summary.goodput_req_s; },
       nullptr, 2},
      {"good_fraction", false,
       [](const LevelResult& r) -> Opt { return r.summary.good_fraction; }, nullptr, 3},
  };
  return kFields;
}

#undef LLMBENCH_DIST_FIELDS

bool is_goodput_field(const LoadField& f) {
  return std::string_view(f.name) == "goodput_req_s" || std::string_view(f.name) == "good_fraction";
}

std::string cell(const LoadField& f, const LevelResult& r, bool csv) {
  if (f.text) return f.text(r);
  const Opt v = f.number(r);
  if (!v) return csv ? "" : "n/a";
  if (std::isinf(*v)) return "inf";
  if (csv) return fmt::format("{}", *v);
  return fmt::format("{:.{}f}", *v, f.decimals);
}

}  // namespace

const std::vector<LoadField>& load_fields(bool with_goodput) {
  static const std::vector<LoadField> kWithout = [] {
    std::vector<LoadField> v;
    for (const LoadField& f : all_fields())
      if (!is_goodput_field(f)) v.push_back(f);
    return v;
  }();
  return with_goodput ? all_fields() : kWithout;
}

nlohmann::ordered_json level_json(const LevelResult& r, bool with_goodput) {
  nlohmann::ordered_json l;
  l["level_id"] = r.level_id;
  for (const LoadField& f : load_fields(with_goodput)) {
    if (f.text) {
      l[f.name] = f.text(r);
      continue;
    }
    const Opt v = f.number(r);
    if (!v) l[f.name] = nullptr;
    else if (std::isinf(*v)) l[f.name] = "inf";
    else if (f.decimals == 0 && *v == std::floor(*v) && std::abs(*v) < 9e15)
      l[f.name] = std::int64_t(*v);  // counts and lengths are integers
    else l[f.name] = *v;
  }
  l["first_error"] = r.summary.first_error.empty() ? nlohmann::ordered_json(nullptr)
                                                   : nlohmann::ordered_json(r.summary.first_error);
  return l;
}

void print_load_results(std::ostream& out, const std::string& format,
                        const std::vector<LevelResult>& levels, bool with_goodput,
                        const nlohmann::ordered_json& run) {
  const auto& fields = load_fields(with_goodput);
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
  const bool csv = format == "csv";
  Row header;
  for (const LoadField& f : fields)
    if (csv || f.compact) header.push_back(f.name);
  if (csv) header.push_back("schema_version");
  std::vector<Row> rows;
  for (const LevelResult& r : levels) {
    Row row;
    for (const LoadField& f : fields)
      if (csv || f.compact) row.push_back(cell(f, r, csv));
    if (csv) row.push_back(std::to_string(kSchemaVersion));
    rows.push_back(std::move(row));
  }
  print_rows(out, format, header, rows);
  if (!csv) out << "\n(llmbench load run " << run.value("load_run_id", std::int64_t(0))
                << ", schema version " << kSchemaVersion << ")\n";
}

std::string level_progress_line(const LevelResult& r) {
  const LevelSummary& s = r.summary;
  std::string line = fmt::format("{}: {} ok, {} failed in {:.2f} s, {:.2f} req/s, {:.1f} output tok/s",
                                 r.spec.label(), s.ok, s.failed, s.duration_s,
                                 s.request_throughput, s.output_tok_s);
  if (s.ttft_ms) line += fmt::format(", TTFT p50 {:.2f} ms", s.ttft_ms->p50);
  if (s.tpot_ms) line += fmt::format(", TPOT p50 {:.3f} ms", s.tpot_ms->p50);
  if (!s.first_error.empty()) line += " (first error: " + s.first_error + ")";
  return line;
}

}  // namespace llmbench
