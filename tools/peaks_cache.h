// Where `run` gets its MBU/MFU denominators: --peak-* flags, else the roofline cache written
// by `llmbench roofline`, else a measurement made now (and cached). The cache is a JSON file,
// $LLMBENCH_CACHE_DIR/roofline.json (default $XDG_CACHE_HOME/llmbench or ~/.cache/llmbench),
// keyed by backend, CPU model and thread count, since bandwidth depends on all three.
#pragma once
#include <optional>
#include <string>

#include "engine/metrics.h"
#include "engine/roofline.h"

namespace llmbench {

std::string roofline_cache_path();
std::string roofline_cache_key(const std::string& backend, int threads);

// Measures the CPU roofline and stores it in the cache under `key`.
RooflineResult measure_and_cache_roofline(const std::string& key);

// The peaks for a run. Overrides win; missing values come from the cache, measured on first
// use (a notice goes to stderr unless quiet).
Peaks resolve_peaks(const std::string& backend, int threads, std::optional<double> bw_gbps,
                    std::optional<double> tflops, bool quiet);

}  // namespace llmbench
