// Roofline cache (see peaks_cache.h).
#include "tools/run/peaks_cache.h"

#include <fmt/core.h>

#include <chrono>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "engine/model/cpu_backend.h"
#include "engine/checkpoint/atomic_file.h"
#include "engine/checkpoint/json_input.h"
#include "kernels/common/error.h"
#include "tools/run/machine_load.h"
#include "tools/store/run_info.h"

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

std::string cuda_roofline_cache_key(const std::string& gpu_name) { return "cuda|" + gpu_name; }

json read_roofline_cache() {
  std::ifstream in(roofline_cache_path());
  if (!in) return json::object();
  // A corrupt (or hostile: nested, huge) cache is re-measured, not fatal.
  const json j = parse_json(std::string(std::istreambuf_iterator<char>(in), {})).value;
  return j.is_object() ? j : json::object();
}

void write_roofline_cache_entry(const std::string& key, json entry) {
  json cache = read_roofline_cache();
  cache[key] = std::move(entry);
  const fs::path path = roofline_cache_path();
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  try {
    write_file_atomically(path.string(), cache.dump(2) + "\n", "roofline cache");
  } catch (const BadInput&) {
  }
}

namespace {

json load_cache() { return read_roofline_cache(); }

// cache[key] = entry, written to a temporary file and renamed over the cache, so a reader never
// sees half a file.
void store_cache_entry(const std::string& key, json entry) {
  write_roofline_cache_entry(key, std::move(entry));
}

// The cached entry `key` when it is an object holding a number under every field; else null
// (missing, from an older llmbench, or hand-edited: re-measured).
json cached_entry(const std::string& key, std::initializer_list<const char*> fields) {
  json cache = load_cache();
  if (!cache.contains(key) || !cache[key].is_object()) return nullptr;
  for (const char* f : fields)
    if (!cache[key].contains(f) || !cache[key][f].is_number()) return nullptr;
  return cache[key];
}

// What the roofline (cached or measured now) gives a run, before the override flags.
struct MeasuredPeaks {
  double bandwidth_gbps = 0, tflops = 0;
  std::map<DType, double> gemm_tflops;  // every dtype's GEMM peak the roofline measured
  std::string origin;  // the run's peak_source
};

constexpr DType kCpuGemmDtypes[] = {DType::kFp32, DType::kBf16, DType::kFp16, DType::kInt8,
                                    DType::kInt4};
constexpr DType kCudaGemmDtypes[] = {DType::kFp32, DType::kBf16, DType::kFp16};

// The roofline cache field of a CPU run's FLOP/s peak: the best rate the engine's own GEMM for
// the dtype reached (engine/bench/roofline.h): vdpbf16ps for bf16 runs at twice the fp32 FMA rate,
// vpdpbusd for int8/int4 four byte products per lane, and the AVX-512 streaming kernels beat
// OpenBLAS sgemm at prompt-sized row counts, so one sgemm figure would put MFU above 1.
const char* cpu_gemm_field(DType dtype) {
  switch (dtype) {
    case DType::kFp32: return "fp32_gemm_tflops_best";
    case DType::kFp16: return "fp16_gemm_tflops_best";
    case DType::kBf16: return "bf16_gemm_tflops_best";
    case DType::kInt8: return "int8_gemm_tflops_best";
    case DType::kInt4: return "int4_gemm_tflops_best";
  }
  return "fp32_gemm_tflops_best";
}

double cpu_gemm_tflops(const RooflineResult& r, DType dtype) {
  switch (dtype) {
    case DType::kFp32: return r.fp32_gemm_tflops_best;
    case DType::kFp16: return r.fp16_gemm_tflops_best;
    case DType::kBf16: return r.bf16_gemm_tflops_best;
    case DType::kInt8: return r.int8_gemm_tflops_best;
    case DType::kInt4: return r.int4_gemm_tflops_best;
  }
  return r.fp32_gemm_tflops_best;
}

MeasuredPeaks cpu_peaks(int threads, bool quiet, DType dtype) {
  const std::string key = roofline_cache_key("cpu", threads);
  const char* gemm_field = cpu_gemm_field(dtype);
  MeasuredPeaks m;
  json e = cached_entry(key, {"read_gbps_best", "fp32_gemm_tflops_best", "bf16_gemm_tflops_best",
                              "fp16_gemm_tflops_best", "int8_gemm_tflops_best",
                              "int4_gemm_tflops_best"});
  // An entry measured on a busy machine is never reused silently: measured again when the
  // machine is quiet now, else used with a warning (each case's compute and read probes still
  // keep MFU and MBU at or below what the hardware reached in that minute).
  std::string busy_note;
  if (!e.is_null() && e.value("busy", false)) {
    const std::string then = e.value("load", std::string("?"));
    const MachineLoad now = current_machine_load();
    if (!now.busy()) {
      if (!quiet)
        fmt::print(stderr, "the cached roofline for {} was measured on a busy machine ({}); the "
                   "machine is quiet now ({}): measuring again\n", key, then, now.describe());
      e = nullptr;
    } else {
      busy_note = "; measured on a busy machine (" + then + ")";
      fmt::print(stderr, "warning: the cached roofline for {} was measured on a busy machine "
                 "({}) and the machine is busy now too ({}): its peaks may be low; each case's "
                 "probes guard MFU and MBU; run `llmbench roofline` on a quiet machine\n",
                 key, then, now.describe());
    }
  }
  if (!e.is_null()) {
    m.bandwidth_gbps = e["read_gbps_best"].get<double>();
    m.tflops = e[gemm_field].get<double>();
    for (DType d : kCpuGemmDtypes) m.gemm_tflops[d] = e[cpu_gemm_field(d)].get<double>();
    m.origin = "measured by llmbench roofline on " + e.value("measured_at", "?") + " (cache " +
               roofline_cache_path() + busy_note + ")";
    return m;
  }
  if (!quiet)
    fmt::print(stderr,
               "measuring the roofline for {} (first run at this thread count: reads of a 1 GiB "
               "buffer, sgemm 2048^3 and each dtype's GEMM, progress below; cached for later runs, "
               "`llmbench roofline` re-measures)\n",
               key);
  const auto t0 = std::chrono::steady_clock::now();
  const RooflineResult r = measure_and_cache_roofline(key, !quiet);
  if (!quiet)
    fmt::print(stderr, "roofline measured in {:.1f} s: {:.1f} GB/s read, {:.3f} TFLOP/s {} GEMM\n",
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
               r.read_gbps_best, cpu_gemm_tflops(r, dtype), dtype_name(dtype));
  m.bandwidth_gbps = r.read_gbps_best;
  m.tflops = cpu_gemm_tflops(r, dtype);
  for (DType d : kCpuGemmDtypes) m.gemm_tflops[d] = cpu_gemm_tflops(r, d);
  m.origin = "measured now by the roofline (cached in " + roofline_cache_path() + ")";
  return m;
}

#if defined(LLMBENCH_HAVE_CUDA)

json cuda_entry(const CudaRooflineResult& r) {
  const CudaDeviceInfo& d = r.device;
  return {{"measured_at", utc_now_iso8601()},
          {"gpu", d.name},
          {"device_index", r.device_index},
          {"sm_count", d.sm_count},
          {"sm_clock_mhz", d.sm_clock_mhz},
          {"memory_clock_mhz", d.memory_clock_mhz},
          {"memory_bus_bits", d.memory_bus_bits},
          {"memory_gib", d.memory_gib},
          {"driver_version", d.driver_version},
          {"runtime_version", d.runtime_version},
          {"datasheet_bandwidth_gbps", d.datasheet_bandwidth_gbps},
          // copy_gbps_*: (read + write) = 2 x copy_buffer_bytes per cudaMemcpyAsync
          {"copy_gbps_best", r.copy_gbps_best},
          {"copy_gbps_median", r.copy_gbps_median},
          {"copy_buffer_bytes", r.copy_buffer_bytes},
          // read_gbps_*: copy_buffer_bytes per device read test (MBU's reference denominator)
          {"read_gbps_best", r.read_gbps_best},
          {"read_gbps_median", r.read_gbps_median},
          {"gemm_n", r.gemm_n},
          {"gemm_fp32_tflops_best", r.gemm_fp32.tflops_best},
          {"gemm_fp32_tflops_median", r.gemm_fp32.tflops_median},
          {"gemm_bf16_tflops_best", r.gemm_bf16.tflops_best},
          {"gemm_bf16_tflops_median", r.gemm_bf16.tflops_median},
          {"gemm_fp16_tflops_best", r.gemm_fp16.tflops_best},
          {"gemm_fp16_tflops_median", r.gemm_fp16.tflops_median},
          {"repetitions", r.repetitions}};
}

// Device 0, the device CudaBackend runs on.
MeasuredPeaks cuda_peaks(DType dtype, bool quiet) {
  if (cuda_device_count() == 0) throw BadInput("--backend cuda: no CUDA device found");
  const CudaDeviceInfo info = query_cuda_device(0);
  const std::string key = cuda_roofline_cache_key(info.name);
  const std::string gemm_field = "gemm_" + std::string(dtype_name(dtype)) + "_tflops_best";
  json e = cached_entry(key, {"copy_gbps_best", "read_gbps_best", "gemm_n", "repetitions",
                              "gemm_fp32_tflops_best",
                              "gemm_bf16_tflops_best", "gemm_fp16_tflops_best"});
  std::string when;
  if (!e.is_null()) {
    when = "measured by llmbench roofline on " + e.value("measured_at", "?") + " (cache " +
           roofline_cache_path() + ")";
  } else {
    if (!quiet)
      fmt::print(stderr,
                 "measuring peaks for {} (first use; `llmbench roofline` re-measures)...\n", key);
    e = cuda_entry(measure_and_cache_cuda_roofline(0));
    when = "measured now by the roofline (cached in " + roofline_cache_path() + ")";
  }
  MeasuredPeaks m;
  m.bandwidth_gbps = e["read_gbps_best"].get<double>();
  m.tflops = e[gemm_field].get<double>();
  for (DType d : kCudaGemmDtypes)
    m.gemm_tflops[d] = e["gemm_" + std::string(dtype_name(d)) + "_tflops_best"].get<double>();
  // The datasheet figure is context for the reader, never the denominator.
  const double datasheet = info.datasheet_bandwidth_gbps;
  m.origin = fmt::format(
      "cuda roofline of {}: device read {:.1f} GB/s (best of {}; device-to-device copy {:.1f} "
      "GB/s read + write; datasheet {:.1f} GB/s), cuBLAS {} GEMM {}^3 {:.2f} TFLOP/s; {}",
      info.name, m.bandwidth_gbps, e["repetitions"].get<int>(),
      e["copy_gbps_best"].get<double>(), datasheet, dtype_name(dtype),
      e["gemm_n"].get<int>(), m.tflops, when);
  return m;
}

#endif  // LLMBENCH_HAVE_CUDA

}  // namespace

RooflineResult measure_and_cache_roofline(const std::string& key, bool show_progress) {
  const MachineLoad load = current_machine_load();
  if (show_progress && load.busy())
    fmt::print(stderr, "warning: the machine is busy ({}): the peaks measured now may be low, "
               "and the cache marks them so; run `llmbench roofline` again when it is quiet\n",
               load.describe());
  RooflineProgress progress;
  if (show_progress)
    progress = [](int part, const char* name) {
      fmt::print(stderr, "  roofline [{}/{}] {}\n", part + 1, kRooflineParts, name);
    };
  RooflineResult r = measure_cpu_roofline(std::int64_t(1) << 30, 2048, 15, progress);
  store_cache_entry(key, {{"measured_at", utc_now_iso8601()},
                          {"load", load.describe()},
                          {"load_avg_1m", load.load_avg_1m},
                          {"cpus", load.cpus},
                          {"other_llmbench", load.other_llmbench},
                          {"busy", load.busy()},
                          {"read_gbps_best", r.read_gbps_best},
                          {"read_gbps_median", r.read_gbps_median},
                          {"read_bytes", r.read_bytes},
                          {"sgemm_tflops_best", r.sgemm_tflops_best},
                          {"sgemm_tflops_median", r.sgemm_tflops_median},
                          {"sgemm_n", r.sgemm_n},
                          {"fp32_gemm_tflops_best", r.fp32_gemm_tflops_best},
                          {"fp32_gemm_tflops_median", r.fp32_gemm_tflops_median},
                          {"fp16_gemm_tflops_best", r.fp16_gemm_tflops_best},
                          {"fp16_gemm_tflops_median", r.fp16_gemm_tflops_median},
                          {"bf16_gemm_tflops_best", r.bf16_gemm_tflops_best},
                          {"bf16_gemm_tflops_median", r.bf16_gemm_tflops_median},
                          {"int8_gemm_tflops_best", r.int8_gemm_tflops_best},
                          {"int8_gemm_tflops_median", r.int8_gemm_tflops_median},
                          {"int4_gemm_tflops_best", r.int4_gemm_tflops_best},
                          {"int4_gemm_tflops_median", r.int4_gemm_tflops_median},
                          {"repetitions", r.repetitions}});
  return r;
}

std::string raise_cached_gemm_peak(const std::string& backend, int threads, DType dtype,
                                   double tflops) {
  std::string key, field;
  if (backend == "cpu") {
    key = roofline_cache_key("cpu", threads);
    field = cpu_gemm_field(dtype);
  } else if (backend == "cuda") {
#if defined(LLMBENCH_HAVE_CUDA)
    key = cuda_roofline_cache_key(query_cuda_device(0).name);
    field = "gemm_" + std::string(dtype_name(dtype)) + "_tflops_best";
#else
    return "";
#endif
  } else {
    return "";
  }
  json cache = load_cache();
  if (!cache.contains(key) || !cache[key].is_object() || !cache[key].contains(field) ||
      !cache[key][field].is_number() || cache[key][field].get<double>() >= tflops)
    return "";
  json entry = cache[key];
  entry[field] = tflops;
  entry["raised_by_probe_at"] = utc_now_iso8601();
  store_cache_entry(key, entry);
  return roofline_cache_path();
}

#if defined(LLMBENCH_HAVE_CUDA)
CudaRooflineResult measure_and_cache_cuda_roofline(int device) {
  CudaRooflineResult r = measure_cuda_roofline(device);
  store_cache_entry(cuda_roofline_cache_key(r.device.name), cuda_entry(r));
  return r;
}
#endif

Peaks resolve_peaks(const std::string& backend, int threads, std::optional<double> bw_gbps,
                    std::optional<double> tflops, bool quiet,
                    DType dtype) {
  Peaks p;
  p.bandwidth_given = bw_gbps.has_value();
  p.tflops_given = tflops.has_value();
  if (bw_gbps && tflops) {
    p.bandwidth_gbps = *bw_gbps;
    p.tflops = *tflops;
    for (DType d : kCpuGemmDtypes) p.gemm_tflops[d] = *tflops;
    p.source = "given by --peak-bw-gbps and --peak-tflops";
    return p;
  }
  MeasuredPeaks m;
  if (backend == "cpu") {
    m = cpu_peaks(threads, quiet, dtype);
  } else if (backend == "cuda") {
#if defined(LLMBENCH_HAVE_CUDA)
    m = cuda_peaks(dtype, quiet);
#else
    throw BadInput("--backend cuda: this llmbench was built without the CUDA backend");
#endif
  } else {
    throw BadInput("--backend " + backend + ": no roofline for this backend");
  }
  p.bandwidth_gbps = bw_gbps.value_or(m.bandwidth_gbps);
  p.tflops = tflops.value_or(m.tflops);
  p.gemm_tflops = m.gemm_tflops;
  if (tflops)
    for (auto& [d, t] : p.gemm_tflops) t = *tflops;
  p.source = m.origin;
  if (bw_gbps) p.source += "; bandwidth given by --peak-bw-gbps";
  if (tflops) p.source += "; FLOP/s given by --peak-tflops";
  return p;
}

}  // namespace llmbench
