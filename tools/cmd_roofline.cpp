// `llmbench roofline`: measure the backend's peak read bandwidth and GEMM FLOP/s, print them,
// and cache them as the MBU/MFU denominators of later runs (tools/peaks_cache.h).
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <omp.h>

#include "engine/cpu_backend.h"
#include "engine/error.h"
#include "tools/commands.h"
#include "tools/peaks_cache.h"

namespace llmbench {

namespace {

int run_roofline(const std::string& backend_name, int threads) {
  if (backend_name == "cuda")
    throw BadInput("--backend cuda: this llmbench was built without the CUDA backend");
  if (backend_name != "auto" && backend_name != "cpu")
    throw BadInput("--backend: expected auto, cpu or cuda, got '" + backend_name + "'");
  CpuBackend backend(threads);
  const int t = backend.threads();
  const std::string key = roofline_cache_key("cpu", t);
  fmt::print("measuring {} ...\n", key);
  const RooflineResult r = measure_and_cache_roofline(key);
  fmt::print("read bandwidth: best {:.2f} GB/s, median {:.2f} GB/s ({} MiB buffer, {} reps)\n",
             r.read_gbps_best, r.read_gbps_median, r.read_bytes >> 20, r.repetitions);
  fmt::print("sgemm {}^3:     best {:.3f} TFLOP/s, median {:.3f} TFLOP/s\n", r.sgemm_n,
             r.sgemm_tflops_best, r.sgemm_tflops_median);
  fmt::print("cached in {} (run uses the best values as MBU/MFU peaks)\n", roofline_cache_path());
  return 0;
}

}  // namespace

void add_roofline_command(CLI::App& root, CommandContext& ctx) {
  auto backend = std::make_shared<std::string>("auto");
  auto threads = std::make_shared<int>(0);
  CLI::App* cmd = root.add_subcommand("roofline", "Measure peak bandwidth and FLOP/s");
  cmd->add_option("--backend", *backend, "auto|cpu|cuda")->capture_default_str();
  cmd->add_option("--threads", *threads, "CPU threads; 0 = all")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->callback([backend, threads, &ctx] {
    ctx.exit_code = run_roofline(*backend, *threads > 0 ? *threads : omp_get_max_threads());
  });
}

}  // namespace llmbench
