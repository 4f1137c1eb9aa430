// Server metrics into counter tracks (see server_metrics_store.h).
#include "tools/load/server_metrics_store.h"

#include <vector>

namespace llmbench {

void store_server_metrics(Db& db, std::int64_t level_id, const std::string& url,
                          const ScrapeLog& log, std::chrono::steady_clock::time_point origin) {
  transaction(db, [&] {
    auto track = db.prepare(
        "INSERT INTO track (name, type, load_level_id, metric_type) VALUES (?, 'counter', ?, ?)");
    std::vector<std::int64_t> track_id(log.series.size(), 0);
    for (std::size_t i = 0; i < log.series.size(); ++i) {
      track.bind(1, log.series[i]).bind(2, level_id);
      if (log.type[i].empty()) track.bind_null(3); else track.bind(3, log.type[i]);
      track.run();
      track_id[i] = db.last_insert_id();
    }
    auto counter = db.prepare("INSERT INTO counter (ts, track_id, value) VALUES (?, ?, ?)");
    for (const ScrapeLog::Sample& s : log.samples) {
      // SQLite stores a NaN as NULL, which counter.value refuses: a NaN sample is left out.
      if (s.value != s.value) continue;
      counter.bind(1, std::int64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                       s.at - origin).count()))
          .bind(2, track_id[std::size_t(s.series)]).bind(3, s.value);
      counter.run();
    }
    auto lv = db.prepare(
        "UPDATE load_level SET metrics_url = ?, metrics_scrapes = ?, metrics_failed_scrapes = ?,"
        " metrics_rejected_lines = ?, metrics_first_problem = ? WHERE id = ?");
    lv.bind(1, url).bind(2, log.scrapes).bind(3, log.failed_scrapes).bind(4, log.rejected_lines);
    if (log.first_problem.empty()) lv.bind_null(5); else lv.bind(5, log.first_problem);
    lv.bind(6, level_id);
    lv.run();
  });
}

}  // namespace llmbench
