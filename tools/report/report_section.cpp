// The shared pieces of the report sections (see report_section.h).
#include "tools/report/report_section.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/core.h>

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

// "+5%" for 1.05, "-5%" for 1 / 1.05, "0%" for 1: the factor, symmetric on a log scale.
std::string factor_label(double v) {
  if (std::fabs(v - 1) < 1e-9) return "0%";
  return v > 1 ? fmt::format("+{:g}%", r4((v - 1) * 100))
               : fmt::format("-{:g}%", r4((1 / v - 1) * 100));
}

// The ratio axis: log, from the smallest to the largest value drawn (and the threshold band),
// ticks at the threshold's factor both ways, 1, and round factors that fall inside.
json ratio_axis(double lo, double hi, double threshold) {
  const double band = 1 + threshold;
  lo = std::min(lo, 1 / band) / 1.01;
  hi = std::max(hi, band) * 1.01;
  std::vector<double> ticks = {1.0, band, 1 / band};
  for (double f : {1.1, 1.25, 1.5, 2.0, 3.0, 5.0, 10.0, 100.0})
    for (double v : {f, 1 / f})
      if (v > lo && v < hi && std::fabs(std::log(v / band)) > 0.02 &&
          std::fabs(std::log(v * band)) > 0.02)
        ticks.push_back(v);
  std::sort(ticks.begin(), ticks.end());
  json values = json::array(), labels = json::array();
  for (double v : ticks) {
    values.push_back(r4(v));
    labels.push_back(factor_label(v));
  }
  json a = axis("ratio candidate / base, as a factor (0% = unchanged)", "logarithmic");
  a["min"] = r4(lo);
  a["max"] = r4(hi);
  a["tickValues"] = values;
  a["tickLabels"] = labels;
  return a;
}


}  // namespace llmbench::report
