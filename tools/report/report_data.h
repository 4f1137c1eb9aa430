// The numbers behind `llmbench report`: reads a result database read-only, aggregates in SQL
// (never one row per trace event) and returns, per section, the Chart.js datasets and the
// table of the same numbers (JSON). Pure apart from the reads; the page is report_html.h.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace llmbench {

struct ReportOptions {
  std::string db;                     // DB or DB:RUN (see parse_side)
  std::optional<std::int64_t> run;    // run group; nullopt: the latest
  std::string db2;                    // optional second side (DB or DB:RUN): the compare view
};

// {"title", "sections": [{"id","title","note"?,"facts"?,"charts":[{"id","title","config",
// "table":{"columns","rows"}}]}], "omitted": [notes]}. A section the data cannot support is
// left out and named in "omitted" with the reason; never throws for missing pieces (only
// BadInput for a missing or non-llmbench file or an unknown run).
nlohmann::ordered_json build_report_data(const ReportOptions& options);

}  // namespace llmbench
