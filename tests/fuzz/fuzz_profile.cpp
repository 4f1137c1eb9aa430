// A deterministic fuzz-style test of sweep profiles: the bundled profiles and a hand-written
// one are mutated at random (a value replaced by one of the wrong TOML type, an extreme number,
// a long or repeated list; unknown, duplicate or flag-less keys; tables and nested arrays; the
// text truncated or bit-flipped) and taken the whole way `llmbench sweep` takes them before
// anything runs: parse_profile, apply_profile onto the real `run` flags, make_plan. Each
// outcome must be success or llmbench::Error: never a crash, a sanitizer report or another
// exception. ctest runs it plain and against a sanitized copy of llmbench_run.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "tests/fuzz/fuzz_rng.h"
#include "tools/run/bundled_profiles.h"
#include "tools/run/run_options.h"

namespace {

using namespace llmbench_test;
namespace fs = std::filesystem;

constexpr int kIterations = 3000;
constexpr std::uint64_t kSeed = 0x7011;

enum class Mutation { kValue, kKey, kStructure, kTruncate, kBitFlips, kCount };
const char* const kNames[] = {"value", "key", "structure", "truncate", "bit flips"};

const std::vector<std::string> kKeys = {
    "model", "backend", "dtype", "batch", "prompt-len", "max-new-tokens", "warmup", "repeat",
    "threads", "seed", "distinct-prompts", "format", "peak-bw-gbps", "peak-tflops", "trace",
    "quiet", "qkv", "kv-cache", "kv-cache-block", "logits", "variants", "timer", "shard",
    "max-cases", "slo-ttft-p99-ms", "slo-tpot-p99-ms", "description", "resume", "config",
    "help", "no-such-key", "-x", "", "batch.x"};
// No value here does I/O beyond a stat: no @files, no paths of real checkpoints.
const std::vector<std::string> kValues = {
    "1", "0", "-1", "2147483647", "2147483648", "-9223372036854775808", "9223372036854775807",
    "1e400", "inf", "-inf", "nan", "0.5", "1e-300", "true", "false", "\"\"", "\"tiny\"",
    "\"tiny,tiny\"", "\"small\"", "\"nosuch\"", "\"/\"", "\".\"", "\"cpu\"", "\"cuda\"",
    "\"fp32\"", "\"fp8\"", "\"naive\"", "\"fast,naive\"", "\"permute\"", "\"paged\"", "\"all\"",
    "\"1/2\"", "\"3/2\"", "\"0/0\"", "\"1,2,3\"", "\"4,4\"", "[1, 2, 3]", "[1, 1]", "[]",
    "[[1]]", "[1, \"x\"]", "[true]", "[1.5]", "[\"tiny\", \"small\"]", "{ a = 1 }",
    "1979-05-27", "\"\\u0000\"", "'''x'''", "[" + std::string(200, '1') + "]"};

std::string base_profile(FuzzRng& rng) {
  std::vector<std::string> texts = {
      "description = \"fuzz base\"\nmodel = \"tiny\"\nbatch = [1, 2]\nprompt-len = 8\n"
      "max-new-tokens = [1, 2]\nrepeat = 1\nwarmup = 0\ntrace = \"off\"\n"
      "peak-bw-gbps = 20\npeak-tflops = 0.2\nqkv = [\"fused\", \"permute\"]\n"};
  for (const auto& f : llmbench::embedded_profile_files()) texts.emplace_back(f.text);
  return rng.pick(texts);
}

std::string mutate(FuzzRng& rng, Mutation kind) {
  std::string text = base_profile(rng);
  const int n = 1 + int(rng.below(3));
  switch (kind) {
    case Mutation::kValue:
      for (int i = 0; i < n; ++i) text += rng.pick(kKeys) + " = " + rng.pick(kValues) + "\n";
      break;
    case Mutation::kKey:
      for (int i = 0; i < n; ++i)
        text += rng.pick(kKeys) + (rng.percent(50) ? " = 1\n" : " = \"x\"\n");
      break;
    case Mutation::kStructure: {
      const std::vector<std::string> pieces = {"[table]\nbatch = 1\n", "[[arr]]\nx = 1\n",
                                               "batch = [[1, 2], [3]]\n", "= 1\n", "x =\n",
                                               "\"quoted key\" = 1\n", "a.b.c = 1\n",
                                               "batch = [1,\n2,\n3]\n", "\xff\xfe = 1\n"};
      text = rng.percent(50) ? rng.pick(pieces) + text : text + rng.pick(pieces);
      break;
    }
    case Mutation::kTruncate: text.resize(rng.below(text.size())); break;
    case Mutation::kBitFlips:
      for (int i = 0; i < 2 * n; ++i) {
        const std::size_t at = rng.below(text.size());
        text[at] = char(text[at] ^ char(1u << rng.below(8)));
      }
      break;
    default: break;
  }
  return text;
}

TEST(FuzzProfile, MutatedProfilesPlanOrFailCleanly) {
  const fs::path dir = fs::path(LLMBENCH_TEST_SCRATCH) / LLMBENCH_FUZZ_GROUP;
  fs::create_directories(dir);
  const fs::path file = dir / "profile.toml";
  FuzzRng rng(kSeed, "profile");
  std::map<Mutation, std::pair<int, int>> counts;  // failed cleanly, planned
  for (int iter = 0; iter < kIterations; ++iter) {
    const auto kind = Mutation(rng.below(std::uint64_t(Mutation::kCount)));
    std::ofstream(file, std::ios::binary | std::ios::trunc) << mutate(rng, kind);
    bool ok = false;
    const std::string problem = fuzz_outcome([&] {
      CLI::App app;
      llmbench::RunOptions opts;
      llmbench::add_run_flags(&app, opts);
      opts.config = file.string();
      opts.db = (dir / "never_written.db").string();
      const llmbench::AppliedProfile profile = llmbench::apply_profile(&app, opts);
      opts.given = profile.applied;
      const llmbench::RunPlan plan = llmbench::make_plan_attributed(opts, &profile);
      ASSERT_LE(plan.cases.size(), std::size_t(llmbench::kDefaultMaxCases));
    }, ok);
    if (!problem.empty()) ADD_FAILURE() << "iteration " << iter << " (" << kNames[int(kind)] << "): " << problem;
    ++(ok ? counts[kind].second : counts[kind].first);
  }
  for (int k = 0; k < int(Mutation::kCount); ++k) {
    const auto [failed, planned] = counts[Mutation(k)];
    std::printf("%-10s %5d failed cleanly, %5d planned\n", kNames[k], failed, planned);
    EXPECT_GT(failed, 0) << kNames[k];
  }
  EXPECT_FALSE(fs::exists(dir / "never_written.db"));
}

}  // namespace
