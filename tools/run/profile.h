// Sweep profiles: TOML files whose keys are the long flag names of `llmbench run`
// (`batch = [1, 4, 16]`, `model = "tiny"`, `trace = "off"`, `distinct-prompts = true`), so
// whatever a flag does a key does. `description = "..."` is the one key that is not a flag.
// This file reads and type-checks a profile; tools/run/run_options.cpp applies its entries to the
// run's flags (command-line flags win) and attributes later range errors to file:line.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace llmbench {

struct ProfileEntry {
  std::string key;    // the flag's long name without "--"
  std::string value;  // as the flag would take it: lists joined with ','
  bool is_bool = false;  // a TOML boolean (only flags take them)
  bool bool_value = false;
  int line = 0;
};

struct Profile {
  std::string source;       // the file path, or "profiles/NAME.toml (bundled)"
  std::string description;  // the `description` key, "" if none
  std::vector<ProfileEntry> entries;  // in file order

  const ProfileEntry* find(std::string_view key) const;
  // "SOURCE:LINE: key 'KEY': " for error messages.
  std::string where(const ProfileEntry& e) const;
};

// Parses profile text. Throws BadInput "SOURCE:LINE: ..." for TOML syntax errors, tables,
// empty lists, nested lists, lists of mixed or non-scalar items, empty strings, duplicate keys.
// Whether each key is a flag is checked by the caller, which knows the flags.
Profile parse_profile(std::string_view text, const std::string& source);

// Loads `name_or_path`: an existing file, else a bundled profile (profiles/NAME.toml in the
// source tree, embedded in the binary) named NAME or NAME.toml. Throws BadInput naming
// `flag` when it is neither.
Profile load_profile(const std::string& name_or_path, const std::string& flag);

}  // namespace llmbench
