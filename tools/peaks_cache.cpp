// Roofline cache (see peaks_cache.h).
#include "tools/peaks_cache.h"

#include <fmt/core.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/cpu_backend.h"
#include "engine/error.h"
#include "tools/run_info.h"

namespace llmbench {

namespace fs = std::filesystem;
using nlohmann::json;

std::string roofline_cache_path() {
  if (const char* d = std::getenv("LLMBENCH_CACHE_DIR"); d && *d)
    return (fs::path(d) / "roofline.json").string();
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    return (fs::path(x) / "llmbench" / "roofline.json").string();
  const char* home = std::getenv("HOME");
  return (fs::path(home && *home ? home : "/tmp") / ".cache" / "llmbench" / "roofline.json")
      .string();
}

std::string roofline_cache_key(const std::string& backend, int threads) {
  return backend + "|" + cpu_model_name() + "|threads=" + std::to_string(threads);
}

namespace {

json load_cache() {
  std::ifstream in(roofline_cache_path());
  if (!in) return json::object();
  try {
    json j = json::parse(in);
    return j.is_object() ? j : json::object();
  } catch (const json::exception&) {
    return json::object();  // a corrupt cache is re-measured, not fatal
  }
}

}  // namespace

RooflineResult measure_and_cache_roofline(const std::string& key) {
  RooflineResult r = measure_cpu_roofline();
  json cache = load_cache();
  cache[key] = {{"measured_at", utc_now_iso8601()},
                {"read_gbps_best", r.read_gbps_best},
                {"read_gbps_median", r.read_gbps_median},
                {"read_bytes", r.read_bytes},
                {"sgemm_tflops_best", r.sgemm_tflops_best},
                {"sgemm_tflops_median", r.sgemm_tflops_median},
                {"sgemm_n", r.sgemm_n},
                {"repetitions", r.repetitions}};
  const fs::path path = roofline_cache_path();
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp);
    out << cache.dump(2) << "\n";
    if (!out) return r;  // an unwritable cache only costs a re-measurement next time
  }
  fs::rename(tmp, path, ec);
  return r;
}

Peaks resolve_peaks(const std::string& backend, int threads, std::optional<double> bw_gbps,
                    std::optional<double> tflops, bool quiet) {
  Peaks p;
  if (bw_gbps && tflops) {
    p.bandwidth_gbps = *bw_gbps;
    p.tflops = *tflops;
    p.source = "given by --peak-bw-gbps and --peak-tflops";
    return p;
  }
  if (backend != "cpu")  // the CUDA roofline (D2D copy, cuBLAS GEMM) is not implemented yet
    throw BadInput("--backend " + backend + ": no measured roofline for this backend yet; pass "
                   "--peak-bw-gbps and --peak-tflops");
  const std::string key = roofline_cache_key(backend, threads);
  json cache = load_cache();
  double bw = 0, tf = 0;
  std::string origin;
  if (cache.contains(key) && cache[key].contains("read_gbps_best")) {
    bw = cache[key]["read_gbps_best"].get<double>();
    tf = cache[key]["sgemm_tflops_best"].get<double>();
    origin = "measured by llmbench roofline on " + cache[key].value("measured_at", "?") +
             " (cache " + roofline_cache_path() + ")";
  } else {
    if (!quiet)
      fmt::print(stderr, "measuring peaks for {} (first use; `llmbench roofline` re-measures)...\n",
                 key);
    RooflineResult r = measure_and_cache_roofline(key);
    bw = r.read_gbps_best;
    tf = r.sgemm_tflops_best;
    origin = "measured now by the roofline (cached in " + roofline_cache_path() + ")";
  }
  p.bandwidth_gbps = bw_gbps.value_or(bw);
  p.tflops = tflops.value_or(tf);
  p.source = origin;
  if (bw_gbps) p.source += "; bandwidth given by --peak-bw-gbps";
  if (tflops) p.source += "; FLOP/s given by --peak-tflops";
  return p;
}

}  // namespace llmbench
