// The SLO report of a sweep (--slo-ttft-p99-ms, --slo-tpot-p99-ms, in the spirit of MLPerf's
// LLM server latency constraints): for each configuration apart from batch, the largest batch
// whose p99 TTFT and p99 TPOT are within the limits. A limit not given is not checked; TPOT
// is not checked for cases that generate one token. Cases that failed never meet the SLO.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "engine/bench/bench_case.h"
#include "tools/console/printers.h"

namespace llmbench {

struct SloLimits {
  std::optional<double> ttft_p99_ms, tpot_p99_ms;
  bool any() const { return ttft_p99_ms || tpot_p99_ms; }
};

// Whether one case meets the limits.
bool meets_slo(const CaseResult& r, const SloLimits& limits);

struct SloGroup {
  const CaseResult* first = nullptr;  // any case of the group (for its configuration)
  const CaseResult* best = nullptr;   // the largest batch meeting the SLO; nullptr: none does
  std::vector<int> batches_tested;
};

// Groups in first-appearance order.
std::vector<SloGroup> slo_groups(const std::vector<CaseResult>& results, const SloLimits& limits);

Row slo_header();
std::vector<Row> slo_rows(const std::vector<SloGroup>& groups, const SloLimits& limits,
                          const std::string& na);
nlohmann::json slo_json(const std::vector<SloGroup>& groups, const SloLimits& limits);

}  // namespace llmbench
