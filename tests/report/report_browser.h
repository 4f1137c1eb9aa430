// Headless Chromium for the report tests: finds the browser and renders a page offline (no
// network, a fresh profile, bounded time), returning the DOM it dumps and, when asked, a
// screenshot. Used by test_report.cpp and test_report_serving.cpp.
#pragma once
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "../cli/llmbench_process.h"

namespace llmbench_test {

// What a browser test says when it skips.
inline constexpr const char* kNoBrowser =
    "no headless browser installed (apt-get install chromium; scripts/setup.sh does): the "
    "end-to-end render check did not run";

inline std::string find_browser() {
  for (const char* b : {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"})
    if (fs::exists(b)) return b;
  return "";
}

// Runs headless Chromium on `html` (file://, no network, bounded time) and returns the DOM it
// dumps; a screenshot (`window` pixels, "W,H") goes to `png` when given.
inline std::string run_browser(const std::string& browser, const fs::path& html,
                               const fs::path& work, const fs::path& png = {},
                               const std::string& window = "1200,3000") {
  fs::remove_all(work / "profile");
  const std::string common =
      "timeout 90 " + browser +
      " --headless --no-sandbox --disable-gpu --disable-background-networking "
      "--disable-component-update --disable-sync --no-first-run --disable-extensions "
      "--disable-default-apps --no-default-browser-check --host-resolver-rules='MAP * ~NOTFOUND' "
      "--user-data-dir=" + (work / "profile").string() + " --virtual-time-budget=10000 ";
  std::system((common + "--dump-dom file://" + fs::absolute(html).string() + " > " +
               (work / "dom.html").string() + " 2> " + (work / "browser.err").string())
                  .c_str());
  if (!png.empty()) {
    fs::remove_all(work / "profile");
    std::system((common + "--hide-scrollbars --window-size=" + window + " --screenshot=" +
                 png.string() + " file://" + fs::absolute(html).string() + " 2>> " +
                 (work / "browser.err").string())
                    .c_str());
  }
  return slurp(work / "dom.html");
}

// The status line the page writes once drawn (hidden: display none): "charts=N series=M
// blank=B cards=C errors=E resources=R overlaps=O clipped=K [messages]" (overlaps: pairs of
// neighbouring tick labels that overlap, on every axis; clipped: points or bars drawn outside
// their plot area); done is false when the page never finished.
struct PageStatus {
  bool done = false;
  int charts = 0, series = 0, blank = 0, cards = 0, errors = 0, resources = 0, overlaps = 0,
      clipped = 0;
  std::string messages;
};
inline PageStatus page_status(const std::string& dom) {
  std::smatch m;
  const std::regex status(
      R"(id="report-status" data-done="1">charts=(\d+) series=(\d+) blank=(\d+) cards=(\d+) )"
      R"(errors=(\d+) resources=(\d+) overlaps=(\d+) clipped=(\d+)([^<]*))");
  PageStatus st;
  if (!std::regex_search(dom, m, status)) return st;
  st.done = true;
  int* fields[] = {&st.charts, &st.series, &st.blank,    &st.cards,
                   &st.errors, &st.resources, &st.overlaps, &st.clipped};
  for (int i = 0; i < 8; ++i) *fields[i] = std::stoi(m[i + 1]);
  st.messages = m[9];
  return st;
}

// Attribute `attr` of the canvas of chart `id` as the page left it (data-labels: names drawn,
// data-layers: layer bands, data-clipped, data-overlaps); -1 when absent.
inline int canvas_attr(const std::string& dom, const std::string& id, const std::string& attr) {
  const auto at = dom.find("<canvas id=\"chart-" + id + "\"");
  if (at == std::string::npos) return -1;
  const std::string tag = dom.substr(at, dom.find('>', at) - at);
  std::smatch m;
  if (!std::regex_search(tag, m, std::regex(attr + "=\"(-?\\d+)\""))) return -1;
  return std::stoi(m[1]);
}

// The rows of the page's opening summary table (<table id="summary-table">), header included.
inline int summary_rows(const std::string& dom) {
  const auto at = dom.find("id=\"summary-table\"");
  if (at == std::string::npos) return 0;
  const std::string t = dom.substr(at, dom.find("</table>", at) - at);
  int n = 0;
  for (auto p = t.find("<tr"); p != std::string::npos; p = t.find("<tr", p + 1)) ++n;
  return n;
}

// The charts and datasets (series) of build_report_data's JSON: what the page must draw.
inline std::pair<int, int> count_charts(const nlohmann::ordered_json& data) {
  int charts = 0, series = 0;
  for (const auto& s : data["sections"])
    for (const auto& c : s["charts"]) {
      ++charts;
      series += int(c["config"]["data"]["datasets"].size());
    }
  return {charts, series};
}

}  // namespace llmbench_test
