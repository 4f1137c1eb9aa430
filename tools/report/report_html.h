// The page of `llmbench report`: one self-contained HTML file (Chart.js, the data and the
// drawing code inlined; no request of any kind) from build_report_data's JSON.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace llmbench {

// Where Debian's libjs-chart.js puts Chart.js 3.9 (UMD build).
inline constexpr const char* kChartJsPath = "/usr/share/javascript/chart.js/chart.min.js";

// Reads Chart.js from `path` (LLMBENCH_CHARTJS overrides the default). Throws BadInput saying
// how to install it when the file is missing.
std::string load_chartjs(const std::string& path = "");

// The page. After loading it writes, into <pre id="report-status">, one line
// "charts=N series=M blank=B errors=E resources=R" (blank: charts whose canvas stayed empty;
// resources: network or file loads the page made, always 0) and sets data-done="1".
std::string render_report_html(const nlohmann::ordered_json& data, const std::string& chartjs);

}  // namespace llmbench
