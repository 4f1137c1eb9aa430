// How a load run's levels were placed, in the store (see sweep_store.h).
#include "tools/load/sweep_store.h"

#include <cmath>

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

void store_run_stream(Db& db, std::int64_t run_id, bool stream) {
  db.prepare("UPDATE load_run SET stream = ? WHERE id = ?").bind(1, int(stream)).bind(2, run_id).run();
}

void store_level_capacity(Db& db, const LevelResult& r) {
  auto q = db.prepare("UPDATE load_level SET over_capacity = ?, saturation_ns = ?, stopped_early = ?,"
                      " steady_start_ns = ?, steady_end_ns = ? WHERE id = ?");
  if (r.over_capacity) q.bind(1, int(*r.over_capacity)); else q.bind_null(1);
  if (r.saturation_s) q.bind(2, std::int64_t(std::llround(*r.saturation_s * 1e9))); else q.bind_null(2);
  q.bind(3, int(r.stopped_early));
  if (r.steady) q.bind(4, r.steady->start_ns).bind(5, r.steady->end_ns);
  else q.bind_null(4).bind_null(5);
  q.bind(6, r.level_id).run();
}

}  // namespace llmbench
