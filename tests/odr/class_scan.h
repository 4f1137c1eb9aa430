// Finds the classes, structs, unions and enums that C++ sources define at namespace scope, by
// fully qualified name, so a test can fail when two files define the same name: two libraries
// linked into one binary with different definitions of `llmbench::RequestRecord` is an ODR
// violation the linker accepts silently (it keeps one copy of each inline member).
// A token-level scan, not a compiler: comments, string and character literals (raw strings
// too) and preprocessor lines are skipped, every brace is matched, and a definition counts only
// when every enclosing scope is a named namespace (anonymous namespaces, class bodies and
// function bodies make a name local). Template specialisations (`struct hash<X> {`) and
// out-of-line nested classes (`struct Outer::Inner {`) are not new names and are skipped.
#pragma once
#include <string>
#include <vector>

namespace llmbench {

struct ClassDefinition {
  std::string name;  // fully qualified, e.g. "llmbench::cpu::Tile"
  std::string file;  // as given to scan_definitions
  int line = 0;
};

// The namespace-scope class, struct, union and enum definitions in `source`.
std::vector<ClassDefinition> scan_definitions(const std::string& source, const std::string& file);

// Every definition under `root` of the files below each of `folders` (*.h, *.cpp, *.cuh, *.cu),
// files in sorted order; paths relative to root.
std::vector<ClassDefinition> scan_tree(const std::string& root,
                                       const std::vector<std::string>& folders);

// One line per name defined in more than one file: "NAME: file:line, file:line".
std::vector<std::string> find_clashes(const std::vector<ClassDefinition>& definitions);

}  // namespace llmbench
