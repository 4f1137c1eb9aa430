// Cells and JSON values of field lists (see field_rows.h).
#include "tools/console/field_rows.h"

#include <fmt/core.h>

#include <cmath>
#include <cstdlib>

#include "engine/checkpoint/json_input.h"
#include "tools/store/store.h"

namespace llmbench {

namespace {
constexpr int kDigits = 15;  // DBL_DIG: every 15-digit decimal survives a trip through a double
}

double round_number(double v) {
  if (!std::isfinite(v) || v == 0) return v;
  return std::strtod(fmt::format("{:.{}g}", v, kDigits).c_str(), nullptr);
}

std::string format_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  // The shortest round-trip form of the value rounded to 15 digits: drops the last-bit noise
  // of arithmetic (130276.1 / 1e6) while keeping every digit a measurement can carry.
  return fmt::format("{}", round_number(v));
}

Row stamp_header(const OutputStamp& s) { return {"schema_version", s.run_key, "git_commit"}; }

Row stamp_cells(const OutputStamp& s) {
  return {std::to_string(kSchemaVersion), std::to_string(s.run_id), s.git_commit};
}

std::string stamp_line(const OutputStamp& s) {
  return fmt::format("schema version {}, {} {}, commit {}", kSchemaVersion, s.run_key, s.run_id,
                     s.git_commit);
}

void add_stamp_json(nlohmann::ordered_json& j, const OutputStamp& s) {
  j["schema_version"] = kSchemaVersion;
  j[s.run_key] = s.run_id;
  j["git_commit"] = s.git_commit;
}

void print_stamped_rows(std::ostream& out, const std::string& format, const OutputStamp& s,
                        Row header, std::vector<Row> rows) {
  if (format == "csv") {
    const Row stamp = stamp_cells(s), names = stamp_header(s);
    header.insert(header.begin(), names.begin(), names.end());
    for (Row& r : rows) r.insert(r.begin(), stamp.begin(), stamp.end());
    print_rows(out, format, header, rows);
    return;
  }
  print_rows(out, format, header, rows);
  out << (format == "md" ? "\n" : "") << stamp_line(s) << "\n";
}

std::string field_cell(const FieldValue& v, int decimals, bool csv) {
  if (std::holds_alternative<std::monostate>(v)) return csv ? "" : "n/a";
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&v)) {
    if (csv || !std::isfinite(*d)) return format_number(*d);
    return fmt::format("{:.{}f}", *d, decimals);
  }
  return std::get<std::string>(v);
}

nlohmann::ordered_json field_json(const FieldValue& v, bool json_text) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return *i;
  if (const auto* d = std::get_if<double>(&v)) {
    if (std::isinf(*d)) return *d > 0 ? "inf" : "-inf";
    if (std::isnan(*d)) return nullptr;
    return round_number(*d);
  }
  if (const auto* t = std::get_if<std::string>(&v)) {
    if (!json_text) return nlohmann::ordered_json(*t);
    // A JSON column read back from a database (variants, ...): a value too deep or invalid is
    // shown as its text, never recursed into.
    auto parsed = parse_ordered_json(*t);
    return parsed.ok() ? std::move(parsed.value) : nlohmann::ordered_json(*t);
  }
  return nullptr;
}

}  // namespace llmbench
