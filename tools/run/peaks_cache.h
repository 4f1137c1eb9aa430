// Where `run` gets its MBU/MFU denominators: --peak-* flags, else the roofline cache written
// by `llmbench roofline`, else a measurement made now (and cached). The cache is a JSON file,
// $LLMBENCH_CACHE_DIR/roofline.json (default $XDG_CACHE_HOME/llmbench or ~/.cache/llmbench).
// CPU entries are keyed by backend, CPU model and thread count, since bandwidth depends on all
// three; CUDA entries by GPU name ("cuda|NVIDIA H100 80GB HBM3").
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "kernels/common/dtype.h"
#include "engine/bench/metrics.h"
#include "engine/bench/roofline.h"
#if defined(LLMBENCH_HAVE_CUDA)
#include "engine/bench/cuda_roofline.h"
#endif

namespace llmbench {

std::string roofline_cache_path();

// The whole cache as a JSON object ({} when missing or corrupt: re-measured, never fatal), and
// cache[key] = entry written atomically (an unwritable cache only costs a re-measurement).
// For the other tables kept beside the peaks (tools/run/dispatch_cache.h).
nlohmann::json read_roofline_cache();
void write_roofline_cache_entry(const std::string& key, nlohmann::json entry);
std::string roofline_cache_key(const std::string& backend, int threads);
// "cuda|<gpu name>".
std::string cuda_roofline_cache_key(const std::string& gpu_name);

// Measures the CPU roofline and stores it in the cache under `key`, with the machine's load at
// the start (machine_load.h): an entry measured on a busy machine says so, and later runs warn
// or re-measure. With `show_progress`, one stderr line per part (engine/bench/roofline.h) and a
// warning when the machine is busy.
RooflineResult measure_and_cache_roofline(const std::string& key, bool show_progress = false);

// A run whose compute probe beat the cached GEMM peak of `dtype` (compute_peak_stale): raises
// that cache entry's peak to `tflops` (a peak is the best rate this code reached), so the next
// run divides by it. Returns the cache path when an entry was raised, "" when there was none.
std::string raise_cached_gemm_peak(const std::string& backend, int threads, DType dtype,
                                   double tflops);

#if defined(LLMBENCH_HAVE_CUDA)
// Measures CUDA device `device` (engine/bench/cuda_roofline.h) and stores it in the cache under
// cuda_roofline_cache_key(its name).
CudaRooflineResult measure_and_cache_cuda_roofline(int device);
#endif

// The peaks for a run. Overrides win; missing values come from the cache, measured on first
// use (a notice goes to stderr unless quiet). cpu: best read bandwidth and the GEMM FLOP/s (the
// bf16 GEMM for bf16, else sgemm) of
// `threads` threads. cuda (device 0): best device-to-device copy bandwidth and the best cuBLAS
// GEMM FLOP/s for inputs of `dtype`. With both overrides given nothing is measured or read, and
// the cpu path never touches CUDA.
Peaks resolve_peaks(const std::string& backend, int threads, std::optional<double> bw_gbps,
                    std::optional<double> tflops, bool quiet, DType dtype = DType::kFp32);

}  // namespace llmbench
