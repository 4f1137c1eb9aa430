// The printed forms of `llmbench load` results, all read from one field list (the same Field
// type and printers as `run`'s): table and md (the compact view: medians and p99s), csv (every
// field, full precision, empty cells for not-applicable), json and jsonl (the run and every
// level with every field, plus the first error) and vllm-json (vLLM's result object per level).
// Every name is defined in docs/metrics.md ("Serving metrics").
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <ostream>
#include <string>
#include <vector>

#include "tools/load/load_metrics.h"
#include "tools/load/steady_state.h"
#include "tools/store/result_fields.h"
#include "tools/load/load_plan.h"

namespace llmbench {

struct LevelResult {
  LevelSpec spec;
  LevelSummary summary;
  std::optional<SteadyWindow> steady;  // the steady-state window (steady_state.h); none: no ok request or never at load
  std::int64_t level_id = 0;  // load_level.id
  // The saturation guard (saturation.h), rate levels only: nullopt when it did not judge the
  // level (a concurrency level, or one shorter than the guard's window).
  std::optional<bool> over_capacity;
  std::optional<double> saturation_s;  // when it fired, s since the level's origin
  bool stopped_early = false;          // --stop-on-saturation ended the level then
  int aborted = 0;                     // requests in flight it aborted then (among `failed`)
  nlohmann::ordered_json vllm;  // --format vllm-json: vLLM's result object (vllm_json.h)
};

// The field list of a load level (tools/store/result_fields.h's Field): configuration,
// counts, throughput, and each latency expanded over kStatistics. `with_goodput` adds the
// goodput fields (--goodput given).
using LoadField = Field<LevelResult>;
std::span<const LoadField> load_fields(bool with_goodput);

// Prints `levels` in `format` (table|md|csv|json|jsonl|vllm-json). `run` is the json "run"
// object; its load_run_id and git_commit, with the schema version (store.h's kSchemaVersion),
// open every csv row and end the table and md; json and jsonl carry "schema_version",
// vllm-json "llmbench_schema_version".
void print_load_results(std::ostream& out, const std::string& format,
                        const std::vector<LevelResult>& levels, bool with_goodput,
                        const nlohmann::ordered_json& run);

// One level's object of the json and jsonl formats: level_id, every field, first_error.
nlohmann::ordered_json level_json(const LevelResult& r, bool with_goodput);

// "c4 in128 out128: 40 ok, 0 failed in 3.1 s, 12.9 req/s, TTFT p50 12.3 ms, TPOT p50 1.1 ms"
std::string level_progress_line(const LevelResult& r);

}  // namespace llmbench
