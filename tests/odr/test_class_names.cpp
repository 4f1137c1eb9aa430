// No two files of kernels/, engine/ and tools/ define the same class, struct, union or enum
// name in one namespace (class_scan.h says why: an ODR violation links silently). The scan
// itself is tested on small sources and on a fixture pair that clashes (tests/odr/clash).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/odr/class_scan.h"

namespace llmbench {
namespace {

std::vector<std::string> names(const std::string& source) {
  std::vector<std::string> out;
  for (const ClassDefinition& d : scan_definitions(source, "x.h")) out.push_back(d.name);
  return out;
}

TEST(ClassScan, NamesDefinitionsAtNamespaceScopeOnly) {
  const std::string source = R"cpp(
namespace llmbench {
struct Plain { int a; };
class Derived final : public Base<int, 2> { struct Nested { int b; }; };
template <class T, class = void> struct Tmpl { T t; };
enum class Phase : int { kPrefill, kDecode };
union Bits { float f; unsigned u; };
struct Forward;
struct Outer::Inner { int c; };
template <> struct Tmpl<int> { int d; };
namespace { struct Hidden { int e; }; }
void f() { struct Local { int g; }; Plain p{1}; }
const auto lambda = [] { struct InLambda {}; return 0; };
}  // namespace llmbench
namespace llmbench::cpu { struct Tile { float v[4]; }; }
struct Global { int h; };
)cpp";
  EXPECT_EQ(names(source), (std::vector<std::string>{"llmbench::Plain", "llmbench::Derived",
                                                     "llmbench::Tmpl", "llmbench::Phase",
                                                     "llmbench::Bits", "llmbench::cpu::Tile",
                                                     "Global"}));
}

TEST(ClassScan, CommentsLiteralsAndPreprocessorLinesHoldNoDefinitions) {
  const std::string source = R"cpp(
// struct InComment {
/* struct InBlock { */
#define MACRO struct InMacro { \
  int x; }
namespace llmbench {
const char* a = "struct InString { }";
const char* b = R"x(struct InRaw { } )" )x";
const char c = '{';
const long d = 1'000'000;
struct Real { int y; };
}
)cpp";
  const std::vector<ClassDefinition> defs = scan_definitions(source, "y.h");
  ASSERT_EQ(defs.size(), 1u);
  EXPECT_EQ(defs[0].name, "llmbench::Real");
  EXPECT_EQ(defs[0].line, 11);
}

TEST(ClassScan, OneNameInTwoFilesIsAClash) {
  std::vector<ClassDefinition> defs = scan_definitions("namespace a { struct S {}; }", "one.h");
  for (ClassDefinition& d : scan_definitions("namespace a { class S : B {}; }", "two.cpp"))
    defs.push_back(d);
  for (ClassDefinition& d : scan_definitions("namespace b { struct S {}; }", "three.h"))
    defs.push_back(d);
  EXPECT_EQ(find_clashes(defs), std::vector<std::string>{"a::S: one.h:1, two.cpp:1"});
}

TEST(ClassScan, FindsTheFixturePairThatClashes) {
  const std::vector<std::string> clashes =
      find_clashes(scan_tree(LLMBENCH_SOURCE_DIR "/tests/odr", {"clash"}));
  ASSERT_EQ(clashes.size(), 1u);
  EXPECT_EQ(clashes[0], "llmbench::RequestRecord: clash/left/request_record.h:7, "
                        "clash/right/request_record.h:8");
}

TEST(ClassNames, NoNameIsDefinedTwiceInOneNamespace) {
  const std::vector<ClassDefinition> defs =
      scan_tree(LLMBENCH_SOURCE_DIR, {"kernels", "engine", "tools"});
  EXPECT_GT(defs.size(), 100u);  // the scan reads the tree
  for (const std::string& clash : find_clashes(defs)) ADD_FAILURE() << clash;
}

}  // namespace
}  // namespace llmbench
