// Prints the interleaved gate's result (compare_gate.h, compare_rounds.h) as a table
// (terminal), md (a pull-request comment: the summary line, the noise floor, warnings, the
// table), csv (the table alone) or json (rounds, settings, noise floor, cases with per-metric
// results, summary). Every tabular format has the same columns (gate_header());
// docs/metrics.md ("compare", "Interleaved rounds") defines each.
#pragma once
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "tools/compare/compare_gate.h"
#include "tools/compare/compare_rounds.h"
#include "tools/console/printers.h"

namespace llmbench {

Row gate_header();
std::vector<Row> gate_rows(const GateReport& g, const std::string& na);

// "noise floor 3.1% (A/A, same side in adjacent rounds; largest at tiny ... tpot_ms)"
std::string noise_floor_text(const GateReport& g);

nlohmann::ordered_json gate_json(const GateReport& g, const RoundsResult& r);

void print_gate_report(std::ostream& out, const std::string& format, const GateReport& g,
                       const RoundsResult& r);

}  // namespace llmbench
