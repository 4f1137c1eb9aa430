// `llmbench report H.db` for a history database: 50 series x 500 commits (from CSV, one with a
// planted step) stay under 2 MB and every chart draws in headless Chromium, with the step's
// change point marked; the draw time the page measures is printed (docs/ci.md quotes it).
#include <gtest/gtest.h>

#include <regex>

#include "tests/history/synthetic_series.h"
#include "tests/report/report_browser.h"

using namespace llmbench_test;

TEST(HistoryReport, FiftySeriesOf500CommitsUnderTwoMegabytesAndDrawn) {
  const fs::path d = scratch_dir();
  for (const char* f : {"h.db", "h.db-wal", "h.db-shm", "h.html"}) fs::remove(d / f);
  std::string csv = "series,commit,time,value\n";
  for (int s = 0; s < 50; ++s) {
    // Series 0 steps up 10% at commit 400; series 1 spans 100x (log axis); the rest are flat.
    const auto x = llmbench::testing::step_series(100 + s, 500, 50, 1, {{400, s == 0 ? 5.0 : 0.0}});
    for (int i = 0; i < 500; ++i) {
      const double v = s == 1 ? 0.1 * std::pow(1.01, i) : x[std::size_t(i)];
      char line[160];
      std::snprintf(line, sizeof line, "series_%02d,%040x,2026-%02d-%02dT%02d:%02d:00Z,%.4f\n", s,
                    i + 0x1000, 1 + i / 150, 1 + (i / 6) % 25, i % 6, 0, v);
      csv += line;
    }
  }
  write_file(d / "s.csv", csv);
  Result r = run_llmbench("history add " + (d / "h.db").string() + " " + (d / "s.csv").string() +
                          " --quiet", d / "add");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_llmbench("report " + (d / "h.db").string() + " -o " + (d / "h.html").string(), d / "report");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto size = fs::file_size(d / "h.html");
  std::printf("history page, 50 series x 500 commits: %.0f KiB\n", double(size) / 1024);
  EXPECT_LT(size, 2u * 1024 * 1024);
  const std::string html = slurp(d / "h.html");
  EXPECT_NE(html.find("\"csv / series_00\""), std::string::npos);
  EXPECT_EQ(html.find("http"), std::string::npos);  // nothing fetched

  const std::string browser = find_browser();
  if (browser.empty()) GTEST_SKIP() << kNoBrowser;
  const std::string dom = run_browser(browser, d / "h.html", d);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(dom, m, std::regex("charts=(\\d+) points=(\\d+) drawn=(\\d+) ms=([0-9.]+)")))
      << dom.substr(0, 2000);
  EXPECT_EQ(m[1], "50");
  EXPECT_EQ(m[2], "25000");
  EXPECT_EQ(m[3], "50");
  std::printf("drawn in headless Chromium in %s ms\n", m[4].str().c_str());
  // Series 0's step is a change point at commit 400; series 1 is drawn on a log axis.
  EXPECT_NE(dom.find("data-change-points=\"1\""), std::string::npos);
  EXPECT_NE(dom.find("data-log=\"1\""), std::string::npos);
}
