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

// The page: the summary table first, then each section; each chart under its one title (an
// h3; the canvas draws none), with its drawing aids (the threshold band across the plot, op
// names in the timeline's bars and its layers shaded, names beside the roofline's points, a
// warning style for what cannot be right). After loading it writes, into the hidden
// <pre id="report-status">, one line "charts=N series=M blank=B cards=C errors=E resources=R
// overlaps=O clipped=K" (blank: charts whose canvas stayed empty; resources: network or file
// loads the page made, always 0; overlaps: neighbouring tick labels drawn over each other;
// clipped: points or bars outside their plot), sets data-done="1", and gives each canvas
// data-overlaps, data-clipped and, where drawn, data-labels and data-layers: what the
// browser test reads.
std::string render_report_html(const nlohmann::ordered_json& data, const std::string& chartjs);

}  // namespace llmbench
