// Profile parsing with toml++ (see profile.h).
#include "tools/run/profile.h"

#include <fmt/core.h>
#include <toml++/toml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kernels/common/error.h"
#include "tools/run/bundled_profiles.h"

namespace llmbench {

const ProfileEntry* Profile::find(std::string_view key) const {
  for (const auto& e : entries)
    if (e.key == key) return &e;
  return nullptr;
}

std::string Profile::where(const ProfileEntry& e) const {
  return fmt::format("{}:{}: key '{}': ", source, e.line, e.key);
}

namespace {

std::string type_word(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "a list";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a number";
    case toml::node_type::boolean: return "a boolean";
    default: return "a date or time";
  }
}

// One scalar as flag text; throws a message (without the location) when it cannot be one.
std::string scalar_text(const toml::node& n) {
  if (auto s = n.as_string()) {
    const std::string& v = s->get();
    if (v.empty()) throw BadInput("expected a value, got an empty string");
    return v;
  }
  if (auto i = n.as_integer()) return std::to_string(i->get());
  if (auto f = n.as_floating_point()) return fmt::format("{}", f->get());
  throw BadInput("expected a string or a number, got " + type_word(n));
}

ProfileEntry read_entry(const std::string& key, const toml::node& n, int line) {
  ProfileEntry e;
  e.key = key;
  e.line = line;
  if (auto b = n.as_boolean()) {
    e.is_bool = true;
    e.bool_value = b->get();
    e.value = e.bool_value ? "true" : "false";
    return e;
  }
  if (auto a = n.as_array()) {
    if (a->empty()) throw BadInput("expected at least one value, got an empty list");
    for (const toml::node& item : *a) {
      if (item.is_array() || item.is_table() || item.is_boolean())
        throw BadInput("list items must be strings or numbers, got " + type_word(item));
      const std::string text = scalar_text(item);
      if (text.find(',') != std::string::npos)
        throw BadInput("list item '" + text + "' contains ','");
      e.value += (e.value.empty() ? "" : ",") + text;
    }
    return e;
  }
  if (n.is_table())
    throw BadInput("tables are not used in profiles; write the flag names as top-level keys");
  e.value = scalar_text(n);
  return e;
}

}  // namespace

Profile parse_profile(std::string_view text, const std::string& source) {
  Profile p;
  p.source = source;
  toml::table table;
  try {
    table = toml::parse(text, source);
  } catch (const toml::parse_error& err) {
    throw BadInput(fmt::format("{}:{}: {}", source, err.source().begin.line, err.description()));
  }
  for (auto&& [key, node] : table) {
    const int line = int(key.source().begin.line);
    const std::string name(key.str());
    try {
      if (name == "description") {
        const auto* s = node.as_string();
        if (!s) throw BadInput("expected a string, got " + type_word(node));
        p.description = s->get();
        continue;
      }
      p.entries.push_back(read_entry(name, node, line));
    } catch (const BadInput& e) {
      throw BadInput(fmt::format("{}:{}: key '{}': {}", source, line, name, e.what()));
    }
  }
  // toml++ iterates keys in sorted order; keep the file's order for messages and listings.
  std::stable_sort(p.entries.begin(), p.entries.end(),
                   [](const ProfileEntry& a, const ProfileEntry& b) { return a.line < b.line; });
  return p;
}

Profile load_profile(const std::string& name_or_path, const std::string& flag) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_regular_file(name_or_path, ec)) {
    std::ifstream in(name_or_path);
    if (!in) throw BadInput(flag + ": cannot read '" + name_or_path + "'");
    std::stringstream ss;
    ss << in.rdbuf();
    return parse_profile(ss.str(), name_or_path);
  }
  if (fs::exists(name_or_path, ec))
    throw BadInput(flag + ": '" + name_or_path + "' is not a file");
  std::string name = name_or_path;
  if (name.starts_with("profiles/")) name = name.substr(9);
  if (std::string_view text = find_bundled_profile(name); !text.empty()) {
    if (name.ends_with(".toml")) name.resize(name.size() - 5);
    return parse_profile(text, "profiles/" + name + ".toml (bundled)");
  }
  throw BadInput(flag + ": no file '" + name_or_path + "' and no bundled profile of that name "
                 "(bundled: " + bundled_profile_names() + ")");
}

}  // namespace llmbench
