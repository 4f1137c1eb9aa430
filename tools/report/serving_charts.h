// The serving charts one load run's section and the two-run compare view both draw: latency
// against load level or against achieved throughput, and TTFT against turn; and the SLO search. Each takes one or
// more runs' levels, so the compare view puts both runs' curves on one chart. Not here: reading
// (serving_reader.h), the timeline (report_serving_timeline.cpp).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "tools/report/report_section.h"
#include "tools/report/serving_reader.h"

namespace llmbench::report {

// The levels of one run and what its series are prefixed with ("" for a run's own section,
// "base: " / "cand: " in the compare view).
struct RunLevels {
  std::string prefix;
  const std::vector<ServingLevel>* levels = nullptr;
};

enum class ServingX { kLevel, kThroughput };

// Metric `m` ("ttft", "tpot", "itl"): per series the median (solid) and p99 (dashed) against the
// load level (concurrency or rate) or against the output tokens/s the level achieved (one point
// per level, in load order, so a sweep reads as a curve); the table adds the p90 (and, against
// throughput, the request rate achieved and the failed requests). nullopt when no level has it.
std::optional<json> latency_curves(const std::string& id, const std::vector<RunLevels>& runs,
                                   const std::string& m, ServingX x);

// TTFT median (solid) and p90 (dashed) against the turn index, one series per level that had
// sessions. nullopt when every list is empty.
struct RunTurns {
  std::string prefix;
  std::vector<TurnPoint> turns;
};
std::optional<json> turn_chart(const std::string& id, const std::vector<RunTurns>& runs);

// The SLO search of a `--sweep slo` run (report_serving_slo.cpp): each probe's good_fraction
// against the rate it offered, the goodput target and the frontier as lines; its table lists
// every level of the search (the throughput level's rate as "inf"). nullopt when the run is no
// SLO search (or the database predates schema 9) or no probe has a finite rate.
std::optional<json> slo_search_chart(Db& db, std::int64_t run, const std::string& id);

// The series names in their first-seen order.
std::vector<std::string> series_order(const std::vector<ServingLevel>& levels);

}  // namespace llmbench::report
