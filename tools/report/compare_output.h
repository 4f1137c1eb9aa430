// Prints a comparison report (compare_report.h) as a table (terminal), md (a pull-request
// comment: the summary line first, environment warnings, then the table), csv (the table
// alone, one row per case and metric) or json (one object: both runs, settings, environment
// notes, cases with per-metric results, unmatched cases, summary counts). Every tabular format
// has the same columns (compare_header()); docs/metrics.md ("compare") defines each.
#pragma once
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "tools/compare/compare_report.h"
#include "tools/console/printers.h"

namespace llmbench {

Row compare_header();
// One row per compared metric (named by its `run` column, e.g. ttft_ms); one row (metric "-") per case that was not compared, with its
// status as the verdict. `na` is the text of an empty cell.
std::vector<Row> compare_rows(const CompareReport& r, const std::string& na);

nlohmann::ordered_json compare_json(const CompareReport& r);

// The summary line table output and the HTML report's compare view open with: "llmbench compare:
// 1 regression, 0 improvements, 5 same (0 too few samples, 0 n/a; 2 cases compared, ...;
// metrics ttft,tpot,e2e; alpha 0.05; threshold 5%)".
std::string compare_summary_line(const CompareReport& r);

void print_report(std::ostream& out, const std::string& format, const CompareReport& r);

}  // namespace llmbench
