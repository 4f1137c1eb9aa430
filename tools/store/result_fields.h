// The field lists of llmbench results: every column a `run` case or a `load` level produces,
// described once (name with its statistic and unit, type, table precision, which outputs carry
// it, how to read it). The printers (table/md/csv/json/jsonl: tools/report/field_rows.h), the
// bench_case schema (its columns are added from this list: store.cpp) and the INSERT all read
// it, so a metric has one name everywhere -- the way llama-bench feeds every printer from one
// field list. A distribution metric is one entry expanded over kStatistics. docs/metrics.md and
// docs/schema.md define each name.
// Not here: formatting (tools/report) or SQL (tools/store/store.cpp).
#pragma once
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "engine/bench/bench_case.h"

namespace llmbench {

// A value: not applicable / not measured (NULL, an empty csv cell, json null, "n/a" in a
// table), an integer, a real or a text.
using FieldValue = std::variant<std::monostate, std::int64_t, double, std::string>;

enum class FieldType { kInt, kReal, kText };

// Where a field appears.
enum FieldOutput : unsigned {
  kTable = 1u << 0,  // table and md (the compact view, which fits a 120-column terminal)
  kCsv = 1u << 1,    // csv, json and jsonl
  kDb = 1u << 2,     // a bench_case column
  kWide = 1u << 3,   // the wide table only (--format wide): every column the table can show
  kAll = kTable | kCsv | kDb,
};

// Whose value a field is, which decides what a failed case shows.
enum class FieldRole {
  kKey,     // configuration and status: always present
  kMetric,  // measured: absent (NULL) when the case failed
};

// Which output a getter serves (most fields give the same value to all).
enum class FieldSink { kTable, kCsv, kJson, kDb };

// One column of a result row whose values come from a `Source` (a CaseResult for `run`, a
// LevelResult for `load`). Every printer, the JSON and the SQL columns read these.
template <class Source>
struct Field {
  std::string name;       // "ttft_ms_p50"
  FieldType type;
  FieldRole role;
  unsigned outputs;       // FieldOutput bits
  int decimals;           // digits after the point in table/md (kReal)
  std::string doc;        // one line for --help-style listings and docs
  std::function<FieldValue(const Source&, FieldSink)> get;
  bool json_text = false;  // the value is JSON text, embedded as JSON in json output
  // A utilisation (MFU, MBU): a value above 1 means a wrong denominator, so the table prints it
  // flagged ("1.827!") and never as a plain number; roof_check says why.
  bool at_most_one = false;
};

// The statistics of a distribution metric (one sample per repetition, request or gap). Adding
// a statistic is one entry here: every distribution field of run and load gains its column.
// A percentile names the tail it reports: for a lower-is-better metric p90 is the slow tail;
// for a higher-is-better one (tokens/s) the slow tail is the low one, so the same entry
// becomes p10 (percentile 100 - 90), and the name says so.
struct Statistic {
  std::string_view name;    // "mean", "stdev" or "p" (a percentile: "p" + its number)
  double percentile;        // the tail percentile for a lower-is-better metric; < 0: not one
  unsigned outputs;         // FieldOutput bits
  std::string_view doc;
};
inline constexpr Statistic kStatistics[] = {
    {"mean", -1, kCsv | kDb, "mean"},
    {"stdev", -1, kCsv | kDb, "sample standard deviation"},
    {"p", 10, kCsv | kDb, "percentile"},
    {"p", 50, kAll, "median"},
    {"p", 90, kCsv | kDb, "percentile"},
    {"p", 95, kCsv | kDb, "percentile"},
    {"p", 99, kAll, "percentile"},
};

// The percentile a statistic reports for a metric (mirrored for higher-is-better ones), and
// the column's suffix: "mean", "stdev", "p50", "p99" or, higher-is-better, "p1".
double statistic_percentile(const Statistic& s, bool higher_is_better);
std::string statistic_suffix(const Statistic& s, bool higher_is_better);

// Appends one field per statistic of a distribution metric: "<metric>_<suffix>". `of` returns
// the metric's samples summary or nullptr (not applicable); `Dist` has n, mean, stdev and
// percentile(p). `table` names the suffixes the table/md view shows ({}: each statistic's own
// outputs).
template <class Source, class Dist>
void add_statistic_fields(std::vector<Field<Source>>& fields, const std::string& metric,
                          const std::string& what, int decimals, bool higher_is_better,
                          const Dist* (*of)(const Source&),
                          std::initializer_list<std::string_view> table = {}) {
  for (const Statistic& st : kStatistics) {
    const double p = statistic_percentile(st, higher_is_better);
    const std::string suffix = statistic_suffix(st, higher_is_better);
    unsigned outputs = st.outputs;
    if (table.size() > 0) {
      outputs &= ~unsigned(kTable);
      for (std::string_view t : table)
        if (t == suffix) outputs |= kTable;
    }
    const std::string_view kind = st.name;
    fields.push_back(Field<Source>{
        metric + "_" + suffix, FieldType::kReal, FieldRole::kMetric, outputs, decimals,
        what + ", " + (p < 0 ? std::string(st.doc) : suffix),
        [of, p, kind](const Source& src, FieldSink) -> FieldValue {
          const Dist* d = of(src);
          if (!d || d->n == 0) return std::monostate{};
          if (kind == "mean") return d->mean;
          if (kind == "stdev") return d->stdev;
          return d->percentile(p);
        }});
  }
}

// Keeps kTable (the compact view) on the fields named in `compact` only; every other table
// field moves to kWide, so the default table fits 120 columns and `--format wide` shows the rest.
template <class Source>
void keep_compact(std::vector<Field<Source>>& fields,
                  std::initializer_list<std::string_view> compact) {
  for (Field<Source>& f : fields) {
    if (!(f.outputs & kTable)) continue;
    bool keep = false;
    for (std::string_view c : compact) keep = keep || f.name == c;
    if (!keep) f.outputs = (f.outputs & ~unsigned(kTable)) | kWide;
  }
}

using ResultField = Field<CaseResult>;

// Every field, in output order.
std::span<const ResultField> result_fields();

// The field named `name`, or nullptr.
const ResultField* find_result_field(std::string_view name);

// The field's value for `src`. A run case's metrics are absent when the case failed.
template <class Source>
FieldValue field_value(const Field<Source>& f, const Source& src, FieldSink sink) {
  return f.get(src, sink);
}
FieldValue field_value(const ResultField& f, const CaseResult& r, FieldSink sink);

// The SQL column type of a field ("INTEGER", "REAL", "TEXT").
std::string_view sql_type(FieldType type);

}  // namespace llmbench
