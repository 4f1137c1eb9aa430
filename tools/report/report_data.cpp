// See report_data.h. Picks the run group and the sections; each section is built in its own
// file (report_section.h lists them). Every chart comes from aggregating SELECTs; the trace
// sections read at most one case's events grouped by op, layer or category, and the timeline a
// bounded number of events of one step.
#include "tools/report/report_data.h"

#include "kernels/common/error.h"
#include "tools/store/run_reader.h"
#include "tools/query/query_runner.h"
#include "tools/report/report_section.h"

namespace llmbench {

using namespace report;

json build_report_data(const ReportOptions& o) {
  SideSpec side = parse_side(o.db);
  auto db = open_query_db(side.path);
  if (!has_table(*db, "run") || !has_table(*db, "bench_case"))
    throw BadInput("report: '" + side.path + "' is not an llmbench result database (no run table)");
  Ctx c;
  c.db = db.get();
  // Databases written before `merge` (no run_group column) still report: each run is a group.
  c.group_sql = columns_of(*db, "run").count("run_group") ? "COALESCE(run_group, id)" : "id";
  const auto run = o.run ? o.run : side.run_id;
  if (run) {
    Stmt q = db->prepare("SELECT 1 FROM run WHERE " + c.group_sql + " = ?");
    q.bind(1, *run);
    if (!q.step())
      throw BadInput("report: '" + side.path + "' has no run " + std::to_string(*run));
    c.group = *run;
  } else {
    Stmt q = db->prepare("SELECT " + c.group_sql + " FROM run ORDER BY id DESC LIMIT 1");
    if (!q.step()) {
      // No benchmark run: serving results alone, or an imported trace only (or an empty
      // database): a page that says what is missing.
      json out = {{"title", "llmbench report: " + side.path}, {"sections", json::array()}};
      Ctx serving;
      serving.db = db.get();
      if (serving_section(serving, out["sections"])) {
        out["omitted"] = {"Run summary, sweep charts and op-level charts: the database holds "
                          "serving results (llmbench load) only."};
        return out;
      }
      std::int64_t events = 0;
      if (has_table(*db, "event")) {
        Stmt e = db->prepare("SELECT COUNT(*) FROM event");
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
    c.group = q.column_int(0);
  }
  c.cases_sql = "SELECT id FROM run WHERE " + c.group_sql + " = ?1";
  {
    Stmt v = db->prepare("SELECT COUNT(DISTINCT variants) FROM bench_case WHERE run_id IN (" +
                         c.cases_sql + ")");
    v.bind(1, c.group);
    c.show_variants = v.step() && v.column_int(0) > 1;
  }
  json out = {{"title", "llmbench report: " + side.path + ", run " + std::to_string(c.group)},
              {"sections", json::array()}};
  out["sections"].push_back(summary_section(c));
  sweep_section(c, out["sections"]);
  trace_sections(c, out["sections"]);
  if (!o.db2.empty()) compare_section(o, c, out["sections"]);
  serving_section(c, out["sections"]);
  out["omitted"] = c.omitted;
  return out;
}

}  // namespace llmbench
