// Query headers and the bundled-query registry (see bundled_queries.h).
#include "tools/query/bundled_queries.h"

#include <algorithm>
#include <cctype>

#include "kernels/common/error.h"
#include "tools/store/sql_value.h"

namespace llmbench {

namespace {

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return "";
  return std::string(s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1));
}

bool is_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// Splits at `sep` where it is outside parentheses, because meanings may contain commas.
std::vector<std::string> split_top_level(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string cur;
  int depth = 0;
  for (char c : s) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (depth == 0 && c == sep) {
      parts.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(trim(cur));
  return parts;
}

// "text (inside)" -> {"text", "inside"}; a missing "(...)" gives an empty second part.
std::pair<std::string, std::string> split_parenthesised_tail(const std::string& s) {
  const auto open = s.find('(');
  if (open == std::string::npos || s.back() != ')') return {s, ""};
  return {trim(s.substr(0, open)), trim(s.substr(open + 1, s.size() - open - 2))};
}

struct HeaderLines {
  std::string_view rest;  // the text not yet consumed
  int line = 0;

  // The next line when it opens with "-- <key>:", without that prefix; nullopt otherwise.
  std::optional<std::string> take(std::string_view key) {
    const auto end = rest.find('\n');
    std::string_view line_text = rest.substr(0, end);
    ++line;
    const std::string prefix = "-- " + std::string(key) + ":";
    if (line_text.substr(0, prefix.size()) != prefix) return std::nullopt;
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    return trim(line_text.substr(prefix.size()));
  }
};

[[noreturn]] void malformed(const std::string& where, int line, const std::string& what) {
  throw BadInput(where + ": header line " + std::to_string(line) + ": " + what);
}

// Reads "name = literal (description); ..." left to right. Not split at ';' first: a quoted
// default may hold ';' or '(' and a description may hold apostrophes ("the run's peaks").
std::vector<QueryParam> parse_params(const std::string& text, const std::string& where, int line) {
  std::vector<QueryParam> params;
  if (text == "none") return params;
  std::size_t pos = 0;
  auto skip_spaces = [&] {
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
  };
  while (true) {
    const std::size_t start = pos;
    const auto eq = text.find('=', pos);
    if (eq == std::string::npos)
      malformed(where, line, "expected 'name = default (description)', got '" +
                                 trim(text.substr(start)) + "'");
    QueryParam p;
    p.name = trim(text.substr(pos, eq - pos));
    if (!is_identifier(p.name))
      malformed(where, line, "parameter name '" + p.name + "' is not an identifier");
    pos = eq + 1;
    skip_spaces();
    const std::size_t lit = pos;
    if (pos < text.size() && text[pos] == '\'') {  // a quoted string
      for (++pos; pos < text.size(); ++pos) {
        if (text[pos] != '\'') continue;
        if (pos + 1 < text.size() && text[pos + 1] == '\'') {  // '' is a quote inside
          ++pos;
          continue;
        }
        ++pos;  // past the closing quote
        break;
      }
    } else {
      while (pos < text.size() && !std::isspace(static_cast<unsigned char>(text[pos])) &&
             text[pos] != '(' && text[pos] != ';')
        ++pos;
    }
    p.default_sql = text.substr(lit, pos - lit);
    if (!parse_sql_literal(p.default_sql))
      malformed(where, line, "default of '" + p.name + "' is not an SQL literal (NULL, a number "
                             "or a 'quoted string'): '" + p.default_sql + "'");
    skip_spaces();
    if (pos < text.size() && text[pos] == '(') {  // the description, parentheses balanced
      int depth = 0;
      const std::size_t open = pos;
      for (; pos < text.size(); ++pos) {
        if (text[pos] == '(') ++depth;
        if (text[pos] == ')' && --depth == 0) break;
      }
      if (pos == text.size())
        malformed(where, line, "unclosed '(' in the description of '" + p.name + "'");
      p.description = trim(text.substr(open + 1, pos - open - 1));
      ++pos;
    }
    const bool duplicate = std::any_of(params.begin(), params.end(),
                                       [&](const QueryParam& q) { return q.name == p.name; });
    if (duplicate) malformed(where, line, "parameter '" + p.name + "' is declared twice");
    params.push_back(std::move(p));
    skip_spaces();
    if (pos >= text.size()) return params;
    if (text[pos] != ';')
      malformed(where, line, "expected ';' after parameter '" + params.back().name + "'");
    ++pos;
  }
}

std::vector<QueryColumn> parse_columns(const std::string& text, const std::string& where,
                                       int line) {
  std::vector<QueryColumn> columns;
  for (const std::string& entry : split_top_level(text, ',')) {
    auto [name, meaning] = split_parenthesised_tail(entry);
    if (name.empty() || name.find_first_of(" \t(") != std::string::npos)
      malformed(where, line, "expected 'column (meaning)', got '" + entry + "'");
    columns.push_back({name, meaning});
  }
  return columns;
}

}  // namespace

const QueryParam* QueryHeader::find_param(std::string_view name) const {
  for (const auto& p : params)
    if (p.name == name) return &p;
  return nullptr;
}

std::optional<QueryHeader> parse_query_header(std::string_view sql, const std::string& where) {
  HeaderLines lines{sql};
  QueryHeader h;
  auto purpose = lines.take("purpose");
  if (!purpose) return std::nullopt;
  if (purpose->empty()) malformed(where, lines.line, "the purpose is empty");
  h.purpose = *purpose;
  auto params = lines.take("params");
  if (!params)
    malformed(where, lines.line, "expected '-- params: name = default (description); ...' "
                                 "or '-- params: none'");
  h.params = parse_params(*params, where, lines.line);
  auto columns = lines.take("columns");
  if (!columns) malformed(where, lines.line, "expected '-- columns: name (meaning), ...'");
  h.columns = parse_columns(*columns, where, lines.line);
  return h;
}

const std::vector<BundledQuery>& bundled_queries() {
  static const std::vector<BundledQuery> queries = [] {
    std::vector<BundledQuery> out;
    for (const EmbeddedFile& f : embedded_query_files()) {
      std::string name(f.name.substr(0, f.name.rfind(".sql")));
      auto header = parse_query_header(f.text, "bundled query '" + name + "'");
      // tests/query checks every bundled file's header, so a missing one here is a build
      // bug, not the user's input.
      if (!header) throw Error("bundled query '" + name + "' has no '-- purpose:' header");
      out.push_back({std::move(name), f.text, std::move(*header)});
    }
    std::sort(out.begin(), out.end(),
              [](const BundledQuery& a, const BundledQuery& b) { return a.name < b.name; });
    return out;
  }();
  return queries;
}

const BundledQuery* find_bundled_query(std::string_view name) {
  for (const auto& q : bundled_queries())
    if (q.name == name) return &q;
  return nullptr;
}

std::string bundled_query_names() {
  std::string names;
  for (const auto& q : bundled_queries()) names += (names.empty() ? "" : ", ") + q.name;
  return names;
}

}  // namespace llmbench
