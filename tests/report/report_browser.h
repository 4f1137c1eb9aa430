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

// The status line the page writes once drawn: "charts=N series=M blank=B cards=C errors=E
// resources=R [messages]"; done is false when the page never finished.
struct PageStatus {
  bool done = false;
  int charts = 0, series = 0, blank = 0, cards = 0, errors = 0, resources = 0;
  std::string messages;
};
inline PageStatus page_status(const std::string& dom) {
  std::smatch m;
  const std::regex status(
      R"(id="report-status" data-done="1">charts=(\d+) series=(\d+) blank=(\d+) cards=(\d+) )"
      R"(errors=(\d+) resources=(\d+)([^<]*))");
  PageStatus st;
  if (!std::regex_search(dom, m, status)) return st;
  st.done = true;
  int* fields[] = {&st.charts, &st.series, &st.blank, &st.cards, &st.errors, &st.resources};
  for (int i = 0; i < 6; ++i) *fields[i] = std::stoi(m[i + 1]);
  st.messages = m[7];
  return st;
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
