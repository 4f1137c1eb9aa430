// The SLO search of one `llmbench load --sweep slo` run as a chart: each probe's share of good
// requests against the rate it offered, the goodput target as a horizontal line and the frontier
// (load_run.slo_frontier_rate) as a vertical one, so where the search placed the knee reads off
// the page. Every number is a stored column (load_level.request_rate, good_fraction; the run's
// goodput_target and slo_frontier_rate). Not here: the latency charts of the same levels
// (serving_charts.cpp), the search itself (tools/load/slo_sweep.cpp).
#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include <fmt/core.h>

#include "tools/report/serving_charts.h"

namespace llmbench::report {

namespace {

struct SloProbe {
  std::string level, role;
  double rate = 0;  // offered req/s; inf for the throughput level
  json good_fraction, request_s;
  std::int64_t requests = 0, failed = 0;
};

struct SloSearch {
  double target = 0;
  std::optional<double> frontier;  // nullopt: no rate met the target; inf: every rate did
  std::vector<SloProbe> probes;    // in the order the search ran them
};

std::optional<SloSearch> read_slo_search(Db& db, std::int64_t run) {
  if (!db.has_column("load_run", "slo_frontier_rate")) return std::nullopt;  // before schema 9
  Stmt r = db.prepare("SELECT goodput_target, slo_frontier_rate FROM load_run "
                      "WHERE id = ? AND sweep = 'slo' AND goodput_target IS NOT NULL");
  r.bind(1, run);
  if (!r.step()) return std::nullopt;
  SloSearch s;
  s.target = r.column_double(0);
  if (!r.column_is_null(1)) s.frontier = r.column_double(1);
  Stmt q = db.prepare(
      "SELECT l.level, COALESCE(l.sweep_role, ''), l.request_rate, l.good_fraction, "
      "(SELECT COUNT(*) FROM load_request q WHERE q.level_id = l.id AND q.status = 'ok') / "
      "(l.duration_ns / 1e9), l.requests, l.failed FROM load_level l "
      "WHERE l.load_run_id = ? AND l.request_rate IS NOT NULL ORDER BY l.level_index");
  q.bind(1, run);
  while (q.step()) {
    SloProbe p;
    p.level = q.column_text(0);
    p.role = q.column_text(1);
    p.rate = q.column_double(2);
    p.good_fraction = num(q, 3);
    p.request_s = num(q, 4);
    p.requests = q.column_int(5);
    p.failed = q.column_int(6);
    s.probes.push_back(std::move(p));
  }
  return s;
}

}  // namespace

std::optional<json> slo_search_chart(Db& db, std::int64_t run, const std::string& id) {
  const std::optional<SloSearch> s = read_slo_search(db, run);
  if (!s) return std::nullopt;
  json points = json::array(), rows = json::array();
  double lo = INFINITY, hi = 0;
  for (const SloProbe& p : s->probes) {
    json rate = std::isinf(p.rate) ? json("inf") : json(r4(p.rate));
    rows.push_back({p.level, p.role, rate, p.good_fraction, p.request_s, p.requests, p.failed});
    if (std::isinf(p.rate) || p.good_fraction.is_null()) continue;
    points.push_back({{"x", r4(p.rate)}, {"y", p.good_fraction}, {"name", p.level}});
    lo = std::min(lo, p.rate);
    hi = std::max(hi, p.rate);
  }
  if (points.empty()) return std::nullopt;
  std::sort(points.begin(), points.end(),
            [](const json& a, const json& b) { return a["x"].get<double>() < b["x"].get<double>(); });
  const bool finite = s->frontier && std::isfinite(*s->frontier);
  if (finite) {
    lo = std::min(lo, *s->frontier);
    hi = std::max(hi, *s->frontier);
  }
  // The target line spans the rates drawn (the frontier included); the axis fits them.
  const double x0 = r4(lo), x1 = r4(hi);
  json ds = json::array();
  ds.push_back({{"label", "share of good requests per probe (by offered rate)"}, {"data", points},
                {"pointRadius", 4}});
  ds.push_back({{"label", fmt::format("goodput target {:g}", s->target)},
                {"data", {{{"x", x0}, {"y", s->target}}, {{"x", x1}, {"y", s->target}}}},
                {"dash", true}, {"pointRadius", 0}, {"color", "#999999"}});
  const std::string frontier_text =
      !s->frontier ? "none: no rate met the target"
      : finite     ? fmt::format("{:.4g} req/s", *s->frontier)
                   : "inf: even every request sent at once met the target";
  if (finite)
    ds.push_back({{"label", "SLO frontier " + frontier_text},
                  {"data", {{{"x", r4(*s->frontier)}, {"y", 0}}, {{"x", r4(*s->frontier)}, {"y", 1}}}},
                  {"pointRadius", 0}, {"color", "#000000"}, {"borderWidth", 2}});
  json y = axis("share of good requests (good_fraction)");
  y["min"] = 0;
  y["max"] = 1;
  return chart(id,
               "SLO search: share of good requests against the rate offered, one point per "
               "probe; dashed: the goodput target; solid vertical: the frontier (" +
                   frontier_text + ")",
               "line", ds, {{"x", axis("request rate offered (req/s)")}, {"y", y}},
               {"level", "sweep_role", "request_rate", "good_fraction", "request_throughput",
                "requests", "failed"},
               rows);
}

}  // namespace llmbench::report
