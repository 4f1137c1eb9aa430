// Reads an Nsight Systems SQLite export (`nsys export --type sqlite`) into an ImportedTrace:
// NVTX_EVENTS (push/pop and start/end ranges, marks; text or textId through StringIds; domains,
// categories, colours, payloads), CUPTI_ACTIVITY_KIND_KERNEL / _MEMCPY / _MEMSET on one track
// per GPU stream, CUPTI_ACTIVITY_KIND_RUNTIME / _DRIVER on their host threads (names without
// the _vNNNN suffix), and a flow from each API call to the GPU activity with its correlation id
// in the same process. Tables that are absent are skipped; columns an export version lacks
// read as NULL. docs/import.md has the mapping. Not here: writing (trace_writer.h).
#pragma once
#include <string>

#include "tools/store/trace_nesting.h"
#include "tools/trace_io/nsys_encoding.h"

namespace llmbench {

// Opens `path` read-only. Throws BadInput naming the file when it is missing, not SQLite, or
// has none of the tables every nsys export has (StringIds, META_DATA_EXPORT /
// EXPORT_META_DATA). Rows it cannot use (ranges without an end, end before start) are counted
// in trace.skipped.
ReadTrace read_nsys_export(const std::string& path);

}  // namespace llmbench
