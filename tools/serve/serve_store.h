// The serving tables of the SQLite store (docs/schema.md, "Serving tables"): one serve_session
// row per `llmbench serve --db` run, its engine steps (serve_step: composition and timing) and
// its finished requests (serve_request: arrival, first scheduled, first token, finished).
// Written once, when the server stops, in one transaction; tables are created if missing, so
// any llmbench database (or a new file) can take them. Kept apart from tools/store (the
// benchmark result schema) on purpose: nothing there changes.
#pragma once
#include <string>
#include <vector>

#include "engine/serving/scheduler.h"
#include "tools/serve/engine_loop.h"

namespace llmbench {

// The CREATE statements (IF NOT EXISTS), also what docs/schema.md shows.
extern const char* const kServeSchemaSql;

struct ServeSessionInfo {
  std::string command_line;
  std::string model, dtype, backend, device;
  std::int64_t started_unix_ns = 0;  // wall clock at the engine's origin
  SchedulerOptions scheduler;        // as resolved (pool size, limits)
  int kv_blocks = 0;
};

// Appends one session with its steps and requests to the database at `path`; returns the
// session id. Throws Error on any SQLite failure (nothing is half-written: one transaction).
std::int64_t write_serve_session(const std::string& path, const ServeSessionInfo& info,
                                 const std::vector<StepStats>& steps,
                                 const std::vector<ServedRequest>& requests);

}  // namespace llmbench
