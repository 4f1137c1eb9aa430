// Writes one llmbench run's trace as Chrome trace-event JSON that Perfetto UI and
// chrome://tracing open: per traced case, its host ranges (prefill, decode_step, layer) on one
// thread and its ops on another, with a flow from each op's enclosing range to the op; X events
// in microseconds with three decimals (exact ns), M events naming the process and threads.
// Not here: the CLI (cmd_export.cpp) or importing (import_chrome.h).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "tools/store/sqlite_db.h"

namespace llmbench {

struct ChromeExport {
  std::string json;  // the whole document
  std::int64_t run_id = 0, tracks = 0, events = 0, flows = 0;
};

// `run_id`: nullopt for the latest run that has a trace. Throws BadInput naming `db_label`
// when the run does not exist or has no trace.
ChromeExport export_chrome_trace(Db& db, const std::string& db_label,
                                 std::optional<std::int64_t> run_id);

// Integer ns as the decimal microseconds Chrome JSON expects: 1234567 -> "1234.567".
std::string ns_to_us_text(std::int64_t ns);

}  // namespace llmbench
