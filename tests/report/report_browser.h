// Headless Chromium for the report tests: finds the browser and renders a page offline (no
// network, a fresh profile, bounded time), returning the DOM it dumps and, when asked, a
// screenshot. Used by test_report.cpp and test_report_serving.cpp.
#pragma once
#include <cstdlib>
#include <filesystem>
#include <string>

#include "../cli/llmbench_process.h"

namespace llmbench_test {

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

}  // namespace llmbench_test
