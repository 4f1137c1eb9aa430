// The printed forms of `llmbench run` results, all read from the field list
// (tools/store/result_fields.h): table and md (the compact view, with n and p10-p90 spreads),
// csv (every field, full precision, empty cells for not-applicable), json (the run, the peaks
// and every case) and jsonl (one case per line, written as each case ends).
#pragma once
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "engine/bench/bench_case.h"
#include "tools/console/field_rows.h"
#include "tools/console/printers.h"
#include "tools/store/result_fields.h"
#include "tools/store/run_info.h"

namespace llmbench {

// Header and rows of the table/md view, or of csv (`csv` true).
Row result_header(bool csv);
Row result_row(const CaseResult& r, bool csv);

// A case in full: every field (csv's set), the raw per-repetition samples, the trace summary,
// the prompt and generated ids. With `stamp` the schema version, run id and commit open it
// (jsonl lines are self-contained).
nlohmann::ordered_json case_json(const CaseResult& r, const OutputStamp* stamp = nullptr);

// The run's row as json: id, start time, command line, commit, build, host, CPU/GPU, threads.
nlohmann::ordered_json run_json(std::int64_t run_id, const RunInfo& info);

// Warnings the numbers need next to them: a p99 backed by fewer than kMinSamplesForP99
// samples (TPOT's in every table; TTFT's when the SLO report uses it), the host-nosync timer.
// One line each, without a prefix.
inline constexpr int kMinSamplesForP99 = 20;
std::vector<std::string> result_warnings(const std::vector<CaseResult>& results, bool slo_used);

// Prints results in `format` (table|md|csv|json; jsonl prints nothing here: its lines are
// written as cases end). json wraps the cases with the schema version, `run` (run_json) and
// the peaks, plus `extra`'s keys (e.g. the SLO report) when it is an object; csv opens every
// row with the schema version, run id and commit (from `run`), table and md end with them.
void print_results(std::ostream& out, const std::string& format,
                   const std::vector<CaseResult>& results, const Peaks& peaks,
                   const nlohmann::ordered_json& run = nullptr,
                   const nlohmann::json& extra = nullptr);

}  // namespace llmbench
