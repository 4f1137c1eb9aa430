// The field list of `llmbench run` results: one row per case, the same fields in every format.
// Not-applicable values (TPOT and MBU when max_new_tokens = 1) print as "n/a" in table and md,
// as an empty cell in csv, and as null in json, never as 0.
#pragma once
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "engine/bench_case.h"
#include "tools/report/printers.h"

namespace llmbench {

Row result_header();
// `na` is the text of a not-applicable value.
Row result_row(const CaseResult& r, const std::string& na);

// A case in full: spec, status, metrics, raw per-repetition samples, prompt and generated ids.
nlohmann::json case_json(const CaseResult& r);

// Prints results in `format` (table|md|csv|json); json wraps the cases with the peaks used,
// plus `extra`'s keys (e.g. the SLO report) when it is an object.
void print_results(std::ostream& out, const std::string& format,
                   const std::vector<CaseResult>& results, const Peaks& peaks,
                   const nlohmann::json& extra = nullptr);

}  // namespace llmbench
