// How an Nsight Systems export encodes names and columns (see nsys_encoding.h).
#include "tools/trace_io/nsys_encoding.h"

#include <cctype>

namespace llmbench {

std::string strip_api_version(const std::string& name) {
  const auto v = name.rfind("_v");
  if (v == std::string::npos || v == 0 || v + 2 == name.size()) return name;
  for (std::size_t i = v + 2; i < name.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return name;
  return name.substr(0, v);
}

std::optional<std::int64_t> nsys_opt_int(const Stmt& s, int i) {
  if (s.column_type(i) == SQLITE_NULL) return std::nullopt;
  return s.column_int(i);
}

}  // namespace llmbench
