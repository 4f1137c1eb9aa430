// See report_data.h. Picks the runs (report_select.h: DB, DB:N, DB:run:N, DB:load:N) and the
// sections; each section is built in its own file (report_section.h lists them). Every chart
// comes from aggregating SELECTs; the trace sections read at most one case's events grouped by
// op, layer or category, and the timelines a bounded number of rows. Every page opens with a
// summary table (the run's cases, the load run's levels, or a compare's verdicts); a compare
// page puts the compare view (both runs' curves, then the verdicts) first.
#include "tools/report/report_data.h"

#include "kernels/common/error.h"
#include "tools/query/query_runner.h"
#include "tools/report/report_section.h"
#include "tools/report/report_select.h"

namespace llmbench {

using namespace report;

namespace {

std::string group_sql_of(Db& db) {
  // Databases written before `merge` (no run_group column) still report: each run is a group.
  return db.has_column("run", "run_group") ? "COALESCE(run_group, id)" : "id";
}

std::unique_ptr<Db> open_side(const ReportSide& side) {
  auto db = open_query_db(side.path);
  if (!db->has_table("run") || !db->has_table("bench_case"))
    throw BadInput("report: '" + side.path + "' is not an llmbench result database (no run table)");
  return db;
}

// The load run the compare side names, else the latest of its database.
std::int64_t cand_load_run(Db& db, const ReportSide& cand) {
  if (cand.kind == RunKind::kEngine)
    throw BadInput("report: '" + cand.arg + "' names an engine run (llmbench run); the base is a "
                   "load run (llmbench load): compare a load run with a load run");
  if (cand.id) return *cand.id;
  const auto latest = latest_load_run(db);
  if (!latest) throw BadInput("report: '" + cand.path + "' has no load run to compare with");
  return *latest;
}

// Base load run `run`: its section; with a second side the compare view first, then both runs'
// own sections.
void load_run_page(Ctx& c, const ReportSide& side, std::int64_t run,
                   const std::optional<ReportSide>& cand, json& out) {
  out["title"] = "llmbench report: " + side.path + ", load run " + std::to_string(run);
  if (cand) {
    ReportSide cs = *cand;
    auto db2 = open_side(cs);
    resolve_side(*db2, cs, group_sql_of(*db2));
    const std::int64_t cand_run = cand_load_run(*db2, cs);
    out["title"] = out["title"].get<std::string>() + " against " + cs.path + ", load run " +
                   std::to_string(cand_run);
    json summary;
    serving_compare_section(c, {c.db, side.path, run}, {db2.get(), cs.path, cand_run},
                            out["sections"], &summary);
    out["summary"] = std::move(summary);
    serving_section(c, *c.db, side.path, run, out["sections"], "serving_");
    serving_section(c, *db2, cs.path, cand_run, out["sections"], "cand_serving_");
  } else {
    out["summary"] = serving_summary_table(*c.db, {{"load run " + std::to_string(run), run}});
    serving_section(c, *c.db, side.path, run, out["sections"], "serving_");
  }
  out["omitted"] = c.omitted;
}

// The engine side of a compare, opened: refuses a load run; `cand` gets its run group (the
// latest when the argument names none).
std::unique_ptr<Db> open_engine_cand(const ReportSide& side, Ctx& cand) {
  ReportSide cs = side;
  auto db2 = open_side(cs);
  cand.db = db2.get();
  cand.group_sql = group_sql_of(*db2);
  resolve_side(*db2, cs, cand.group_sql);
  if (cs.kind == RunKind::kLoad)
    throw BadInput("report: '" + side.arg + "' names a load run (llmbench load); the base is an "
                   "engine run (llmbench run): compare a run with a run");
  if (cs.id) {
    cand.group = *cs.id;
  } else {
    Stmt q = db2->prepare("SELECT " + cand.group_sql + " FROM run ORDER BY id DESC LIMIT 1");
    if (!q.step()) throw BadInput("report: '" + cs.path + "' holds no run to compare with");
    cand.group = q.column_int(0);
  }
  cand.cases_sql = "SELECT id FROM run WHERE " + cand.group_sql + " = ?1";
  return db2;
}

// A database without engine runs: its serving sections, or a page that says what is missing.
json no_engine_run_page(Ctx& c, const ReportSide& side) {
  json out = {{"title", "llmbench report: " + side.path}, {"sections", json::array()}};
  const bool load = serving_sections(c, *c.db, side.path, out["sections"]);
  const bool traced = serve_trace_section(c, *c.db, side.path, out["sections"]);
  if (load || traced) {
    out["summary"] = load ? serving_summary_table(*c.db, drawn_load_runs(*c.db))
                          : serve_steps_table(*c.db);
    c.omitted.push_back(load ? "Run summary, sweep charts and op-level charts: the database "
                               "holds serving results (llmbench load) only."
                             : "Run summary, sweep charts and op-level charts: the database "
                               "holds a traced server (llmbench serve --db --trace) only.");
    out["omitted"] = c.omitted;
    return out;
  }
  std::int64_t events = 0;
  if (c.db->has_table("event")) {
    Stmt e = c.db->prepare("SELECT COUNT(*) FROM event");
    e.step();
    events = e.column_int(0);
  }
  out["omitted"] = {
      "Run summary, sweep charts, roofline, op breakdown, layers and timeline: the database "
      "holds no benchmark runs" +
      (events ? " (only " + std::to_string(events) +
                    " trace events, e.g. an imported trace; llmbench query shows them)"
              : std::string(".")),
  };
  return out;
}

}  // namespace

json build_report_data(const ReportOptions& o) {
  ReportSide side = parse_report_side(o.db);
  if (o.run) side.id = *o.run;
  auto db = open_side(side);
  Ctx c;
  c.db = db.get();
  c.group_sql = group_sql_of(*db);
  resolve_side(*db, side, c.group_sql);
  std::optional<ReportSide> cand;
  if (!o.db2.empty()) cand = parse_report_side(o.db2);
  json out = {{"title", ""}, {"sections", json::array()}};
  if (side.kind == RunKind::kLoad) {
    load_run_page(c, side, *side.id, cand, out);
    return out;
  }
  if (side.id) {
    c.group = *side.id;
  } else {
    Stmt q = db->prepare("SELECT " + c.group_sql + " FROM run ORDER BY id DESC LIMIT 1");
    if (!q.step()) {
      // No engine run: a serving database compares its latest load run with the other side's.
      const auto latest = latest_load_run(*db);
      if (cand && !latest)
        throw BadInput("report: '" + side.path + "' holds no run and no load run to compare");
      if (cand) {
        load_run_page(c, side, *latest, cand, out);
        return out;
      }
      return no_engine_run_page(c, side);
    }
    c.group = q.column_int(0);
  }
  c.cases_sql = "SELECT id FROM run WHERE " + c.group_sql + " = ?1";
  {
    Stmt v = db->prepare("SELECT COUNT(DISTINCT variants) FROM bench_case WHERE run_id IN (" +
                         c.cases_sql + ")");
    v.bind(1, c.group);
    c.show_variants = v.step() && v.column_int(0) > 1;
  }
  out["title"] = "llmbench report: " + side.path + ", run " + std::to_string(c.group);
  out["summary"] = engine_summary_table(c);
  c.flags_in_summary = true;
  std::unique_ptr<Db> db2;
  if (cand) {
    c.flags_in_summary = false;
    // The compare view first: both runs' curves, then `llmbench compare`'s verdicts; the
    // summary table lists the verdicts.
    Ctx c2;
    db2 = open_engine_cand(*cand, c2);
    {
      Stmt v = db2->prepare("SELECT COUNT(DISTINCT variants) FROM bench_case WHERE run_id IN (" +
                            c2.cases_sql + ")");
      v.bind(1, c2.group);
      c2.show_variants = c.show_variants || (v.step() && v.column_int(0) > 1);
    }
    json curves = section("compare_engine", "Compare: run " + std::to_string(c.group) + " of " +
                                                side.path + " (base) against run " +
                                                std::to_string(c2.group) + " of " +
                                                cand->path + " (candidate)");
    curves["note"] = "Both runs' curves on one chart; the verdicts with their intervals follow.";
    engine_compare_curves(c, c2, curves);
    if (!curves["charts"].empty()) out["sections"].push_back(std::move(curves));
    json verdicts;
    compare_section(side.path + ":" + std::to_string(c.group),
                    cand->path + ":" + std::to_string(c2.group), false, c, out["sections"],
                    &verdicts);
    out["summary"] = std::move(verdicts);
  }
  out["sections"].push_back(summary_section(c));
  sweep_section(c, out["sections"]);
  trace_sections(c, out["sections"]);
  // DB alone: every load run beside the latest engine run; DB:N / DB:run:N: that run alone.
  if (!side.id) serving_sections(c, *db, side.path, out["sections"]);
  out["omitted"] = c.omitted;
  return out;
}

}  // namespace llmbench
