// A serving session's energy (see serve_energy.h).
#include "tools/serve/serve_energy.h"

#include <fmt/core.h>

#include "tools/store/sqlite_db.h"

namespace llmbench {

std::string serve_energy_check(const ServeEnergy& e) {
  if (!e.metered) return e.note;
  std::vector<std::string> findings =
      phase_energy_findings("serve", e.spans.busy, e.calibration, e.power_limit_w);
  if (e.spans.failed_spans > 0)
    findings.push_back(fmt::format("{} span(s) lost to a failed counter read", e.spans.failed_spans));
  std::string out;
  for (const std::string& f : findings) out += (out.empty() ? "" : "; ") + f;
  return out.empty() ? "ok" : out;
}

std::string serve_energy_line(const ServeEnergy& e) {
  if (!e.metered) return "serve: energy: " + e.note;
  const PhaseEnergy& b = e.spans.busy;
  if (b.spans == 0) return "serve: energy: no engine step was metered";
  auto opt = [](const std::optional<double>& v, const char* fmt_str) {
    return v ? fmt::format(fmt::runtime(fmt_str), *v) : std::string("n/a");
  };
  return fmt::format("serve: energy: {:.3f} J over {:.3f} s busy, {} output tokens: {} J per "
                     "output token, {} W (counter update {} ms, idle {} W, limit {} W); check: {}",
                     b.joules, double(b.ns) / 1e9, b.tokens, opt(b.j_per_token(), "{:.4f}"),
                     opt(b.watts(), "{:.1f}"), opt(e.calibration.update_ms, "{:.1f}"),
                     opt(e.calibration.idle_w, "{:.1f}"), opt(e.power_limit_w, "{:.1f}"),
                     serve_energy_check(e));
}

void store_serve_energy(const std::string& db_path, std::int64_t session_id,
                        const ServeEnergy& e) {
  Db db(db_path, Db::Mode::kReadWrite);
  const PhaseEnergy& b = e.spans.busy;
  const bool any = e.metered && b.spans > 0;
  auto q = db.prepare(
      "UPDATE serve_session SET energy_j = ?, energy_ms = ?, energy_output_tokens = ?,"
      " j_per_output_token = ?, energy_w = ?, energy_update_ms = ?, idle_w = ?, power_limit_w = ?,"
      " energy_note = ? WHERE id = ?");
  q.bind(1, any ? std::optional<double>(b.joules) : std::nullopt)
      .bind(2, any ? std::optional<double>(double(b.ns) / 1e6) : std::nullopt);
  if (any) q.bind(3, b.tokens); else q.bind_null(3);
  q.bind(4, any ? b.j_per_token() : std::nullopt)
      .bind(5, any ? b.watts() : std::nullopt)
      .bind(6, e.calibration.update_ms)
      .bind(7, e.calibration.idle_w)
      .bind(8, e.metered ? e.power_limit_w : std::nullopt)
      .bind(9, serve_energy_check(e))
      .bind(10, session_id)
      .run();
}

}  // namespace llmbench
