// SQL literal parsing and binding (see sql_value.h).
#include "tools/store/sql_value.h"

#include <fmt/core.h>

#include <cctype>
#include <charconv>

namespace llmbench {

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

bool iequals(const std::string& a, const char* b) {
  std::size_t i = 0;
  for (; i < a.size() && b[i]; ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != b[i]) return false;
  return i == a.size() && !b[i];
}

// Whole-string number parses: from_chars never accepts leading spaces, "+" or hex, which is
// what an SQL numeric literal looks like here.
std::optional<std::int64_t> to_int(const std::string& s) {
  std::int64_t x = 0;
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, x);
  if (ec != std::errc() || p != end) return std::nullopt;
  return x;
}

std::optional<double> to_real(const std::string& s) {
  // Needs a digit: from_chars also reads "inf" and "nan", which SQL does not.
  if (s.find_first_of("0123456789") == std::string::npos) return std::nullopt;
  if (s.find_first_not_of("0123456789.eE+-") != std::string::npos) return std::nullopt;
  double x = 0;
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, x);
  if (ec != std::errc() || p != end) return std::nullopt;
  return x;
}

std::optional<std::string> unquote(const std::string& s) {
  if (s.size() < 2 || s.front() != '\'' || s.back() != '\'') return std::nullopt;
  std::string out;
  for (std::size_t i = 1; i + 1 < s.size(); ++i) {
    if (s[i] == '\'') {
      if (i + 2 >= s.size() || s[i + 1] != '\'') return std::nullopt;  // a lone quote inside
      ++i;
    }
    out += s[i];
  }
  return out;
}

}  // namespace

std::string SqlValue::to_sql() const {
  if (is_null()) return "NULL";
  if (auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (auto* d = std::get_if<double>(&v)) return fmt::format("{}", *d);
  std::string q = "'";
  for (char c : std::get<std::string>(v)) q += c == '\'' ? std::string("''") : std::string(1, c);
  return q + "'";
}

std::optional<SqlValue> parse_sql_literal(const std::string& text) {
  const std::string s = trim(text);
  if (iequals(s, "null")) return SqlValue{};
  if (auto i = to_int(s)) return SqlValue{*i};
  if (auto d = to_real(s)) return SqlValue{*d};
  if (auto t = unquote(s)) return SqlValue{*t};
  return std::nullopt;
}

SqlValue parse_param_value(const std::string& text) {
  if (auto lit = parse_sql_literal(text)) return *lit;
  return SqlValue{text};
}

void bind_value(Stmt& stmt, int index, const SqlValue& value) {
  if (value.is_null())
    stmt.bind_null(index);
  else if (auto* i = std::get_if<std::int64_t>(&value.v))
    stmt.bind(index, *i);
  else if (auto* d = std::get_if<double>(&value.v))
    stmt.bind(index, *d);
  else
    stmt.bind(index, std::get<std::string>(value.v));
}

}  // namespace llmbench
