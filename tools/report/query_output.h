// Prints a query result in the formats every llmbench command offers. table and md are for
// people (reals rounded to 6 significant digits, NULL shown as NULL); csv keeps full precision
// (NULL is an empty cell); json is an array of row objects (numbers as numbers, NULL as null).
#pragma once
#include <ostream>
#include <string>

#include "tools/query/query_runner.h"

namespace llmbench {

// `format` is table|md|csv|json.
void print_query_result(std::ostream& out, const std::string& format, const QueryResult& result);

// One cell as printed in table/md (`exact` false) or csv (`exact` true).
std::string format_cell(const SqlValue& value, bool exact);

}  // namespace llmbench
