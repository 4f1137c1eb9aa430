// One SQL value (NULL, integer, real or text) as given on the command line or as a default in a
// query header, and how it is bound to a statement parameter.
// `--param k=3` binds the integer 3, not the text '3': inside expressions such as COALESCE
// SQLite does not apply column affinity, so a text '3' would never equal an id of 3.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "tools/store/sqlite_db.h"

namespace llmbench {

struct SqlValue {
  std::variant<std::monostate, std::int64_t, double, std::string> v;  // monostate = NULL

  bool is_null() const { return std::holds_alternative<std::monostate>(v); }
  // The value as SQL source: NULL, 42, 0.5, 'it''s'.
  std::string to_sql() const;
};

// Parses an SQL literal: NULL (any case), an integer, a real, or a single-quoted string with ''
// escapes. nullopt when `text` is none of these (e.g. decode_step or "(1, 2)").
std::optional<SqlValue> parse_sql_literal(const std::string& text);

// A --param value: an SQL literal when it is one, otherwise the text itself, so that
// `--param range_name=decode_step` needs no shell-quoted SQL quotes.
SqlValue parse_param_value(const std::string& text);

void bind_value(Stmt& stmt, int index, const SqlValue& value);

}  // namespace llmbench
