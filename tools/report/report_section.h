// What every section of `llmbench report` shares: the context (the database, the run group,
// the notes of what was left out), the JSON shapes of a section and a chart, and the one
// section builder per file (report_summary.cpp, report_sweep.cpp, report_ops.cpp,
// report_compare.cpp, report_serving.cpp). report_data.cpp picks the sections.
// Not the page (report_html.h) and not the statistics (tools/compare).
#pragma once
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "tools/report/report_data.h"
#include "tools/store/sqlite_db.h"

namespace llmbench::report {

using json = nlohmann::ordered_json;

struct Ctx {
  Db* db = nullptr;
  std::int64_t group = 0;
  std::string group_sql;  // "COALESCE(run_group, id)", or "id" before merged shards existed
  std::string cases_sql;  // "SELECT id FROM run WHERE <group_sql> = ?1"
  bool show_variants = false;
  // The page's summary table already names every flagged case with what to do: the sweep
  // section does not repeat it (a warning appears once on a page).
  bool flags_in_summary = false;
  json omitted = json::array();
};

// 4 significant digits: the page shows no more, and the file stays small.
double r4(double v);
// Column i of the current row, rounded by r4; null for NULL.
json num(const Stmt& s, int i);

bool has_table(Db& db, const std::string& t);
std::set<std::string> columns_of(Db& db, const std::string& t);

// A Chart.js axis with a title.
json axis(const std::string& title, const std::string& type = "linear");
// A chart: its Chart.js config and the table of the same numbers.
json chart(const std::string& id, const std::string& title, const std::string& type, json datasets,
           json scales, json columns, json rows);
// The compare chart's log ratio axis (report_compare.cpp) over values lo..hi with the
// verdict threshold (0.05: +-5%): its range, tick values and "+5%"-style labels.
json ratio_axis(double lo, double hi, double threshold);
// An empty section.
json section(const std::string& id, const std::string& title);

// `v` printed with the precision the field list gives result column `column` (ttft_ms_p50: 2
// decimals, so a stored 1725.44 prints 1725.44, never 1725.00), times `scale` with `extra`
// more decimals (a fraction as a percentage: scale 100, extra -2); "n/a" for null.
std::string field_text(const std::string& column, const json& v, double scale = 1,
                       int extra = 0);

// What to do about a bench_case.roof_check other than "ok" (or a utilisation above 1): one
// line, e.g. "the cached peak is stale: run `llmbench roofline` on a quiet machine".
std::string roof_advice(const std::string& check);
// Whether a roof_check says something is wrong (not empty, not "ok").
inline bool roof_flagged(const std::string& check) { return !check.empty() && check != "ok"; }

// "model dtype pP nN"; variants are named only when the run holds more than one set (they
// are long JSON objects).
std::string series_label(const Ctx& c, const std::string& model, const std::string& dtype,
                         const std::string& variants, int p, int n);

// The page's opening table (every page has one, as GuideLLM's report opens with one):
// {"title", "note", "warnings", "columns", "rows", "flagged": row indexes drawn as warnings}.
// The run's cases through the bundled case_summary query; a load run's levels through
// load_summary (report_serving.cpp); a compare page's verdicts (report_compare.cpp).
json engine_summary_table(Ctx& c);
json serving_summary_table(Db& db, const std::vector<std::pair<std::string, std::int64_t>>& runs);
// The load runs serving_sections draws (the latest few, oldest first), named "load run N".
std::vector<std::pair<std::string, std::int64_t>> drawn_load_runs(Db& db);

// The sections, each appending to `sections` (or to c.omitted with the reason it is absent).
json summary_section(Ctx& c);
void sweep_section(Ctx& c, json& sections);
void trace_sections(Ctx& c, json& sections);
// `llmbench compare BASE CAND` as a chart (BASE and CAND as compare_databases takes them:
// DB or DB:ID; `serving`: they are load runs).
// `summary`, when given, receives the page's opening table of the verdicts.
void compare_section(const std::string& base, const std::string& cand, bool serving, Ctx& c,
                     json& sections, json* summary = nullptr);
// Both engine runs' curves on one chart each (TTFT and TPOT against batch, throughput against
// latency), series prefixed "base: " and "cand: " (report_sweep.cpp); appended to `s`.
void engine_compare_curves(Ctx& base, Ctx& cand, json& s);
// The serving section of load run `run` of `db` (report_serving.cpp); true when it added one.
// Its chart ids start with id_prefix + run (unique on the page).
bool serving_section(Ctx& c, Db& db, const std::string& path, std::int64_t run, json& sections,
                     const std::string& id_prefix = "serving_");
// A serving section per load run of `db` (the latest few); true when it added any.
bool serving_sections(Ctx& c, Db& db, const std::string& path, json& sections);
// One served request's waterfall beside its steps' op breakdown, from the latest traced
// `serve --db --trace` session of `db` (report_serve_trace.cpp); true when it added it.
bool serve_trace_section(Ctx& c, Db& db, const std::string& path, json& sections);
// The opening table of a page of `serve --db` only: the bundled serve_steps query's rows.
json serve_steps_table(Db& db);
// One load run of one database.
struct LoadRunRef {
  Db* db = nullptr;
  std::string path;
  std::int64_t run = 0;
};
// Two load runs: matched levels' deltas, both runs' curves on one chart, TTFT per turn of both,
// and `llmbench compare`'s verdicts (report_serving_compare.cpp).
void serving_compare_section(Ctx& c, const LoadRunRef& base, const LoadRunRef& cand,
                             json& sections, json* summary = nullptr);
// The latency distributions of one load run: per level the CDF of TTFT and TPOT (one point per
// request, bounded) and of ITL (the bundled load_itl_distribution query's cumulative share),
// appended to `s` (report_serving_dist.cpp).
void latency_distributions(Ctx& c, Db& db, std::int64_t run, const std::string& id_prefix,
                           json& s);
// Runs bundled query `name` on `db` with `params`; the rows as JSON arrays of the columns'
// values, the column names through `columns` when given.
json bundled_rows(Db& db, const std::string& name,
                  const std::map<std::string, std::string>& params,
                  std::vector<std::string>* columns = nullptr);
// The request timeline and the server-metric charts under it, appended to section `s`.
void timeline_charts(Ctx& c, Db& db, std::int64_t run, const std::string& id_prefix, json& s);

}  // namespace llmbench::report
