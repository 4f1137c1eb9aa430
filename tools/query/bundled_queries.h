// The bundled queries (queries/*.sql, embedded into the binary at build time) and the header
// every query file opens with:
//   -- purpose: <one line>
//   -- params: <name> = <default SQL literal> (<description>); ...      or  -- params: none
//   -- columns: <col> (<unit/meaning>), ...
// A default of NULL means "the latest" (run, traced case); the SQL resolves it with COALESCE.
// The same header, when a user's own .sql file has one, gives its parameters defaults too.
// This file does not run queries (query_runner.h does).
#pragma once
#include "tools/build_info/embedded_file.h"
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench {

struct QueryParam {
  std::string name;         // without the ':' prefix
  std::string default_sql;  // an SQL literal: NULL, 1, 'decode'
  std::string description;
};

struct QueryColumn {
  std::string name;
  std::string meaning;  // unit or meaning, as written in the parentheses
};

struct QueryHeader {
  std::string purpose;
  std::vector<QueryParam> params;
  std::vector<QueryColumn> columns;

  const QueryParam* find_param(std::string_view name) const;
};

// Parses the header of `sql`. nullopt when the text does not open with "-- purpose:" (a
// header-less user file). Throws BadInput naming `where` (a file or query name) and the line
// when a header is present but malformed, or a default is not an SQL literal.
std::optional<QueryHeader> parse_query_header(std::string_view sql, const std::string& where);

struct BundledQuery {
  std::string name;  // the file name without .sql
  std::string_view sql;
  QueryHeader header;
};

// Every bundled query, sorted by name. The headers are parsed once, on first use.
const std::vector<BundledQuery>& bundled_queries();
// nullptr when there is no query of that name.
const BundledQuery* find_bundled_query(std::string_view name);
// "case_summary, layer_breakdown, ..." for error messages.
std::string bundled_query_names();

// The embedded files, written by cmake/embed_files.cmake into the build tree.
std::span<const EmbeddedFile> embedded_query_files();

}  // namespace llmbench
