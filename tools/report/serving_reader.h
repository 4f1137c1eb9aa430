// What the report's serving sections read from one `llmbench load` run: its settings, its
// levels' latency percentiles and throughput, and TTFT per turn of multi-turn sessions. Every
// number is an SQL aggregate (the `median` / `percentile` functions `load_summary` uses, so the
// page equals the bundled queries). Databases written before schema 7 or 9 lack some columns:
// their defaults are read instead. Not here: the charts (report_serving*.cpp), the timeline's
// bounded reads (report_serving_timeline.cpp).
#pragma once
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tools/store/sqlite_db.h"

namespace llmbench::report {

// One load level of a run.
struct ServingLevel {
  std::int64_t id = 0;
  std::string name;    // load_level.level ("c4 in128 out128", "c2 jsonl"): matches levels of two runs
  std::string series;  // the curve it belongs to: sweep kind and lengths or dataset
  nlohmann::ordered_json x;  // concurrency or request rate; null: no position (inf rate, trace)
  std::string x_text;        // "4", "8", "inf", "trace"
  std::string mode;          // load_run.mode: concurrency | rate | trace
  // ttft/tpot/itl _p50/_p90/_p99 (ms), output_tok_s, request_s (null when absent); failed,
  // requests; capacity: "over" (the saturation guard fired), "ok", or null (not judged).
  std::map<std::string, nlohmann::ordered_json> v;
};

// The metrics of ServingLevel::v a latency chart reads, as "<m>_p50" etc.
inline constexpr const char* kServingLatencies[] = {"ttft", "tpot", "itl"};

// The run's levels, series by series, each in load order (concurrency or rate rising; an
// infinite rate last).
std::vector<ServingLevel> read_serving_levels(Db& db, std::int64_t load_run_id);

// A short name of the run: "load run 3 (tiny-cpu, concurrency, jsonl)".
std::string load_run_name(Db& db, std::int64_t load_run_id);

// The run's settings as [name, value] rows for the section's facts table.
nlohmann::ordered_json load_run_facts(Db& db, std::int64_t load_run_id);

// TTFT per turn of one level's sessions (ok requests).
struct TurnPoint {
  std::string level;
  int turn = 0;  // load_request.turn_index, 0-based
  std::int64_t requests = 0;
  nlohmann::ordered_json p50, p90;  // ms
};
// Empty when no level of the run had a second turn (no sessions).
std::vector<TurnPoint> read_turns(Db& db, std::int64_t load_run_id);

// `column` of `table` when the database has it, else `fallback` (an SQL expression).
std::string column_or(Db& db, const std::string& table, const std::string& column,
                      const std::string& fallback);

}  // namespace llmbench::report
