// SLO report (see slo_report.h; docs/metrics.md defines the columns).
#include "tools/console/slo_report.h"

#include <fmt/core.h>

#include "kernels/common/error.h"
#include "tools/console/field_rows.h"

namespace llmbench {

bool meets_slo(const CaseResult& r, const SloLimits& limits) {
  if (r.status != "ok") return false;
  if (limits.ttft_p99_ms && !(r.metrics.ttft_ms.percentile(99) <= *limits.ttft_p99_ms)) return false;
  if (limits.tpot_p99_ms && r.metrics.tpot_ms &&
      !(r.metrics.tpot_ms->percentile(99) <= *limits.tpot_p99_ms))
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

namespace {

// The columns the report shows, by their field-list names: the configuration (read from any case
// of the group) and the figures of the largest batch meeting the SLO. Values, precision and
// json come from the field list, as in every other output.
constexpr std::string_view kConfigFields[] = {"model", "dtype", "backend", "prompt_len",
                                              "max_new_tokens", "variants"};
constexpr std::string_view kBestFields[] = {"n", "ttft_ms_p99", "tpot_ms_p99", "throughput_tok_s"};

const ResultField& field(std::string_view name) {
  const ResultField* f = find_result_field(name);
  LLMBENCH_CHECK(f, "the SLO report names a field the list does not have");
  return *f;
}

std::string table_cell(std::string_view name, const CaseResult& r) {
  const ResultField& f = field(name);
  return field_cell(field_value(f, r, FieldSink::kTable), f.decimals, false);
}

}  // namespace

Row slo_header() {
  Row h(std::begin(kConfigFields), std::end(kConfigFields));
  h.insert(h.end(), {"slo_ttft_ms_p99", "slo_tpot_ms_p99", "max_batch"});
  h.insert(h.end(), std::begin(kBestFields), std::end(kBestFields));
  return h;
}

std::vector<Row> slo_rows(const std::vector<SloGroup>& groups, const SloLimits& limits,
                          const std::string& na) {
  auto limit = [&](const std::optional<double>& v) { return v ? format_number(*v) : na; };
  std::vector<Row> rows;
  for (const SloGroup& g : groups) {
    Row row;
    for (std::string_view name : kConfigFields) row.push_back(table_cell(name, *g.first));
    row.insert(row.end(), {limit(limits.ttft_p99_ms), limit(limits.tpot_p99_ms)});
    if (!g.best) {
      row.push_back("none");
      for (std::size_t i = 0; i < std::size(kBestFields); ++i) row.push_back(na);
    } else {
      row.push_back(std::to_string(g.best->spec.batch));
      for (std::string_view name : kBestFields) {
        const std::string c = table_cell(name, *g.best);
        row.push_back(c == "n/a" ? na : c);
      }
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

nlohmann::json slo_json(const std::vector<SloGroup>& groups, const SloLimits& limits) {
  using nlohmann::json;
  auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  auto value = [](std::string_view name, const CaseResult& r) {
    const ResultField& f = field(name);
    return json::parse(field_json(field_value(f, r, FieldSink::kJson), f.json_text).dump());
  };
  json out = json::array();
  for (const SloGroup& g : groups) {
    json j = json::object();
    for (std::string_view name : kConfigFields) j[std::string(name)] = value(name, *g.first);
    j["slo_ttft_ms_p99"] = opt(limits.ttft_p99_ms);
    j["slo_tpot_ms_p99"] = opt(limits.tpot_p99_ms);
    j["batches_tested"] = g.batches_tested;
    if (g.best) {
      j["max_batch"] = g.best->spec.batch;
      for (std::string_view name : kBestFields) j[std::string(name)] = value(name, *g.best);
    } else {
      j["max_batch"] = nullptr;
    }
    out.push_back(j);
  }
  return out;
}

}  // namespace llmbench
