// How a field list's values are written in each output format, for every list (run cases,
// load levels): table/md cells with the field's precision and "n/a", csv cells at full
// precision and empty for not applicable, JSON values. One place decides how a number is
// printed, so `run`, `load` and `query` print the same number the same way.
// Not the layout of a table (printers.h) and not the fields themselves (tools/store).
#pragma once
#include <nlohmann/json.hpp>
#include <span>
#include <ostream>
#include <string>
#include <vector>

#include "tools/console/printers.h"
#include "tools/store/result_fields.h"

namespace llmbench {

// A double in the shortest form that reads back to it at the precision a double holds for
// any decimal (15 significant digits): 0.1302761, not 0.13027609999999998; 1e-05; 130; "inf",
// "-inf", "nan".
std::string format_number(double v);
// `v` rounded to 15 significant digits, for JSON (whose writer prints the shortest form of
// the double it is given, artefacts included). Non-finite values pass through.
double round_number(double v);

// A cell: table/md with `decimals` digits and "n/a"; csv at full precision and "".
std::string field_cell(const FieldValue& v, int decimals, bool csv);
// A JSON value: null, an integer, a number (round_number; infinities as the text "inf"), a
// text, or parsed JSON when `json_text`.
nlohmann::ordered_json field_json(const FieldValue& v, bool json_text);

// What every printed result names besides its fields: the schema version of the database it
// was stored in (kSchemaVersion: this build writes no other), its run and the llmbench commit
// that measured it. csv carries them as the first columns of every row, json and jsonl as keys,
// table and md as one line under the table.
struct OutputStamp {
  std::string run_key = "run_id";  // "run_id" (run) or "load_run_id" (load)
  std::int64_t run_id = 0;
  std::string git_commit;
};
Row stamp_header(const OutputStamp& s);
Row stamp_cells(const OutputStamp& s);
// "schema version 6, run_id 3, commit 0123abcd"
std::string stamp_line(const OutputStamp& s);
// Sets "schema_version", the run key and "git_commit" in `j`.
void add_stamp_json(nlohmann::ordered_json& j, const OutputStamp& s);
// Prints a table: the stamp's columns first in csv, its line under table and md.
void print_stamped_rows(std::ostream& out, const std::string& format, const OutputStamp& s,
                        Row header, std::vector<Row> rows);

// Which columns a table shows: the compact view (table, md: it fits a 120-column terminal), the
// wide table (--format wide: every table column), or csv (and json).
enum class FieldView { kCompact, kWide, kCsv };
// The view of an output format: "csv" -> kCsv, "wide" -> kWide, anything else -> kCompact.
inline FieldView field_view(const std::string& format) {
  return format == "csv" ? FieldView::kCsv : format == "wide" ? FieldView::kWide
                                                               : FieldView::kCompact;
}

template <class Source>
bool field_shown(const Field<Source>& f, FieldView view) {
  switch (view) {
    case FieldView::kCsv: return f.outputs & kCsv;
    case FieldView::kWide: return f.outputs & (kTable | kWide);
    case FieldView::kCompact: break;
  }
  return f.outputs & kTable;
}

// The header of a view.
template <class Source>
Row field_header(std::span<const Field<Source>> fields, FieldView view) {
  Row h;
  for (const auto& f : fields)
    if (field_shown(f, view)) h.emplace_back(f.name);
  return h;
}
template <class Source>
Row field_header(std::span<const Field<Source>> fields, bool csv) {
  return field_header(fields, csv ? FieldView::kCsv : FieldView::kCompact);
}

// A table/md cell of a utilisation above 1 gets this mark (csv keeps the plain number and
// its roof_check column says why).
inline constexpr const char* kAboveOneMark = "!";

// One row of a view.
template <class Source>
Row field_row(std::span<const Field<Source>> fields, const Source& src, FieldView view) {
  const bool csv = view == FieldView::kCsv;
  Row row;
  for (const auto& f : fields)
    if (field_shown(f, view)) {
      const FieldValue v = field_value(f, src, csv ? FieldSink::kCsv : FieldSink::kTable);
      row.push_back(field_cell(v, f.decimals, csv));
      if (!csv && f.at_most_one && std::holds_alternative<double>(v) && std::get<double>(v) > 1)
        row.back() += kAboveOneMark;
    }
  return row;
}
template <class Source>
Row field_row(std::span<const Field<Source>> fields, const Source& src, bool csv) {
  return field_row(fields, src, csv ? FieldView::kCsv : FieldView::kCompact);
}

// Every csv field of `src` as a JSON object's keys, appended to `out`.
template <class Source>
void add_field_json(nlohmann::ordered_json& out, std::span<const Field<Source>> fields,
                    const Source& src) {
  for (const auto& f : fields)
    if (f.outputs & kCsv) out[f.name] = field_json(field_value(f, src, FieldSink::kJson), f.json_text);
}

}  // namespace llmbench
