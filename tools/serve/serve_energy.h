// The energy of a serving session (`serve --backend cuda` with NVML; docs/metrics.md, "Energy
// per phase"): the engine's busy step spans (EngineLoop::energy) with the counter's update, the
// idle power measured at start-up and the power limit; printed at shutdown and stored on the
// session's serve_session row. Not here: reading the counter (engine/bench/energy.h, nvml.h).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "engine/bench/energy.h"
#include "tools/serve/engine_loop.h"

namespace llmbench {

struct ServeEnergy {
  bool metered = false;  // a meter was read (else `note` says why not)
  std::string note;      // why there is no energy ("NVML unavailable: ...")
  EnergyCalibration calibration;
  std::optional<double> power_limit_w;
  EngineLoop::Energy spans;  // the busy spans' totals
};

// "ok", the check's findings (phase_energy_findings over the busy spans, plus lost spans), or the
// note when nothing was metered.
std::string serve_energy_check(const ServeEnergy& e);

// The shutdown line: "serve: energy: 41.203 J over 0.153 s busy, 1024 output tokens: 0.0402 J per
// output token, 269.3 W (counter update 10.0 ms, idle 70.1 W, limit 700.0 W); check: ok", or
// "serve: energy: NVML unavailable: ...".
std::string serve_energy_line(const ServeEnergy& e);

// Writes the energy columns of serve_session `session_id` in `db_path` (schema 15; NULL columns
// and energy_note when nothing was metered).
void store_serve_energy(const std::string& db_path, std::int64_t session_id, const ServeEnergy& e);

}  // namespace llmbench
