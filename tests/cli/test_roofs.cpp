// Issue 40, section 1, end to end: every denominator measured beside its numerator. A planted
// stale roofline cache (a GEMM peak far below the real one, as a cache measured while a build
// loaded the machine) must not give an MFU above 1 silently: the compute probe beside the case
// becomes the denominator, roof_check names the stale cache, the run says so once and raises the
// cache entry; a utilisation above 1 (forced with --peak-tflops) is flagged in table, csv and
// json; a cache marked busy is never reused silently.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/cli/llmbench_process.h"
#include "tools/run/peaks_cache.h"

namespace {

using llmbench_test::run_llmbench;
using llmbench_test::scratch_dir;
using nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kCase = "run --model tiny --batch 2 --prompt-len 32 --max-new-tokens 3 "
                              "--repeat 3 --warmup 1 --threads 2 --trace off";

// The roofline cache of `dir` with one CPU entry for 2 threads: `gemm_tflops` for every dtype.
void plant_cache(const fs::path& dir, double gemm_tflops, bool busy) {
  json e = {{"measured_at", "2026-11-27T00:00:00Z"}, {"read_gbps_best", 1000.0},
            {"busy", busy}, {"load", "load 1.93 on 2 CPUs, 0 other llmbench processes"}};
  for (const char* d : {"fp32", "bf16", "fp16", "int8", "int4"})
    e[std::string(d) + "_gemm_tflops_best"] = gemm_tflops;
  fs::create_directories(dir / "cache");
  llmbench_test::write_file(dir / "cache" / "roofline.json",
                            json{{llmbench::roofline_cache_key("cpu", 2), e}}.dump());
}

double cached_fp32_peak(const fs::path& dir) {
  const json c = json::parse(llmbench_test::slurp(dir / "cache" / "roofline.json"));
  return c.at(llmbench::roofline_cache_key("cpu", 2)).at("fp32_gemm_tflops_best").get<double>();
}

TEST(Roofs, AStaleCachedPeakIsReplacedByTheProbeNamedAndRaised) {
  const fs::path dir = scratch_dir();
  plant_cache(dir, 1e-4, false);  // about a thousandth of what a 2-core GEMM reaches
  const auto r = run_llmbench(std::string(kCase) + " --db " + (dir / "a.db").string() +
                                  " --format json",
                              dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json doc = json::parse(r.out);
  const json& c = doc.at("cases").at(0);
  const double mfu = c.at("mfu").get<double>();
  const std::string check = c.at("roof_check").get<std::string>();
  EXPECT_NE(check.find("vs cached peak"), std::string::npos) << check;
  // The probe, not the stale cache, is the denominator: MFU at most 1 or named.
  EXPECT_TRUE(mfu <= 1.0 || check.find("MFU") != std::string::npos) << mfu << " " << check;
  EXPECT_GT(c.at("mfu_peak_tflops").get<double>(), 1e-3);
  EXPECT_GT(c.at("gemm_tflops_before").get<double>(), 1e-3);
  EXPECT_GT(c.at("gemm_tflops_after").get<double>(), 1e-3);
  // Said once, and the cache raised so the next run divides by the better figure.
  const std::string warn = "the cached fp32 GEMM peak";
  const auto first = r.err.find(warn);
  ASSERT_NE(first, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(warn, first + 1), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("raised the cached peak"), std::string::npos) << r.err;
  EXPECT_GT(cached_fp32_peak(dir), 1e-3);
  // The json's warnings say the same once, with the advice.
  int mentions = 0;
  for (const auto& w : doc.at("warnings"))
    if (w.get<std::string>().find("roof check") != std::string::npos) ++mentions;
  EXPECT_EQ(mentions, 1) << doc.at("warnings").dump();
}

TEST(Roofs, AUtilisationAboveOneIsFlaggedInTableCsvAndJson) {
  const fs::path dir = scratch_dir();
  // A given peak is the denominator whatever the probe says: 1e-6 TFLOP/s puts MFU far above 1.
  const std::string args = std::string(kCase) + " --peak-tflops 0.000001 --peak-bw-gbps 1000";
  const auto table = run_llmbench(args + " --db " + (dir / "t.db").string(), dir / "t");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("!"), std::string::npos) << table.out;  // the mfu cell, flagged
  // The warnings under the table name it and say what to do.
  EXPECT_NE(table.out.find("MFU"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("llmbench roofline"), std::string::npos) << table.out;
  const auto csv = run_llmbench(args + " --format csv --db " + (dir / "c.db").string(), dir / "c");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_NE(csv.out.find("roof_check"), std::string::npos);
  EXPECT_NE(csv.out.find("> 1"), std::string::npos) << csv.out;
  const auto js = run_llmbench(args + " --format json --db " + (dir / "j.db").string(), dir / "j");
  ASSERT_EQ(js.exit_code, 0) << js.err;
  const json c = json::parse(js.out).at("cases").at(0);
  EXPECT_GT(c.at("mfu").get<double>(), 1.0);
  EXPECT_NE(c.at("roof_check").get<std::string>().find("MFU"), std::string::npos);
  // With --peak-tflops no compute probe runs (its figure would not be used).
  EXPECT_TRUE(c.at("gemm_tflops_before").is_null());
}

TEST(Roofs, OpRooflineFlagsAFractionAboveOne) {
  const fs::path dir = scratch_dir();
  const std::string db = (dir / "o.db").string();
  auto r = run_llmbench("run --model tiny --batch 2 --prompt-len 32 --max-new-tokens 3 --repeat 2 "
                        "--threads 2 --trace ops --peak-tflops 0.000001 --peak-bw-gbps 0.001 "
                        "--db " + db, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_llmbench("query " + db + " op_roofline --format json", dir / "q");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int flagged = 0;
  for (const auto& row : json::parse(r.out)) {
    if (row.at("fraction_of_bound").is_null()) continue;
    if (row.at("fraction_of_bound").get<double>() > 1) {
      EXPECT_NE(row.at("roof_check").get<std::string>().find("llmbench roofline"),
                std::string::npos);
      ++flagged;
    }
  }
  EXPECT_GT(flagged, 0) << r.out;
}

TEST(Roofs, ACacheMeasuredOnABusyMachineIsNeverReusedSilently) {
  const fs::path dir = scratch_dir();
  plant_cache(dir, 1e-4, true);
  // Another process named llmbench makes the machine busy now (a copy of sleep, 20 s at most),
  // so the entry is used with a warning instead of being measured again (25 s).
  fs::copy_file("/bin/sleep", dir / "llmbench", fs::copy_options::overwrite_existing);
  const std::string pidfile = (dir / "pid").string();
  ASSERT_EQ(std::system(((dir / "llmbench").string() + " 20 & echo $! > " + pidfile).c_str()), 0);
  const auto r = run_llmbench(std::string(kCase) + " --db " + (dir / "b.db").string(), dir);
  std::system(("kill $(cat " + pidfile + ") 2>/dev/null").c_str());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("measured on a busy machine"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("busy now too"), std::string::npos) << r.err;  // not measured again
}

}  // namespace
