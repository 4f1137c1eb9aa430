// A file embedded into the binary at build time (cmake/embed_files.cmake writes the arrays of
// them: the bundled queries and profiles). Build facts only; nothing here reads a file.
#pragma once
#include <string_view>

namespace llmbench {

struct EmbeddedFile {
  std::string_view name;  // e.g. "top_ops.sql"
  std::string_view text;
};

}  // namespace llmbench
