// Reads Chrome trace-event JSON (plain or gzip) as the PyTorch profiler (Kineto) and other
// tools write it into an ImportedTrace: X, B/E, i/I, C, M and s/t/f events, flow v2 bind_id,
// both the object form {"traceEvents": [...], ...} and the bare-array form [...].
// Timestamps are microseconds (displayTimeUnit only affects display, as in trace processor and
// chrome://tracing) and become integer ns the way trace processor converts them: integers
// times 1000, fractional values rounded to the nearest ns. docs/import.md has the mapping.
// Not here: writing to the store (trace_writer.h).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "tools/store/trace_nesting.h"
#include "tools/trace_io/chrome_values.h"

namespace llmbench {

// Throws BadInput naming the file for unreadable files, corrupt gzip, invalid or truncated
// JSON, and JSON that is neither an event array nor an object with a traceEvents array.
// Events it cannot use are counted in trace.skipped, never fatal.
// A gzip file may inflate to at most `max_decompressed_bytes` (file_io.h).
ReadTrace read_chrome_trace(const std::string& path,
                            std::size_t max_decompressed_bytes = std::size_t(1) << 30);

}  // namespace llmbench
