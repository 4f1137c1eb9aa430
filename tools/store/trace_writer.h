// Writes an ImportedTrace into the store's trace tables (process, thread, track, event, arg,
// flow, counter) under one new `import` row, in one transaction: on any error nothing of the
// import remains. New ids follow the database's existing ones, so imports sit beside runs and
// beside each other. Not here: reading sources (import_*.h) or the CLI (cmd_import.cpp).
#pragma once
#include <cstdint>
#include <string>

#include "tools/store/sqlite_db.h"
#include "tools/store/trace_model.h"
#include "tools/store/trace_nesting.h"

namespace llmbench {

struct ImportSource {
  std::string format;        // 'nsys' | 'chrome'
  std::string path;          // as given; stored absolute
  std::int64_t bytes = 0;    // size of the file
  std::string command_line;
};

struct ImportCounts {
  std::int64_t import_id = 0;
  std::int64_t processes = 0, threads = 0, tracks = 0, events = 0, flows = 0, counters = 0;
};

// `index` must have been built over `trace` (it holds the nesting and the write order).
// Tracks without slices or counters are not written.
ImportCounts write_import(Db& db, const ImportedTrace& trace, const TrackIndex& index,
                          const ImportSource& source);

// "2 'E without a matching B', 1 'negative duration'" ("" when the map is empty).
std::string describe_counts(const std::map<std::string, std::int64_t>& counts);

}  // namespace llmbench
