// Storing what --server-metrics scraped during a level (docs/schema.md, "Server metrics"): one
// counter track per series (track.type 'counter', track.name the series with its labels,
// track.load_level_id the level), one `counter` row per sample (ts in ns since the level's
// origin, as load_request's times), and the level's scrape counts on its load_level row; all in
// one transaction. Perfetto's counter / counter_track shape, so trace-processor style SQL reads it.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

#include "tools/load/metrics_scrape.h"
#include "tools/store/sqlite_db.h"

namespace llmbench {

void store_server_metrics(Db& db, std::int64_t level_id, const std::string& url,
                          const ScrapeLog& log, std::chrono::steady_clock::time_point origin);

}  // namespace llmbench
