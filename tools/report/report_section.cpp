// The shared pieces of the report sections (see report_section.h).
#include "tools/report/report_section.h"

#include <cmath>

#include <fmt/core.h>

#include "kernels/common/error.h"
#include "tools/query/bundled_queries.h"
#include "tools/query/query_runner.h"
#include "tools/store/result_fields.h"

namespace llmbench::report {

double r4(double v) {
  if (v == 0 || !std::isfinite(v)) return v;
  const double scale = std::pow(10.0, 3 - std::floor(std::log10(std::fabs(v))));
  return std::round(v * scale) / scale;
}
json num(const Stmt& s, int i) {
  return s.column_is_null(i) ? json(nullptr) : json(r4(s.column_double(i)));
}

bool has_table(Db& db, const std::string& t) { return db.has_table(t); }
std::set<std::string> columns_of(Db& db, const std::string& t) {
  const std::vector<std::string> cols = db.columns(t);
  return {cols.begin(), cols.end()};
}

json axis(const std::string& title, const std::string& type) {
  return {{"type", type}, {"title", {{"display", true}, {"text", title}}}};
}
json chart(const std::string& id, const std::string& title, const std::string& type, json datasets,
           json scales, json columns, json rows) {
  return {{"id", id},
          {"title", title},
          {"config", {{"type", type}, {"data", {{"datasets", std::move(datasets)}}},
                      {"options", {{"scales", std::move(scales)}}}}},
          {"table", {{"columns", std::move(columns)}, {"rows", std::move(rows)}}}};
}
json section(const std::string& id, const std::string& title) {
  return {{"id", id}, {"title", title}, {"charts", json::array()}};
}

std::string field_text(const std::string& column, const json& v, double scale, int extra) {
  if (v.is_null() || !v.is_number()) return "n/a";
  const ResultField* f = find_result_field(column);
  const int decimals = std::max(0, (f ? f->decimals : 2) + extra);
  return fmt::format("{:.{}f}", v.get<double>() * scale, decimals);
}

std::string roof_advice(const std::string& check) {
  // The most serious finding first: a denominator that is wrong, then one that is stale, then
  // a machine that was busy.
  if (check.find(" > 1") != std::string::npos || check.find("cached peak") != std::string::npos)
    return "the cached peak is stale: run `llmbench roofline` on a quiet machine, then run the "
           "case again";
  if (check.find("above the roof") != std::string::npos)
    return "an op cannot beat its roof, so the roof is too low: the cached peak is stale: run "
           "`llmbench roofline` on a quiet machine";
  if (check.find("probe +") != std::string::npos)
    return "the cached read roof is below what the probe beside the case read (MBU divides by "
           "the probe): run `llmbench roofline` to refresh the cache";
  return "the read roof beside the case was low or moved (a busy machine?): run the case again "
         "on a quiet machine";
}

json bundled_rows(Db& db, const std::string& name,
                  const std::map<std::string, std::string>& params,
                  std::vector<std::string>* columns) {
  const BundledQuery* q = find_bundled_query(name);
  if (!q) throw Error("report: bundled query '" + name + "' is missing from this build");
  const QueryResult r = run_query(db, {"query '" + name + "'", std::string(q->sql), q->header},
                                  params);
  if (columns) *columns = r.columns;
  json rows = json::array();
  for (const auto& row : r.rows) {
    json out = json::array();
    for (const SqlValue& v : row) {
      if (const auto* i = std::get_if<std::int64_t>(&v.v)) out.push_back(*i);
      else if (const auto* d = std::get_if<double>(&v.v)) out.push_back(*d);
      else if (const auto* t = std::get_if<std::string>(&v.v)) out.push_back(*t);
      else out.push_back(nullptr);
    }
    rows.push_back(std::move(out));
  }
  return rows;
}

std::string series_label(const Ctx& c, const std::string& model, const std::string& dtype,
                         const std::string& variants, int p, int n) {
  std::string l = model + " " + dtype + " p" + std::to_string(p) + " n" + std::to_string(n);
  if (c.show_variants && variants != "{}" && !variants.empty()) l += " " + variants;
  return l;
}

}  // namespace llmbench::report
