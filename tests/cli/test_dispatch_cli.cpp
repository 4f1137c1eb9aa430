// The CPU kernel paths end to end (#45): `roofline --dispatch-only` prints and caches each
// decode op class's path; a run reads that table and stores the paths on its run row
// (run.cpu_isa); LLMBENCH_CPU_ISA forces a path (said on stderr and stored), falls back below a
// path the CPU lacks with one note, and a bad value is one error line with exit code 2.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/decode_dispatch.h"
#include "tests/cli/llmbench_process.h"

namespace {

using llmbench_test::Result;
using llmbench_test::slurp;
using nlohmann::json;
namespace fs = std::filesystem;

// `llmbench <args>` with LLMBENCH_CPU_ISA set to `isa` ("" unsets it) and the cache in dir.
Result run_with_isa(const std::string& isa, const std::string& args, const fs::path& dir) {
  fs::create_directories(dir);
  const std::string env = isa.empty() ? "env -u LLMBENCH_CPU_ISA" : "env LLMBENCH_CPU_ISA=" + isa;
  const std::string cmd = env + " LLMBENCH_CACHE_DIR=" + (dir / "cache").string() +
                          " " LLMBENCH_BIN " " + args + " > " + (dir / "out").string() + " 2> " +
                          (dir / "err").string();
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir / "out"), slurp(dir / "err")};
}

const char* kRun =
    "run --model tiny --batch 1 --prompt-len 4 --max-new-tokens 3 --warmup 0 --repeat 1 "
    "--threads 1 --trace off --peak-bw-gbps 10 --peak-tflops 1 --db ";

// run.cpu_isa of the database's only run.
std::string stored_isa(const fs::path& dir) {
  const Result q = run_with_isa(
      "", "query " + (dir / "r.db").string() + " \"SELECT cpu_isa FROM run\" --format json",
      dir / "q");
  EXPECT_EQ(q.exit_code, 0) << q.err;
  const json rows = json::parse(q.out);
  return rows.at(0).at("cpu_isa").get<std::string>();
}

TEST(DispatchCli, RooflinePrintsAndCachesEachClassAndARunStoresIt) {
  const fs::path dir = llmbench_test::scratch_dir();
  fs::remove_all(dir);
  const Result r = run_with_isa("", "roofline --dispatch-only --model tiny --threads 1", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (int c = 0; c < llmbench::cpu::kDecodeClasses; ++c)
    EXPECT_NE(r.out.find(llmbench::cpu::decode_class_name(c)), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cached in"), std::string::npos) << r.out;
  const json cache = json::parse(slurp(dir / "cache" / "roofline.json"));
  std::string key;
  for (const auto& [k, v] : cache.items())
    if (k.rfind("cpu-dispatch|", 0) == 0) key = k;
  ASSERT_NE(key, "") << cache.dump();
  EXPECT_NE(key.find("|threads=1"), std::string::npos) << key;
  const std::string sig = "dim=64 q=64 kv=32 ffn=160 layers=2";
  ASSERT_TRUE(cache[key].contains(sig)) << cache.dump();

  if (!llmbench::cpu::cpu_isa().avx2) GTEST_SKIP() << "portable is this CPU's only path";
  // The table says portable for batch-1 fp32 decode: the run takes it, says so and stores it.
  json planted = cache;
  planted[key][sig]["classes"]["decode_fp32_m1"]["path"] = "portable";
  planted[key][sig]["busy"] = false;
  llmbench_test::write_file(dir / "cache" / "roofline.json", planted.dump(2));
  const Result run = run_with_isa("", kRun + (dir / "r.db").string(), dir);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("CPU kernels:"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("decode_fp32_m1 portable"), std::string::npos) << run.err;
  EXPECT_NE(stored_isa(dir).find("decode_fp32_m1 portable"), std::string::npos);
}

TEST(DispatchCli, AForcedIsaIsSaidAndStoredAndOverridesTheTable) {
  const fs::path dir = llmbench_test::scratch_dir();
  fs::remove_all(dir);
  const Result run = run_with_isa("portable", kRun + (dir / "r.db").string(), dir);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("CPU kernels: portable for every op class (forced by LLMBENCH_CPU_ISA)"),
            std::string::npos)
      << run.err;
  EXPECT_EQ(stored_isa(dir), "portable");
  const Result roof = run_with_isa("avx2", "roofline --dispatch-only --model tiny", dir / "roof");
  ASSERT_EQ(roof.exit_code, 0) << roof.err;
  EXPECT_NE(roof.out.find("forced by LLMBENCH_CPU_ISA"), std::string::npos) << roof.out;
  EXPECT_FALSE(fs::exists(dir / "roof" / "cache" / "roofline.json"));
}

TEST(DispatchCli, APathTheCpuLacksFallsBackWithOneNote) {
  if (llmbench::cpu::detect_cpu_features().avx512) GTEST_SKIP() << "this CPU has AVX-512";
  const fs::path dir = llmbench_test::scratch_dir();
  const Result r = run_with_isa("avx512", "models --format csv", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, std::string("note: LLMBENCH_CPU_ISA=avx512: this CPU lacks AVX-512 (F/BW/VL/DQ "
                               "with FMA and F16C); the CPU kernels take the ") +
                       (llmbench::cpu::detect_cpu_features().avx2 ? "avx2" : "portable") +
                       " path\n");
}

TEST(DispatchCli, ABadValueIsOneErrorLineAndExitTwo) {
  const fs::path dir = llmbench_test::scratch_dir();
  for (const char* bad : {"avx", "AVX2", "native"}) {
    const Result r = run_with_isa(bad, "models", dir);
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_EQ(r.err, "error: LLMBENCH_CPU_ISA='" + std::string(bad) +
                         "': expected auto, avx512, avx2 or portable\n");
    EXPECT_EQ(r.out, "");
  }
}

}  // namespace
