// Where a CPU run gets its decode op classes' table (kernels/cpu/decode_dispatch.h): the
// roofline cache (peaks_cache.h's file) under "cpu-dispatch|<CPU model>|<CPU flags>|threads=N",
// one table per model shape (engine/bench/decode_dispatch_probe.h's signature), measured on
// first use and by `llmbench roofline`. A forced LLMBENCH_CPU_ISA skips the table (and the
// measurement). Entry shape:
//   {"<signature>": {"measured_at": ISO, "load": "...", "busy": bool, "rounds": 7,
//                    "seconds": 1.2, "classes": {"decode_fp32_m1": {"path": "avx2",
//                    "median_ms": {"avx2": 6.9, "portable": 8.0}, "samples": {"avx2": 7,
//                    "portable": 2}, "copies": 1, "passes_per_sample": 1}, ...}}}
// A table timed on a busy machine (machine_load.h) is timed again by the first run that finds
// the machine quiet; `llmbench roofline` always re-measures.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "engine/bench/decode_dispatch_probe.h"
#include "engine/model/config.h"
#include "kernels/cpu/decode_dispatch.h"

namespace llmbench {

// "cpu-dispatch|<cpu_model_name()>|<cpu::cpu_feature_flags()>|threads=N".
std::string dispatch_cache_key(int threads);

// The cache entry of one measurement, and the table it gives (nullopt for a malformed entry:
// a class missing or naming no known path).
nlohmann::json dispatch_entry(const DispatchMeasurement& m);
std::optional<cpu::DecodeTable> dispatch_table(const nlohmann::json& entry);

// Measures the table for `c`'s decode shapes with the current OpenMP threads and caches it
// under dispatch_cache_key(threads).
DispatchMeasurement measure_and_cache_dispatch(const ModelConfig& c, int threads);

// One line per class: "decode_fp32_m1    avx2      avx2 6.912 ms (7), portable 8.020 ms (2)"
// (the winner, then each candidate's median pass and its samples), for `llmbench roofline`.
std::string describe_dispatch(const DispatchMeasurement& m);

// What a CPU run does before its first case: forced -> nothing; else the cached table for
// `c`'s shapes (unless it was timed on a busy machine and this one is quiet), else (with
// may_measure) measured now and cached, else none (every class takes its widest path). Installs it (cpu::set_decode_table) and returns a line for stderr saying
// which paths the decode classes take and where that came from.
std::string install_cpu_dispatch(const ModelConfig& c, int threads, bool may_measure);

}  // namespace llmbench
