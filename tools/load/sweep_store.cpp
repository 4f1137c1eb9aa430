// How a load run's levels were placed, in the store (see sweep_store.h).
#include "tools/load/sweep_store.h"

namespace llmbench {

void store_run_sweep(Db& db, std::int64_t run_id, const std::string& sweep,
                     std::optional<double> goodput_target, const std::string& metrics_url) {
  auto q = db.prepare(
      "UPDATE load_run SET sweep = ?, goodput_target = ?, server_metrics_url = ? WHERE id = ?");
  q.bind(1, sweep).bind(2, goodput_target);
  if (metrics_url.empty()) q.bind_null(3); else q.bind(3, metrics_url);
  q.bind(4, run_id).run();
}

void store_slo_frontier(Db& db, std::int64_t run_id, std::optional<double> rate) {
  db.prepare("UPDATE load_run SET slo_frontier_rate = ? WHERE id = ?").bind(1, rate).bind(2, run_id).run();
}

void store_level_sweep(Db& db, const LevelResult& r, const std::string& role) {
  auto q = db.prepare("UPDATE load_level SET sweep_role = ?, good_fraction = ? WHERE id = ?");
  if (role.empty()) q.bind_null(1); else q.bind(1, role);
  q.bind(2, r.summary.good_fraction).bind(3, r.level_id).run();
}

}  // namespace llmbench
