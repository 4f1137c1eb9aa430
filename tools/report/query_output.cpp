// Query result printing (see query_output.h).
#include "tools/report/query_output.h"

#include <fmt/core.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "tools/console/field_rows.h"
#include "tools/console/printers.h"

namespace llmbench {

std::string format_cell(const SqlValue& value, bool exact) {
  if (value.is_null()) return exact ? "" : "NULL";
  if (auto* i = std::get_if<std::int64_t>(&value.v)) return std::to_string(*i);
  if (auto* d = std::get_if<double>(&value.v)) {
    // Full precision without arithmetic artefacts (0.1302761, not 0.13027609999999998), as
    // every llmbench output prints a number (field_rows.h).
    if (exact || !std::isfinite(*d)) return format_number(*d);
    // Exponent notation only for the very small; large reals (ns, bytes) read better whole.
    if (std::fabs(*d) >= 1e6) return fmt::format("{:.0f}", *d);
    return fmt::format("{:.6g}", *d);
  }
  return std::get<std::string>(value.v);
}

namespace {

nlohmann::ordered_json json_value(const SqlValue& value) {
  if (auto* i = std::get_if<std::int64_t>(&value.v)) return *i;
  if (auto* d = std::get_if<double>(&value.v))
    return std::isfinite(*d) ? nlohmann::ordered_json(round_number(*d))
                             : nlohmann::ordered_json(nullptr);
  if (auto* s = std::get_if<std::string>(&value.v)) return *s;
  return nullptr;
}

// A '|' inside a cell would end the Markdown cell early.
std::string md_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

void print_query_result(std::ostream& out, const std::string& format, const QueryResult& result) {
  if (format == "json") {
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const auto& r : result.rows) {
      nlohmann::ordered_json obj = nlohmann::ordered_json::object();
      for (std::size_t i = 0; i < r.size(); ++i) obj[result.columns[i]] = json_value(r[i]);
      rows.push_back(std::move(obj));
    }
    out << rows.dump(2) << "\n";
    return;
  }
  const bool exact = format == "csv";
  std::vector<Row> rows;
  for (const auto& r : result.rows) {
    Row cells;
    for (const auto& v : r) cells.push_back(format == "md" ? md_escape(format_cell(v, exact))
                                                           : format_cell(v, exact));
    rows.push_back(std::move(cells));
  }
  print_rows(out, format, result.columns, rows);
}

}  // namespace llmbench
