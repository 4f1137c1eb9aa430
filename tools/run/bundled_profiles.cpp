// Lookup of the embedded profiles (see bundled_profiles.h).
#include "tools/run/bundled_profiles.h"

namespace llmbench {

namespace {
std::string_view stem(std::string_view file) {
  return file.substr(0, file.size() - std::string_view(".toml").size());
}
}  // namespace

std::string_view find_bundled_profile(std::string_view name) {
  if (name.ends_with(".toml")) name = stem(name);
  for (const EmbeddedFile& f : embedded_profile_files())
    if (stem(f.name) == name) return f.text;
  return {};
}

std::string bundled_profile_names() {
  std::string names;
  for (const EmbeddedFile& f : embedded_profile_files())
    names += (names.empty() ? "" : ", ") + std::string(stem(f.name));
  return names;
}

}  // namespace llmbench
