// Result rows and documents (see result_rows.h). Every cell comes from the field list; this
// file decides only how a value is written in each format.
#include "tools/console/result_rows.h"

#include "tools/console/field_rows.h"
#include "tools/store/store.h"

#include <fmt/core.h>

#include <algorithm>
#include <tuple>
#include <utility>

namespace llmbench {

namespace {

bool host_nosync(const CaseResult& r) { return r.spec.variants.timer == TimerMode::kHostNoSync; }

}  // namespace

Row result_header(bool csv) { return field_header(result_fields(), csv); }

Row result_row(const CaseResult& r, bool csv) { return field_row(result_fields(), r, csv); }

nlohmann::ordered_json case_json(const CaseResult& r, const OutputStamp* stamp) {
  using json = nlohmann::ordered_json;
  json j = json::object();
  if (stamp) add_stamp_json(j, *stamp);
  add_field_json(j, result_fields(), r);
  if (host_nosync(r)) j["timer_warning"] = std::string(kHostNoSyncWarning);
  // How the case ran where its variants do not say (--cuda-graphs on, run eagerly): only when
  // there is something to say, so other cases' JSON is as it was.
  if (!r.notes.empty()) j["notes"] = r.notes;
  if (r.status != "ok") return j;
  j["trace_events"] = r.trace.size();
  json samples = json::array();
  for (const auto& rep : r.samples)
    samples.push_back({{"ttft_ns", rep.ttft_ns}, {"decode_ns", rep.decode_ns}, {"e2e_ns", rep.e2e_ns()}});
  j["samples"] = samples;
  j["decode_bytes_per_step"] = r.cost.decode_bytes;
  json prompts = json::array();
  if (!r.prompt_lens.empty()) {  // a ragged case: each sequence's own prompt length
    std::size_t at = 0;
    for (int n : r.prompt_lens) {
      if (r.prompt_ids.size() < at + std::size_t(n)) break;
      prompts.push_back(std::vector<std::int32_t>(r.prompt_ids.begin() + std::ptrdiff_t(at),
                                                  r.prompt_ids.begin() + std::ptrdiff_t(at + n)));
      at += std::size_t(n);
    }
  }
  const std::size_t per = std::size_t(r.spec.prompt_len);
  for (int b = 0; r.prompt_lens.empty() && b < r.spec.batch && r.prompt_ids.size() >= (b + 1) * per;
       ++b)
    prompts.push_back(std::vector<std::int32_t>(r.prompt_ids.begin() + b * per,
                                                r.prompt_ids.begin() + (b + 1) * per));
  j["prompt_ids"] = prompts;
  j["generated_ids"] = r.generated;
  return j;
}

nlohmann::ordered_json run_json(std::int64_t run_id, const RunInfo& info) {
  return {{"id", run_id},
          {"started_at", info.started_at},
          {"command_line", info.command_line},
          {"llmbench_version", info.version},
          {"git_commit", info.git_commit},
          {"build_type", info.build_type},
          {"host", info.host},
          {"cpu", info.cpu},
          {"cpu_isa", info.cpu_isa},  // the CPU kernels' paths (run.cpu_isa)
          {"gpu", info.gpu},
          {"driver", info.driver},
          {"threads", info.threads},
          {"profile", info.profile},
          {"shard", info.shard},
          {"plan_key", info.plan_key}};
}

std::vector<std::string> result_warnings(const std::vector<CaseResult>& results,
                                         bool slo_used) {
  std::vector<std::string> w;
  // A p99 over fewer than kMinSamplesForP99 samples is close to the maximum, not a tail.
  auto thin = [&](const char* name, const char* unit, auto samples_of) {
    int cases = 0, fewest = 0;
    for (const auto& r : results) {
      if (r.status != "ok") continue;
      const int n = samples_of(r);
      if (n <= 0 || n >= kMinSamplesForP99) continue;
      fewest = cases ? std::min(fewest, n) : n;
      ++cases;
    }
    if (cases)
      w.push_back(fmt::format("{} of {} case(s) rests on as few as {} {} (fewer than {}): it is "
                              "close to the maximum, not a stable tail estimate",
                              name, cases, fewest, unit, kMinSamplesForP99));
  };
  thin("tpot_ms_p99", "decode steps", [](const CaseResult& r) { return r.metrics.tpot_samples; });
  if (slo_used)
    thin("ttft_ms_p99 (the SLO report)", "repetitions; use --repeat 20 or more",
         [](const CaseResult& r) { return r.metrics.repetitions; });
  if (std::any_of(results.begin(), results.end(), host_nosync))
    w.push_back(std::string(kHostNoSyncWarning));
  // A denominator of a case is in doubt (roof_check, engine/bench/metrics.h): the read probe
  // disagreed with the roofline or moved, the compute probe beat a stale cached peak, or a
  // utilisation came out above 1. One line per case with both roofs, then the advice once.
  std::string advice;
  for (const auto& r : results) {
    const std::optional<std::string> check = roof_check(r.roof, r.metrics);
    if (r.status != "ok" || !check || *check == "ok") continue;
    std::string roofs;
    if (r.roof.read_gbps_before && r.roof.read_gbps_after)
      roofs += fmt::format("read probe {:.1f} -> {:.1f} GB/s, roofline {:.1f}, MBU divides by "
                           "{:.1f}", *r.roof.read_gbps_before, *r.roof.read_gbps_after,
                           r.roof.reference_gbps, r.roof.mbu_peak_gbps);
    if (r.roof.gemm_tflops_before || r.roof.gemm_tflops_after)
      roofs += fmt::format("{}GEMM probe {:.3f} -> {:.3f} TFLOP/s, cached peak {:.3f}, MFU "
                           "divides by {:.3f}", roofs.empty() ? "" : "; ",
                           r.roof.gemm_tflops_before.value_or(0),
                           r.roof.gemm_tflops_after.value_or(0), r.roof.reference_tflops,
                           r.roof.mfu_peak_tflops);
    w.push_back(fmt::format("{}: roof check: {}{} (docs/metrics.md, the roofs beside each case)",
                            r.spec.label(), *check, roofs.empty() ? "" : " (" + roofs + ")"));
    if (advice.empty()) advice = roof_check_advice(*check);
  }
  if (!advice.empty()) w.push_back(advice);
  // Energy per phase (engine/bench/energy.h): why a CUDA case has none, said once (every case
  // of a run shares the board and its driver); a metered case's failed check, one line each.
  std::string energy_note;
  for (const auto& r : results) {
    if (r.status != "ok") continue;
    if (!r.energy.metered && !r.energy.note.empty() && energy_note.empty()) {
      energy_note = r.energy.note;
      w.push_back("energy: " + energy_note + "; the energy columns are NULL");
    }
    const std::optional<std::string> check = energy_check(r.energy);
    if (r.energy.metered && check && *check != "ok")
      w.push_back(fmt::format("{}: energy check: {} (docs/metrics.md, energy per phase)",
                              r.spec.label(), *check));
  }
  return w;
}

namespace {

// The compact table (table, md): the compact fields, plus each wide key column whose value is not
// the default on some row, so a run on CUDA, with naive variants or a diagnostic op timer says
// so in the default view too.
std::pair<Row, std::vector<Row>> compact_table(const std::vector<CaseResult>& results) {
  const struct {
    const char* name;
    const char* plain;  // the default value, not worth a column
  } kShownWhenSet[] = {{"backend", "cpu"}, {"variants", "default"}, {"op_timer", "device"},
                       // energy per phase, beside MBU, when some case has it
                       {"prefill_j_per_token", "n/a"}, {"decode_j_per_token", "n/a"},
                       {"prefill_w", "n/a"}, {"decode_w", "n/a"}};
  const Row wide = field_header(result_fields(), FieldView::kWide);
  std::vector<Row> wide_rows;
  for (const auto& r : results) wide_rows.push_back(field_row(result_fields(), r, FieldView::kWide));
  const Row compact = field_header(result_fields(), FieldView::kCompact);
  std::vector<std::size_t> keep;
  for (std::size_t i = 0; i < wide.size(); ++i) {
    bool shown = std::find(compact.begin(), compact.end(), wide[i]) != compact.end();
    for (const auto& k : kShownWhenSet)
      if (wide[i] == k.name)
        for (const Row& row : wide_rows) shown = shown || (row[i] != k.plain && row[i] != "n/a");
    if (shown) keep.push_back(i);
  }
  auto pick = [&](const Row& row) {
    Row out;
    for (std::size_t i : keep) out.push_back(row[i]);
    return out;
  };
  std::vector<Row> rows;
  for (const Row& row : wide_rows) rows.push_back(pick(row));
  return {pick(wide), std::move(rows)};
}

}  // namespace

void print_results(std::ostream& out, const std::string& format,
                   const std::vector<CaseResult>& results, const Peaks& peaks,
                   const nlohmann::ordered_json& run, const nlohmann::json& extra) {
  const bool slo_used = extra.is_object() && extra.contains("slo");
  OutputStamp stamp;
  if (run.is_object()) {
    stamp.run_id = run.value("id", std::int64_t(0));
    stamp.git_commit = run.value("git_commit", std::string());
  }
  const auto warnings = result_warnings(results, slo_used);
  if (format == "jsonl") return;
  if (format == "json") {
    nlohmann::ordered_json cases = nlohmann::ordered_json::array();
    for (const auto& r : results) cases.push_back(case_json(r));
    nlohmann::ordered_json doc = nlohmann::ordered_json::object();
    doc["schema_version"] = kSchemaVersion;
    if (!run.is_null()) doc["run"] = run;
    nlohmann::ordered_json gemm = nlohmann::ordered_json::object();
    for (const auto& [dtype, tflops] : peaks.gemm_tflops) gemm[dtype_name(dtype)] = tflops;
    doc["peaks"] = {{"bandwidth_gbps", round_number(peaks.bandwidth_gbps)},
                    {"tflops", round_number(peaks.tflops)},
                    {"gemm_tflops", gemm},
                    {"source", peaks.source}};
    doc["cases"] = cases;
    if (!warnings.empty()) doc["warnings"] = warnings;
    if (extra.is_object()) doc.update(nlohmann::ordered_json::parse(extra.dump()));
    out << doc.dump(2) << "\n";
    return;
  }
  const bool csv = format == "csv";
  const FieldView view = field_view(format);
  std::vector<Row> rows;
  Row header;
  if (view == FieldView::kCompact) {
    std::tie(header, rows) = compact_table(results);
  } else {
    for (const auto& r : results) rows.push_back(field_row(result_fields(), r, view));
    header = field_header(result_fields(), view);
  }
  print_stamped_rows(out, format, stamp, std::move(header), std::move(rows));
  if (view == FieldView::kCompact && format == "table")
    out << "(--format wide shows every column: spreads, p99, variants, backend, roof_check, "
           "trace overheads; csv and json every field)\n";
  // csv stays one header and its rows (the op_timer cell carries the label there).
  if (csv) return;
  for (const auto& w : warnings)
    out << (format == "md" ? "\n> **warning:** " : "warning: ") << w << "\n";
}

}  // namespace llmbench
