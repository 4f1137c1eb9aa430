// Runs the llmbench binary from a test: one scratch directory per test (so ctest -j runs tests
// in parallel without sharing files), stdout and stderr captured, the exit code decoded.
// Header-only; the binary's path and the scratch root come from compile definitions
// LLMBENCH_BIN and LLMBENCH_TEST_SCRATCH (tests/CMakeLists.txt).
#pragma once
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace llmbench_test {

namespace fs = std::filesystem;

struct Result {
  int exit_code;
  std::string out, err;
};

inline fs::path scratch_dir() {
  const auto* info = testing::UnitTest::GetInstance()->current_test_info();
  std::string name = info ? std::string(info->test_suite_name()) + "." + info->name()
                          : std::string("suite");
  std::replace(name.begin(), name.end(), '/', '_');
  fs::path d = fs::path(LLMBENCH_TEST_SCRATCH) / "cli" / name;
  fs::create_directories(d);
  return d;
}

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_file(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

// Runs `llmbench <args>` (shell words) with its output files in `dir`; the roofline cache
// lives there too, so no test reads another's.
inline Result run_llmbench(const std::string& args, const fs::path& dir) {
  fs::create_directories(dir);
  const std::string cmd = "LLMBENCH_CACHE_DIR=" + (dir / "cache").string() + " " LLMBENCH_BIN " " +
                          args + " > " + (dir / "out").string() + " 2> " + (dir / "err").string();
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir / "out"), slurp(dir / "err")};
}

inline Result run_llmbench(const std::string& args) { return run_llmbench(args, scratch_dir()); }

}  // namespace llmbench_test
