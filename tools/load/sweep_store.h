// The load tables' columns of schema version 9 that say how a run's levels were placed
// (docs/schema.md): the run's sweep kind, goodput target, server-metrics URL and SLO frontier,
// and each level's role in the search and good fraction. Small UPDATEs next to load_store.h's
// INSERTs, so the two writers stay apart.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "tools/load/load_output.h"
#include "tools/store/sqlite_db.h"

namespace llmbench {

// `sweep`: list | slo; `goodput_target` only for slo; `metrics_url` "" when off.
void store_run_sweep(Db& db, std::int64_t run_id, const std::string& sweep,
                     std::optional<double> goodput_target, const std::string& metrics_url);
// The frontier rate (NULL when no rate met the target; inf stored as a REAL infinity).
void store_slo_frontier(Db& db, std::int64_t run_id, std::optional<double> rate);
// `role` "" for list levels (NULL).
void store_level_sweep(Db& db, const LevelResult& r, const std::string& role);
// Whether the run streamed (load_run.stream, schema version 13; 0 with --no-stream).
void store_run_stream(Db& db, std::int64_t run_id, bool stream);
// The saturation guard's verdict and the steady-state window (schema version 13).
void store_level_capacity(Db& db, const LevelResult& r);

}  // namespace llmbench
