// Every repository path that README.md and docs/ name exists (issue 40: docs/architecture.md
// named 13 paths and a function that no longer existed). A path is a word that starts with one of
// the repository's top-level folders (engine/, kernels/, tools/, tests/, docs/, scripts/,
// queries/, profiles/, cmake/, .ci/) and is not part of a URL or of a longer path; one brace group
// (`chat_template.{h,cpp}`) expands to each name, and a `*` matches as in the shell.
#include <glob.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
const fs::path kRoot = LLMBENCH_SOURCE_DIR;

std::vector<fs::path> documents() {
  std::vector<fs::path> docs = {kRoot / "README.md"};
  for (const auto& e : fs::recursive_directory_iterator(kRoot / "docs"))
    if (e.path().extension() == ".md") docs.push_back(e.path());
  return docs;
}

// `a/{b,c}/d` -> a/b/d, a/c/d (one group).
std::vector<std::string> expand(const std::string& path) {
  const auto open = path.find('{'), close = path.find('}');
  if (open == std::string::npos || close == std::string::npos || close < open) return {path};
  std::vector<std::string> out;
  const std::string inner = path.substr(open + 1, close - open - 1);
  std::size_t from = 0;
  for (std::size_t comma;; from = comma + 1) {
    comma = inner.find(',', from);
    out.push_back(path.substr(0, open) + inner.substr(from, comma - from) + path.substr(close + 1));
    if (comma == std::string::npos) break;
  }
  return out;
}

bool exists(const std::string& rel) {
  const std::string full = (kRoot / rel).string();
  if (rel.find('*') == std::string::npos) return fs::exists(full);
  glob_t g{};
  const bool found = glob(full.c_str(), 0, nullptr, &g) == 0 && g.gl_pathc > 0;
  globfree(&g);
  return found;
}

TEST(DocPaths, EveryRepositoryPathNamedInTheDocsExists) {
  const std::regex path(
      R"((^|[^\w/.:-])((?:engine|kernels|tools|tests|docs|scripts|queries|profiles|cmake|\.ci)/[A-Za-z0-9_./{},*+-]*[A-Za-z0-9_}*/]))");
  int checked = 0;
  for (const fs::path& doc : documents()) {
    std::ifstream in(doc);
    int line_no = 0;
    for (std::string line; std::getline(in, line);) {
      ++line_no;
      for (std::sregex_iterator it(line.begin(), line.end(), path), end; it != end; ++it) {
        std::string p = (*it)[2];
        while (!p.empty() && (p.back() == '.' || p.back() == ',')) p.pop_back();
        for (const std::string& one : expand(p)) {
          ++checked;
          EXPECT_TRUE(exists(one)) << fs::relative(doc, kRoot).string() << ":" << line_no
                                   << " names " << one << ", which does not exist";
        }
      }
    }
  }
  EXPECT_GT(checked, 100);  // the docs name hundreds of paths; none found means a broken scan
}

}  // namespace
