// The bundled sweep profiles: profiles/*.toml, embedded into the binary at build time by
// cmake/embed_files.cmake (so `llmbench sweep quick` works from any directory).
#pragma once
#include <span>
#include <string>
#include <string_view>

#include "tools/build_info/embedded_file.h"

namespace llmbench {

std::span<const EmbeddedFile> embedded_profile_files();

// The text of the bundled profile `name` (with or without ".toml"); empty when none.
std::string_view find_bundled_profile(std::string_view name);
// "batch16-single-token, ci-smoke, ..." for messages.
std::string bundled_profile_names();

}  // namespace llmbench
