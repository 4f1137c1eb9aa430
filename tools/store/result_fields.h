// The field list of llmbench results: every column a case produces, described once (name with
// its statistic and unit, type, table precision, which outputs carry it, how to read it from a
// CaseResult). The table/md/csv/json printers (tools/report/result_rows.h), the bench_case
// schema (its columns are added from this list: store.cpp) and the INSERT (store.cpp) all read
// it, so a metric has one name everywhere -- the way llama-bench feeds every printer from one
// field list. docs/metrics.md and docs/schema.md define each name.
// Not here: formatting (tools/report) or SQL (tools/store/store.cpp).
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "engine/bench/bench_case.h"

namespace llmbench {

// A value: not applicable / not measured (NULL, an empty csv cell, json null, "n/a" in a
// table), an integer, a real or a text.
using FieldValue = std::variant<std::monostate, std::int64_t, double, std::string>;

enum class FieldType { kInt, kReal, kText };

// Where a field appears.
enum FieldOutput : unsigned {
  kTable = 1u << 0,  // table and md (the compact view)
  kCsv = 1u << 1,    // csv, json and jsonl
  kDb = 1u << 2,     // a bench_case column
  kAll = kTable | kCsv | kDb,
};

// Whose value a field is, which decides what a failed case shows.
enum class FieldRole {
  kKey,     // configuration and status: always present
  kMetric,  // measured: absent (NULL) when the case failed
};

// Which output a getter serves (most fields give the same value to all).
enum class FieldSink { kTable, kCsv, kJson, kDb };

struct ResultField {
  std::string_view name;  // "ttft_ms_p50"
  FieldType type;
  FieldRole role;
  unsigned outputs;       // FieldOutput bits
  int decimals;           // digits after the point in table/md (kReal)
  std::string_view doc;   // one line for --help-style listings and docs
  FieldValue (*get)(const CaseResult&, FieldSink);
  bool json_text = false;  // the value is JSON text, embedded as JSON in json output
};

// Every field, in output order.
std::span<const ResultField> result_fields();

// The field named `name`, or nullptr.
const ResultField* find_result_field(std::string_view name);

// The field's value for `r`: absent for metrics of a case that failed.
FieldValue field_value(const ResultField& f, const CaseResult& r, FieldSink sink);

// The SQL column type of a field ("INTEGER", "REAL", "TEXT").
std::string_view sql_type(FieldType type);

}  // namespace llmbench
