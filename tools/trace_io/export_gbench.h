// `llmbench export gbench DB [--run N] [--metric LIST] -o FILE.json`: writes one run's
// per-repetition samples in Google Benchmark's JSON format, so Google Benchmark's own
// tools/compare.py (and anything else that reads that format) works on llmbench results.
// Each (case, metric) is one benchmark name, e.g. "small/fp32/cpu/b16/p128/n1/t2/ttft", with
// one "iteration" row per measured repetition (iterations 1, real_time = cpu_time = the
// sample in ms). Only time metrics (ttft, tpot, e2e) fit the format. The database is opened
// read-only (tools/store/run_reader.h).
#pragma once
#include <nlohmann/json.hpp>
#include <vector>

#include "tools/store/run_reader.h"

namespace llmbench {

// The benchmark name of one case's metric: the case label with '/' between its words.
std::string gbench_name(const CaseSamples& c, Metric m);

// The whole document: {"context": {...}, "benchmarks": [...]} for the ok cases of `run`.
// Cases that failed, and TPOT of cases without decode steps, have no rows.
nlohmann::ordered_json gbench_json(const LoadedRun& run, const std::vector<Metric>& metrics);

}  // namespace llmbench
