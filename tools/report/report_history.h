// The page of `llmbench report H.db` for a history database (docs/ci.md, "History"): every
// series over its commits, one chart each, with its interval band (each point's interval; a
// gate's A/A noise floor where it has no interval), the change points `history check` finds
// (marked at their first commit, with the commit and the ratio), and the gate verdicts of the
// commits a gate measured (a marker per verdict). A y axis spanning more than 10x is
// logarithmic. Self-contained: the data and a small canvas drawer are inlined (no Chart.js,
// so 50 series x 500 commits stay far below 2 MB and draw in well under a second). Not here:
// the run and compare pages (report_html.h).
#pragma once
#include <string>

#include "tools/history/history_check.h"

namespace llmbench {

// Whether the database at `path` (read-only) holds history points: what `llmbench report`
// draws as a history page.
bool is_history_database(const std::string& path);

// The page for the history database at `path`; change points found with `o`.
std::string render_history_html(const std::string& path, const CheckOptions& o);

}  // namespace llmbench
