// The scan of class_scan.h: a tokenizer that drops what cannot hold a definition (comments,
// literals, preprocessor lines, numbers), then one pass over the tokens with a stack of scopes.
// Each '{' is classified by the statement in front of it: a namespace (named or anonymous), a
// class body (recorded when every enclosing scope is a named namespace), or anything else.
#include "tests/odr/class_scan.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace llmbench {

namespace {

struct Token {
  std::string text;
  int line = 0;
};

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

class Tokenizer {
 public:
  explicit Tokenizer(const std::string& s) : s_(s) {}

  std::vector<Token> run() {
    while (i_ < s_.size()) step();
    return out_;
  }

 private:
  char at(std::size_t k) const { return k < s_.size() ? s_[k] : '\0'; }

  // Advances to `end` (exclusive), counting the newlines passed.
  void skip_to(std::size_t end) {
    end = std::min(end, s_.size());
    line_ += int(std::count(s_.begin() + std::ptrdiff_t(i_), s_.begin() + std::ptrdiff_t(end),
                            '\n'));
    i_ = end;
  }

  void skip_preprocessor_line() {
    std::size_t k = i_;
    while (k < s_.size() && !(s_[k] == '\n' && at(k - 1) != '\\')) ++k;
    skip_to(k);
  }

  // A "..." or '...' literal starting at i_ (the quote).
  void skip_literal() {
    const char quote = s_[i_];
    std::size_t k = i_ + 1;
    while (k < s_.size() && s_[k] != quote && s_[k] != '\n') k += s_[k] == '\\' ? 2 : 1;
    skip_to(k + 1);
  }

  // R"delim( ... )delim" starting at i_ (the quote).
  void skip_raw_string() {
    const std::size_t open = s_.find('(', i_);
    if (open == std::string::npos) return skip_to(s_.size());
    const std::string close = ")" + s_.substr(i_ + 1, open - i_ - 1) + "\"";
    const std::size_t end = s_.find(close, open);
    skip_to(end == std::string::npos ? s_.size() : end + close.size());
  }

  void step() {
    const char c = s_[i_];
    if (c == '\n') {
      at_line_start_ = true;
      return skip_to(i_ + 1);
    }
    if (std::isspace(static_cast<unsigned char>(c))) return skip_to(i_ + 1);
    if (c == '#' && at_line_start_) return skip_preprocessor_line();
    at_line_start_ = false;
    if (c == '/' && at(i_ + 1) == '/') return skip_to(s_.find('\n', i_));
    if (c == '/' && at(i_ + 1) == '*') {
      const std::size_t end = s_.find("*/", i_ + 2);
      return skip_to(end == std::string::npos ? s_.size() : end + 2);
    }
    if (c == '"' || c == '\'') return skip_literal();
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && std::isdigit(static_cast<unsigned char>(at(i_ + 1))))) {
      std::size_t k = i_;  // digits, separators (1'000), suffixes, exponents (1e-5)
      while (ident_char(at(k)) || at(k) == '.' || at(k) == '\'' ||
             ((at(k) == '+' || at(k) == '-') && std::strchr("eEpP", at(k - 1))))
        ++k;
      return skip_to(k);
    }
    if (ident_char(c)) {
      std::size_t k = i_;
      while (ident_char(at(k))) ++k;
      const std::string word = s_.substr(i_, k - i_);
      skip_to(k);
      if (at(i_) == '"' && !word.empty() && word.back() == 'R') return skip_raw_string();
      if (at(i_) == '"' || at(i_) == '\'') return skip_literal();  // u8"...", L'x'
      out_.push_back({word, line_});
      return;
    }
    if (c == ':' && at(i_ + 1) == ':') {
      out_.push_back({"::", line_});
      return skip_to(i_ + 2);
    }
    out_.push_back({std::string(1, c), line_});
    skip_to(i_ + 1);
  }

  const std::string& s_;
  std::size_t i_ = 0;
  int line_ = 1;
  bool at_line_start_ = true;
  std::vector<Token> out_;
};

enum class ScopeKind { kNamespace, kAnonymous, kClass, kOther };

struct Scope {
  ScopeKind kind = ScopeKind::kOther;
  std::string name;  // kNamespace: "a" or "a::b"
};

// Skips a balanced <...> starting at `k` (which is '<'); returns the index after it.
std::size_t skip_angles(const std::vector<Token>& t, std::size_t k, std::size_t end) {
  int depth = 0;
  for (; k < end; ++k) {
    if (t[k].text == "<") ++depth;
    if (t[k].text == ">" && --depth == 0) return k + 1;
  }
  return end;
}

// Skips a balanced (...) or [...] starting at `k`; returns the index after it.
std::size_t skip_group(const std::vector<Token>& t, std::size_t k, std::size_t end) {
  const std::string open = t[k].text, close = open == "(" ? ")" : "]";
  int depth = 0;
  for (; k < end; ++k) {
    if (t[k].text == open) ++depth;
    if (t[k].text == close && --depth == 0) return k + 1;
  }
  return end;
}

// What the statement t[begin, end) in front of a '{' opens. `defined` gets the class's name
// when the statement defines a new namespace-scope-able class (the caller checks the scope).
Scope classify(const std::vector<Token>& t, std::size_t begin, std::size_t end,
               std::string& defined, int& line) {
  defined.clear();
  std::size_t k = begin;
  // Leading template parameter lists, attributes and specifiers.
  while (k < end) {
    if (t[k].text == "template" && k + 1 < end && t[k + 1].text == "<") {
      k = skip_angles(t, k + 1, end);
    } else if (t[k].text == "[" && k + 1 < end && t[k + 1].text == "[") {
      k = skip_group(t, k, end);
    } else if (t[k].text == "inline" || t[k].text == "export" || t[k].text == "typedef") {
      ++k;
    } else {
      break;
    }
  }
  if (k == end) return {};
  if (t[k].text == "extern" && k + 1 == end) return {ScopeKind::kNamespace, ""};  // extern "C"
  if (t[k].text == "namespace") {
    std::string name;
    for (std::size_t j = k + 1; j < end; ++j) name += t[j].text;
    return name.empty() ? Scope{ScopeKind::kAnonymous, ""} : Scope{ScopeKind::kNamespace, name};
  }
  const std::string& key = t[k].text;
  if (key != "class" && key != "struct" && key != "union" && key != "enum") return {};
  ++k;
  if (key == "enum" && k < end && (t[k].text == "class" || t[k].text == "struct")) ++k;
  // Attributes between the key and the name: alignas(...), [[...]], __attribute__((...)).
  while (k < end && (t[k].text == "alignas" || t[k].text == "__attribute__" || t[k].text == "[")) {
    if (t[k].text != "[") ++k;
    if (k < end && (t[k].text == "(" || t[k].text == "[")) k = skip_group(t, k, end);
  }
  if (k == end || !ident_char(t[k].text[0])) return {ScopeKind::kClass, ""};  // anonymous
  const Token& name = t[k++];
  if (k < end && (t[k].text == "::" || t[k].text == "<")) return {ScopeKind::kClass, ""};
  if (k < end && t[k].text == "final") ++k;
  if (k < end && t[k].text != ":") return {};  // `struct stat st{...}`, a function's body...
  defined = name.text;
  line = name.line;
  return {ScopeKind::kClass, ""};
}

}  // namespace

std::vector<ClassDefinition> scan_definitions(const std::string& source, const std::string& file) {
  const std::vector<Token> t = Tokenizer(source).run();
  std::vector<Scope> scopes;
  std::vector<ClassDefinition> found;
  std::size_t statement = 0;  // first token of the current statement
  for (std::size_t i = 0; i < t.size(); ++i) {
    const std::string& x = t[i].text;
    if (x == "{") {
      std::string defined;
      int line = 0;
      const Scope scope = classify(t, statement, i, defined, line);
      const bool at_namespace_scope =
          std::all_of(scopes.begin(), scopes.end(),
                      [](const Scope& s) { return s.kind == ScopeKind::kNamespace; });
      if (!defined.empty() && at_namespace_scope) {
        std::string qualified;
        for (const Scope& s : scopes)
          if (!s.name.empty()) qualified += s.name + "::";
        found.push_back({qualified + defined, file, line});
      }
      scopes.push_back(scope);
      statement = i + 1;
    } else if (x == "}") {
      if (!scopes.empty()) scopes.pop_back();
      statement = i + 1;
    } else if (x == ";") {
      statement = i + 1;
    } else if (x == ":" && i > 0 &&
               (t[i - 1].text == "public" || t[i - 1].text == "private" ||
                t[i - 1].text == "protected")) {
      statement = i + 1;  // an access label starts the next member
    }
  }
  return found;
}

std::vector<ClassDefinition> scan_tree(const std::string& root,
                                       const std::vector<std::string>& folders) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const std::string& folder : folders)
    for (const auto& e : fs::recursive_directory_iterator(fs::path(root) / folder)) {
      const std::string ext = e.path().extension().string();
      if (e.is_regular_file() && (ext == ".h" || ext == ".cpp" || ext == ".cuh" || ext == ".cu"))
        files.push_back(fs::relative(e.path(), root).generic_string());
    }
  std::sort(files.begin(), files.end());
  std::vector<ClassDefinition> all;
  for (const std::string& f : files) {
    std::ifstream in(fs::path(root) / f, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    for (ClassDefinition& d : scan_definitions(text.str(), f)) all.push_back(std::move(d));
  }
  return all;
}

std::vector<std::string> find_clashes(const std::vector<ClassDefinition>& definitions) {
  std::map<std::string, std::vector<const ClassDefinition*>> by_name;
  for (const ClassDefinition& d : definitions) by_name[d.name].push_back(&d);
  std::vector<std::string> clashes;
  for (const auto& [name, defs] : by_name) {
    std::set<std::string> files;
    for (const ClassDefinition* d : defs) files.insert(d->file);
    if (files.size() < 2) continue;  // one file (#if branches) is one definition
    std::string line = name + ":";
    for (const ClassDefinition* d : defs)
      line += " " + d->file + ":" + std::to_string(d->line) + (d == defs.back() ? "" : ",");
    clashes.push_back(line);
  }
  return clashes;
}

}  // namespace llmbench
