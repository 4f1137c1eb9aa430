// Which runs a report side names: `DB`, `DB:N`, `DB:run:N` or `DB:load:N`, resolved against the
// database's engine runs (`run`, by run group) and serving runs (`load_run`). The rule
// (docs/report.md, "Choosing runs"): `run:N` is run group N, `load:N` is load run N, and a bare
// `N` is whichever of the two exists; when both exist it is ambiguous and refused. Not here:
// reading the runs (the sections do).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "tools/store/sqlite_db.h"

namespace llmbench::report {

enum class RunKind { kAny, kEngine, kLoad };

struct ReportSide {
  std::string arg;   // as given, for messages
  std::string path;  // the database file
  RunKind kind = RunKind::kAny;
  std::optional<std::int64_t> id;  // nullopt: the default runs (see resolve_side)
};

// Splits "x.db", "x.db:3", "x.db:run:3", "x.db:load:3". A path that exists as written is the
// whole path (a file name holding ':' still works).
ReportSide parse_report_side(const std::string& arg);

// Settles a bare id: kEngine when only run group N exists, kLoad when only load run N does.
// Throws BadInput (one line naming the argument) when neither exists, when both do (saying to
// write DB:run:N or DB:load:N), or when an explicit kind's run is absent. A side without an id
// keeps kAny.
void resolve_side(Db& db, ReportSide& side, const std::string& group_sql);

// The latest load run (MAX(id)); nullopt when the database has none.
std::optional<std::int64_t> latest_load_run(Db& db);
// Whether the database holds a load run / an engine run (run group) with this id.
bool has_load_run(Db& db, std::int64_t id);
bool has_engine_run(Db& db, std::int64_t id, const std::string& group_sql);

}  // namespace llmbench::report
