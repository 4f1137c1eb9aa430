// `llmbench load --sweep slo --goodput ttft:MS,tpot:MS`: the SLO frontier, the highest request
// rate at which the share of good requests (ok and within every limit) stays at or above
// --goodput-target (0.9). The method (docs/serving.md, "The SLO frontier"):
//   1. one level with every request at once (rate inf): the server's throughput X, req/s;
//   2. a level at rate X; if it meets the target, rates 2X, 4X, ... until one fails, else
//      X/2, X/4, ... until one meets it: a bracket lo (met) < hi (failed);
//   3. bisection of [lo, hi] until hi - lo <= --sweep-tolerance x hi (default 0.1).
// The frontier is lo, the highest measured rate that met the target; if goodput falls with
// rate, the true knee lies in (lo, hi], so lo is within the tolerance of it. Every level runs
// --num-requests requests; at most --sweep-max-levels levels (default 10) run, and a search
// cut short by that bound says so. Typical cost: 1 + 1 + 1-2 + 3 levels.
// Not here: running a level (load_session.h); this file decides which rates to run.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace llmbench {

struct SloSearchOptions {
  double target = 0.9;     // good requests / requests needed
  double tolerance = 0.1;  // stop when hi - lo <= tolerance x hi
  int max_levels = 10;     // levels run in all, the throughput level included
};

// One level of the search.
struct SloProbe {
  double rate = 0;                // requests/s offered (inf: all at once)
  std::string role;               // throughput | probe
  double good_fraction = 0;       // measured
  double request_throughput = 0;  // measured, ok requests/s
  bool met = false;               // good_fraction >= target
};

struct SloFrontier {
  std::vector<SloProbe> probes;       // in the order run
  std::optional<double> rate;         // the frontier (lo); nullopt when no rate met the target
  std::optional<double> failed_rate;  // hi: the lowest rate measured above it that failed
  bool converged = false;             // hi - lo <= tolerance x hi (or met at every rate)
  std::string note;                   // how the search ended, one line
};

// Runs the search; `measure(rate, role)` runs one level and returns (good fraction, request
// throughput), or nullopt when the sweep must stop (Ctrl-C, the server died).
using SloMeasure = std::function<std::optional<std::pair<double, double>>(double rate,
                                                                         const std::string& role)>;
SloFrontier search_slo_frontier(const SloSearchOptions& options, const SloMeasure& measure);

// "frontier 12.5 req/s (goodput >= 0.90 of requests at ttft:200,tpot:50); 13.9 req/s failed;
//  7 levels" — the line printed after the results; `unit` names what the rate counts
// ("req/s", or "sessions/s" for a multi-turn workload).
std::string frontier_text(const SloFrontier& f, double target, const std::string& slo,
                          const std::string& unit = "req/s");

}  // namespace llmbench
