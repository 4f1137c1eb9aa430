// A deterministic fuzz-style test of the Chrome trace reader: the Kineto-shaped fixture
// (tests/import/chrome_fixture.h) is mutated at random (a field replaced by a value of the wrong
// type or an extreme number, an unknown or missing phase, times at the ends of the int64 ns
// range, args nested around the depth limit, events duplicated or dropped, the text truncated
// or bit-flipped, the bare-array form) and read with read_chrome_trace, nesting and flow binding
// included. Each outcome must be success or llmbench::Error: never a crash, a sanitizer report
// or another exception. ctest runs it plain and built with AddressSanitizer + UBSan against
// sanitized copies of llmbench_trace_io and llmbench_store (tests/CMakeLists.txt).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "tests/fuzz/fuzz_rng.h"
#include "tests/fuzz/fuzz_tally.h"
#include "tests/import/chrome_fixture.h"
#include "tools/trace_io/import_chrome.h"

namespace {

using namespace llmbench_test;
namespace fs = std::filesystem;

constexpr int kIterations = 2500;
constexpr std::uint64_t kSeed = 0xC4307E;

enum class Mutation { kField, kPhase, kTimes, kNesting, kEvents, kTruncate, kBitFlips,
                      kArrayForm, kCount };
const char* const kNames[] = {"field", "phase", "times", "nesting", "events", "truncate",
                              "bit flips", "array form"};

std::vector<json> weird_values() {
  return {nullptr, true, false, "", "x", "12.5", "1e400", "-0", "nan", -1, 0, 1,
          2147483647, -9223372036854775807LL - 1, 9223372036854775807LL,
          18446744073709551615ULL, 9.2e15, -9.2e15, 9.3e15, 1e300, -1e300, 0.0004, -0.0,
          json::array(), json{1, 2}, json::object(), json{{"a", json{{"b", 1}}}},
          json{{"correlation", 18446744073709551615ULL}, {"bytes", -5}, {"flops", "x"}}};
}

// Times at the ends of the range trace processor accepts (|us| < 9.2e15) and beyond.
std::vector<json> extreme_times() {
  return {9.2e15, -9.2e15, 9.19999e15, -9.19999e15, 9223372036854775807LL,
          -9223372036854775807LL - 1, 4.6e15, -4.6e15, 1e-9, "9.2e15", "-9.2e15", 0};
}

json nested(int depth) {
  json v = 1;
  for (int i = 0; i < depth; ++i) v = (i % 2) ? json{{"k", v}} : json::array({v});
  return v;
}

std::string mutate(FuzzRng& rng, Mutation kind) {
  json trace = kineto_trace();
  json& events = trace["traceEvents"];
  static const std::vector<json> weird = weird_values();
  static const std::vector<json> times = extreme_times();
  static const std::vector<std::string> fields = {"ph", "ts", "dur", "pid", "tid", "name", "cat",
                                                  "args", "id", "id2", "bind_id", "bp", "s",
                                                  "flow_out", "flow_in"};
  static const std::vector<json> phases = {"X", "B", "E", "i", "I", "R", "C", "M", "s", "t", "f",
                                           "P", "b", "e", "n", "O", "", "XX", 88, nullptr};
  auto event = [&]() -> json& { return events[rng.below(events.size())]; };
  const int n = 1 + int(rng.below(4));
  switch (kind) {
    case Mutation::kField:
      for (int i = 0; i < n; ++i) {
        json& e = event();
        const std::string& f = rng.pick(fields);
        if (rng.percent(25)) e.erase(f);
        else e[f] = rng.pick(weird);
      }
      break;
    case Mutation::kPhase:
      for (int i = 0; i < n; ++i) event()["ph"] = rng.pick(phases);
      break;
    case Mutation::kTimes:
      for (int i = 0; i < n; ++i) event()[rng.percent(50) ? "ts" : "dur"] = rng.pick(times);
      break;
    case Mutation::kNesting:  // around the reader's limit of 128 levels
      event()[rng.percent(80) ? "args" : "name"] = nested(int(120 + rng.below(16)));
      if (rng.percent(20)) trace["meta"] = nested(int(120 + rng.below(16)));
      break;
    case Mutation::kEvents:
      for (int i = 0; i < n; ++i) {
        if (rng.percent(50) && !events.empty()) events.erase(rng.below(events.size()));
        else events.push_back(event());
      }
      break;
    case Mutation::kArrayForm: {
      json array = events;
      if (rng.percent(50) && !array.empty()) array[rng.below(array.size())] = rng.pick(weird);
      return array.dump();
    }
    default: break;
  }
  std::string text = trace.dump();
  if (kind == Mutation::kTruncate) text.resize(rng.below(text.size()));
  if (kind == Mutation::kBitFlips)
    for (int i = 0; i < n * 2; ++i) {
      const std::size_t at = rng.below(text.size());
      text[at] = char(text[at] ^ char(1u << rng.below(8)));
    }
  return text;
}

TEST(FuzzChromeImport, MutatedTracesImportOrFailCleanly) {
  const fs::path dir = fs::path(LLMBENCH_TEST_SCRATCH) / LLMBENCH_FUZZ_GROUP;
  fs::create_directories(dir);
  const fs::path file = dir / "trace.json";
  FuzzRng rng(kSeed, "chrome");
  FuzzTally<Mutation> tally;
  for (int iter = 0; iter < kIterations; ++iter) {
    const auto kind = Mutation(rng.below(std::uint64_t(Mutation::kCount)));
    const std::string text = mutate(rng, kind);
    std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
    bool ok = false;
    const std::string problem = fuzz_outcome([&] {
      expect_valid_slices(llmbench::read_chrome_trace(file.string()), iter);
    }, ok);
    tally.add(iter, kind, kNames[int(kind)], problem, ok);
  }
  tally.report(kNames);
}

}  // namespace
