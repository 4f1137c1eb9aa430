// The shared pieces of the report sections (see report_section.h).
#include "tools/report/report_section.h"

#include <cmath>

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


std::string series_label(const Ctx& c, const std::string& model, const std::string& dtype,
                         const std::string& variants, int p, int n) {
  std::string l = model + " " + dtype + " p" + std::to_string(p) + " n" + std::to_string(n);
  if (c.show_variants && variants != "{}" && !variants.empty()) l += " " + variants;
  return l;
}

}  // namespace llmbench::report
