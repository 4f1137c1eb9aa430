// The printed forms of `llmbench load` results, all read from one field list: table and md
// (the compact view: medians and p99s), csv (every field, full precision, empty cells for
// not-applicable) and json (the run and every level with every field, plus the first error).
// Every name is defined in docs/metrics.md ("Serving metrics").
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "tools/load/load_metrics.h"
#include "tools/load/load_plan.h"

namespace llmbench {

struct LevelResult {
  LevelSpec spec;
  LevelSummary summary;
  std::int64_t level_id = 0;  // load_level.id
  nlohmann::ordered_json vllm;  // --format vllm-json: vLLM's result object (vllm_json.h)
};

struct LoadField {
  const char* name;   // column name: "ttft_ms_p50", ...
  bool compact;       // shown in table and md
  // The value, or nullopt for not applicable.
  std::optional<double> (*number)(const LevelResult&);
  // Text fields (level): set instead of number.
  std::string (*text)(const LevelResult&);
  int decimals;       // table/md precision
};

const std::vector<LoadField>& load_fields(bool with_goodput);

// Prints `levels` in `format` (table|md|csv|json|jsonl|vllm-json). `run` is the json "run"
// object. Every format carries the schema version (store.h's kSchemaVersion): json and jsonl
// as "schema_version", csv as a column, table and md in a closing line, vllm-json as
// "llmbench_schema_version".
void print_load_results(std::ostream& out, const std::string& format,
                        const std::vector<LevelResult>& levels, bool with_goodput,
                        const nlohmann::ordered_json& run);

// One level's object of the json and jsonl formats: level_id, every field, first_error.
nlohmann::ordered_json level_json(const LevelResult& r, bool with_goodput);

// "c4 in128 out128: 40 ok, 0 failed in 3.1 s, 12.9 req/s, TTFT p50 12.3 ms, TPOT p50 1.1 ms"
std::string level_progress_line(const LevelResult& r);

}  // namespace llmbench
