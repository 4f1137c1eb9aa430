// Output formats over one field list: a header row and rows of already-formatted cells.
// table (aligned columns for a terminal), md (a GitHub table), csv (RFC 4180 quoting).
// JSON is structured rather than tabular and lives with the results (result_rows.h).
#pragma once
#include <ostream>
#include <string>
#include <vector>

namespace llmbench {

using Row = std::vector<std::string>;

void print_table(std::ostream& out, const Row& header, const std::vector<Row>& rows);
void print_markdown(std::ostream& out, const Row& header, const std::vector<Row>& rows);
void print_csv(std::ostream& out, const Row& header, const std::vector<Row>& rows);

// Dispatches on `format`: "md", "csv", anything else a table.
void print_rows(std::ostream& out, const std::string& format, const Row& header,
                const std::vector<Row>& rows);

// True for the formats above plus "json".
bool is_output_format(const std::string& f);

}  // namespace llmbench
