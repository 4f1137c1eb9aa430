// `llmbench roofline`: measure the backend's peak bandwidth and GEMM FLOP/s, print them, and
// cache them as the MBU/MFU denominators of later runs (tools/run/peaks_cache.h). The backend is
// chosen as `run` chooses it (engine/model/backend_factory.h): cpu (read bandwidth, OpenBLAS sgemm),
// or cuda (device-to-device copy and read bandwidth, cuBLAS GEMM per dtype;
// engine/bench/cuda_roofline.h); then the per-case read probe once (engine/bench/read_probe.h).
// On the CPU, then the decode op classes' kernel paths (tools/run/dispatch_cache.h): each path
// this CPU has timed at --model's decode shapes, the winner cached with the peaks and printed;
// --dispatch-only measures that alone (any backend: it is the CPU kernels' table).
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <omp.h>

#include <tuple>

#include "engine/model/backend_factory.h"
#include "engine/model/cpu_backend.h"
#include "engine/bench/read_probe.h"
#include "kernels/common/error.h"
#include "kernels/cpu/decode_dispatch.h"
#include "tools/cli/commands.h"
#include "tools/run/dispatch_cache.h"
#include "tools/run/machine_load.h"
#include "tools/run/peaks_cache.h"
#include "tools/run/run_plan.h"

namespace llmbench {

namespace {

// The per-case read probe (engine/bench/read_probe.h) once, beside the roofline's own read test.
void print_probe(const std::string& backend) {
  const auto probe = make_read_probe(backend);
  const ReadProbeResult p = probe->measure();
  fmt::print("read probe (what each case measures before and after itself): best {:.2f} GB/s, "
             "median {:.2f} GB/s ({} MiB, {} passes, {:.0f} ms with the first allocation)\n",
             p.gbps_best, p.gbps_median, probe->buffer_bytes() >> 20, kReadProbePasses,
             p.seconds * 1e3);
}

// The decode op classes' table at `model`'s shapes: measured and cached, one line per class.
void print_dispatch(const std::string& model, int threads) {
  const ModelConfig c = resolve_model(model);
  if (cpu::cpu_isa_forced()) {
    fmt::print("CPU kernel paths: {} for every op class, forced by LLMBENCH_CPU_ISA (no table "
               "measured)\n", cpu::cpu_isa_name());
    return;
  }
  fmt::print("CPU kernel paths of the decode matmul ({}; {}), median pass of {} interleaved "
             "rounds ...\n", c.name, decode_shapes(c).signature, kDispatchRounds);
  const MachineLoad load = current_machine_load();
  if (load.busy())
    fmt::print(stderr, "warning: the machine is busy ({}): the kernel paths timed now may not be "
               "the ones a quiet machine picks; the cache marks them so\n", load.describe());
  const DispatchMeasurement m = measure_and_cache_dispatch(c, threads);
  fmt::print("{}", describe_dispatch(m));
  fmt::print("dispatch measured in {:.2f} s and cached in {} under {} (run reads it for this "
             "model's shapes; prefill rows keep the widest path, {})\n",
             m.seconds, roofline_cache_path(), dispatch_cache_key(threads), cpu::cpu_isa_name());
}

int run_cpu_roofline(int threads, const std::string& model, bool dispatch_only) {
  CpuBackend backend(threads);
  const int t = backend.threads();
  if (dispatch_only) {
    print_dispatch(model, t);
    return 0;
  }
  const std::string key = roofline_cache_key("cpu", t);
  fmt::print("measuring {} ...\n", key);
  const RooflineResult r = measure_and_cache_roofline(key, true);
  fmt::print("read bandwidth: best {:.2f} GB/s, median {:.2f} GB/s ({} MiB buffer, {} reps)\n",
             r.read_gbps_best, r.read_gbps_median, r.read_bytes >> 20, r.repetitions);
  fmt::print("sgemm {}^3:     best {:.3f} TFLOP/s, median {:.3f} TFLOP/s\n", r.sgemm_n,
             r.sgemm_tflops_best, r.sgemm_tflops_median);
  fmt::print("engine GEMMs, best over 2048^3, 128x2048x2048, 128x5632x2048 and 128x512x512 (the MFU peaks):\n");
  for (const auto& [name, best, med] :
       {std::tuple{"fp32", r.fp32_gemm_tflops_best, r.fp32_gemm_tflops_median},
        std::tuple{"fp16", r.fp16_gemm_tflops_best, r.fp16_gemm_tflops_median},
        std::tuple{"bf16", r.bf16_gemm_tflops_best, r.bf16_gemm_tflops_median},
        std::tuple{"int8", r.int8_gemm_tflops_best, r.int8_gemm_tflops_median},
        std::tuple{"int4", r.int4_gemm_tflops_best, r.int4_gemm_tflops_median}})
    fmt::print("  {} GEMM:     best {:.3f} TFLOP/s, median {:.3f} TFLOP/s\n", name, best, med);
  print_probe("cpu");
  fmt::print("cached in {} (run uses the best GEMM of each dtype as the MFU peak; the read figure "
             "is MBU's reference, each case with decode steps divides by its own probe)\n",
             roofline_cache_path());
  print_dispatch(model, t);
  return 0;
}

#if defined(LLMBENCH_HAVE_CUDA)
int run_cuda_roofline() {
  constexpr int kDevice = 0;  // the device CudaBackend runs on
  const CudaDeviceInfo d = query_cuda_device(kDevice);
  fmt::print("device {}: {}, {} SMs, {:.1f} GiB\n", kDevice, d.name, d.sm_count, d.memory_gib);
  fmt::print("clocks: SM {} MHz, memory {} MHz (peak); memory bus {} bits\n", d.sm_clock_mhz,
             d.memory_clock_mhz, d.memory_bus_bits);
  fmt::print("datasheet bandwidth: {:.1f} GB/s (2 x memory clock x bus width / 8)\n",
             d.datasheet_bandwidth_gbps);
  fmt::print("driver {}, runtime {}\n", d.driver_version, d.runtime_version);
  fmt::print("measuring {} ...\n", cuda_roofline_cache_key(d.name));
  const CudaRooflineResult r = measure_and_cache_cuda_roofline(kDevice);
  const double ratio =
      d.datasheet_bandwidth_gbps > 0 ? r.copy_gbps_best / d.datasheet_bandwidth_gbps : 0;
  fmt::print("copy bandwidth: best {:.1f} GB/s, median {:.1f} GB/s ({:.0f}% of datasheet; "
             "device-to-device cudaMemcpyAsync of {} MiB, counted as read + write = 2 x {} MiB; "
             "{} reps)\n",
             r.copy_gbps_best, r.copy_gbps_median, 100 * ratio, r.copy_buffer_bytes >> 20,
             r.copy_buffer_bytes >> 20, r.repetitions);
  fmt::print("read bandwidth: best {:.1f} GB/s, median {:.1f} GB/s (device read test of {} MiB; "
             "{} reps)\n",
             r.read_gbps_best, r.read_gbps_median, r.copy_buffer_bytes >> 20, r.repetitions);
  print_probe("cuda");
  for (const DType t : {DType::kFp32, DType::kBf16, DType::kFp16}) {
    const CudaGemmPeak& g = r.gemm(t);
    fmt::print("cuBLAS GEMM {} {}^3: best {:.2f} TFLOP/s, median {:.2f} TFLOP/s\n",
               dtype_name(t), r.gemm_n, g.tflops_best, g.tflops_median);
  }
  fmt::print("cached in {} (run uses the best read bandwidth as MBU's reference, each case "
             "divides by its own probe, and the best GEMM of its dtype as the MFU peak)\n",
             roofline_cache_path());
  return 0;
}
#endif

int run_roofline(const std::string& backend_name, int threads, const std::string& model,
                 bool dispatch_only) {
  if (dispatch_only) return run_cpu_roofline(threads, model, true);
  // auto: cuda when a device is present, else cpu with a notice; cuda without a device (or
  // without CUDA compiled in): BadInput, exit 2.
  const BackendChoice choice = choose_backend(backend_name);
  if (!choice.notice.empty()) fmt::print(stderr, "{}\n", choice.notice);
#if defined(LLMBENCH_HAVE_CUDA)
  if (choice.name == "cuda") return run_cuda_roofline();
#endif
  return run_cpu_roofline(threads, model, false);
}

}  // namespace

void add_roofline_command(CLI::App& root, CommandContext& ctx) {
  auto backend = std::make_shared<std::string>("auto");
  auto threads = std::make_shared<int>(0);
  CLI::App* cmd = root.add_subcommand("roofline", "Measure peak bandwidth and FLOP/s");
  auto model = std::make_shared<std::string>("tinyllama-1.1b");
  auto dispatch_only = std::make_shared<bool>(false);
  cmd->footer("Examples:\n  llmbench roofline\n  llmbench roofline --threads 1\n  llmbench roofline --backend cuda\n"
              "  llmbench roofline --dispatch-only --model small");
  cmd->add_option("--backend", *backend, "auto|cpu|cuda")->capture_default_str();
  cmd->add_option("--threads", *threads, "CPU threads; 0 = all")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--model", *model,
                  "PRESET|HF_DIR whose decode shapes the CPU kernel paths are timed at")
      ->capture_default_str();
  cmd->add_flag("--dispatch-only", *dispatch_only,
                "measure only the CPU decode kernel paths, not the peaks");
  cmd->callback([backend, threads, model, dispatch_only, &ctx] {
    ctx.exit_code = run_roofline(*backend, *threads > 0 ? *threads : omp_get_max_threads(),
                                 *model, *dispatch_only);
  });
}

}  // namespace llmbench
