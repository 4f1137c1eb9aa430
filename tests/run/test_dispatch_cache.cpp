// The decode op classes' table in the roofline cache (tools/run/dispatch_cache.h) and its
// measurement (engine/bench/decode_dispatch_probe.h): the key names the CPU model, its ISA flags
// and the threads; an entry round-trips to the table it was measured as; a malformed entry, a
// table of another CPU or of other shapes is not used; a run installs the cached table, or
// measures and caches one on first use; a forced LLMBENCH_CPU_ISA (the "portable." run of this
// test) skips the table and writes nothing. No timing is asserted: only which path the
// measurement names, and that it is one this CPU has.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "engine/model/config.h"
#include "engine/model/cpu_backend.h"
#include "kernels/cpu/decode_dispatch.h"
#include "tools/run/dispatch_cache.h"
#include "tools/run/peaks_cache.h"

namespace llmbench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A fresh cache directory for the test, as LLMBENCH_CACHE_DIR; the process's decode table is
// restored when the test ends.
struct Scratch {
  fs::path dir;
  cpu::DecodeTable saved = cpu::decode_table();
  Scratch() {
    const auto* info = testing::UnitTest::GetInstance()->current_test_info();
    dir = fs::path(LLMBENCH_TEST_SCRATCH) / "dispatch_cache" / info->name();
    fs::remove_all(dir);
    fs::create_directories(dir);
    setenv("LLMBENCH_CACHE_DIR", dir.c_str(), 1);
  }
  ~Scratch() { cpu::set_decode_table(saved); }
  void write(const json& cache) const { std::ofstream(dir / "roofline.json") << cache.dump(2); }
  json read() const { return read_roofline_cache(); }
};

const ModelConfig& tiny() { return *find_preset("tiny"); }

// Every class names `p`, except `off` which names `off_path`.
json entry_all(const char* p, int off = -1, const char* off_path = "") {
  json classes = json::object();
  for (int c = 0; c < cpu::kDecodeClasses; ++c)
    classes[cpu::decode_class_name(c)] = {{"path", c == off ? off_path : p}};
  return {{"measured_at", "2026-11-28T07:00:00Z"}, {"busy", false}, {"classes", classes}};
}

TEST(DispatchCache, KeyNamesTheCpuItsFlagsAndTheThreads) {
  const std::string k = dispatch_cache_key(2);
  EXPECT_EQ(k, "cpu-dispatch|" + cpu_model_name() + "|" + cpu::cpu_feature_flags() + "|threads=2");
  EXPECT_NE(k, dispatch_cache_key(1));
  EXPECT_NE(cpu::cpu_feature_flags().find(cpu::detect_cpu_features().avx2 ? "avx2" : "baseline"),
            std::string::npos);
}

TEST(DispatchCache, EntryRoundTripsToTheMeasuredTable) {
  const DispatchMeasurement m = measure_decode_dispatch(decode_shapes(tiny()), 2);
  ASSERT_EQ(m.classes.size(), std::size_t(cpu::kDecodeClasses));
  const std::optional<cpu::DecodeTable> t = dispatch_table(dispatch_entry(m));
  ASSERT_TRUE(t);
  for (const ClassTiming& ct : m.classes) {
    const std::vector<cpu::IsaPath> cand =
        cpu::decode_candidates(cpu::cpu_isa(), cpu::decode_class_dtype(ct.cls));
    EXPECT_NE(std::find(cand.begin(), cand.end(), ct.winner), cand.end());
    EXPECT_EQ((*t)[ct.cls], ct.winner) << cpu::decode_class_name(ct.cls);
    EXPECT_EQ(ct.paths.size(), cand.size());
  }
  EXPECT_GT(m.seconds, 0.0);
}

TEST(DispatchCache, MalformedEntriesGiveNoTable) {
  EXPECT_FALSE(dispatch_table(json::array()));
  EXPECT_FALSE(dispatch_table(json{{"classes", 3}}));
  EXPECT_FALSE(dispatch_table(entry_all("avx2", 4, "avx1024")));
  json missing = entry_all("portable");
  missing["classes"].erase("decode_int4_m2_8");
  EXPECT_FALSE(dispatch_table(missing));
  const auto t = dispatch_table(entry_all("portable", 0, "avx2"));
  ASSERT_TRUE(t);
  EXPECT_EQ((*t)[0], cpu::IsaPath::kAvx2);
  EXPECT_EQ((*t)[1], cpu::IsaPath::kPortable);
}

TEST(DispatchCache, ARunInstallsTheTableCachedForThisCpuAndShapes) {
  if (cpu::cpu_isa_forced()) GTEST_SKIP() << "LLMBENCH_CPU_ISA forces the paths";
  if (!cpu::cpu_isa().avx2) GTEST_SKIP() << "portable is this CPU's only path";
  Scratch s;
  const int fp32_m1 = cpu::decode_class_index(DType::kFp32, 1);
  s.write({{dispatch_cache_key(1), {{decode_shapes(tiny()).signature,
                                     entry_all("avx2", fp32_m1, "portable")}}}});
  const std::string line = install_cpu_dispatch(tiny(), 1, /*may_measure=*/false);
  EXPECT_NE(line.find("measured on 2026-11-28T07:00:00Z"), std::string::npos) << line;
  EXPECT_EQ(cpu::decode_path(DType::kFp32, 1), cpu::IsaPath::kPortable);
  EXPECT_EQ(cpu::decode_path(DType::kFp32, 4), cpu::IsaPath::kAvx2);
  EXPECT_NE(cpu::cpu_dispatch_description().find("decode_fp32_m1 portable"), std::string::npos);
}

TEST(DispatchCache, AnotherCpuOrOtherShapesAreNotUsed) {
  if (cpu::cpu_isa_forced()) GTEST_SKIP() << "LLMBENCH_CPU_ISA forces the paths";
  Scratch s;
  const std::string sig = decode_shapes(tiny()).signature;
  s.write({{"cpu-dispatch|Another CPU|avx2 fma f16c|threads=1", {{sig, entry_all("portable")}}},
           {dispatch_cache_key(2), {{sig, entry_all("portable")}}},
           {dispatch_cache_key(1),
            {{decode_shapes(*find_preset("small")).signature, entry_all("portable")}}}});
  const std::string line = install_cpu_dispatch(tiny(), 1, /*may_measure=*/false);
  EXPECT_NE(line.find("the widest path for every op class"), std::string::npos) << line;
  EXPECT_EQ(cpu::decode_table(), cpu::DecodeTable{});
  EXPECT_EQ(cpu::cpu_dispatch_description(), cpu::cpu_isa_name());
}

TEST(DispatchCache, FirstUseMeasuresAndCachesThenLaterRunsReadIt) {
  if (cpu::cpu_isa_forced()) GTEST_SKIP() << "LLMBENCH_CPU_ISA forces the paths";
  Scratch s;
  const std::string first = install_cpu_dispatch(tiny(), 1, /*may_measure=*/true);
  EXPECT_NE(first.find("measured now"), std::string::npos) << first;
  const json cache = s.read();
  const std::string sig = decode_shapes(tiny()).signature;
  ASSERT_TRUE(cache.contains(dispatch_cache_key(1))) << cache.dump();
  ASSERT_TRUE(cache[dispatch_cache_key(1)].contains(sig)) << cache.dump();
  const auto t = dispatch_table(cache[dispatch_cache_key(1)][sig]);
  ASSERT_TRUE(t);
  EXPECT_EQ(cpu::decode_table(), *t);
  // The next run reads it (unless the first one ran on a busy machine and this one is quiet).
  const bool busy_then = cache[dispatch_cache_key(1)][sig].value("busy", false);
  const std::string second = install_cpu_dispatch(tiny(), 1, /*may_measure=*/!busy_then);
  EXPECT_NE(second.find("measured on"), std::string::npos) << second;
  // Another model's table sits beside the first under the same key.
  ModelConfig wider = tiny();
  wider.ffn_dim = 192;
  measure_and_cache_dispatch(wider, 1);
  EXPECT_EQ(s.read()[dispatch_cache_key(1)].size(), 2u);
}

TEST(DispatchCache, AForcedIsaSkipsTheTableAndMeasuresNothing) {
  if (!cpu::cpu_isa_forced()) GTEST_SKIP() << "run as portable.DispatchCache.* (forced)";
  Scratch s;
  const std::string line = install_cpu_dispatch(tiny(), 1, /*may_measure=*/true);
  EXPECT_NE(line.find("forced by LLMBENCH_CPU_ISA"), std::string::npos) << line;
  EXPECT_FALSE(fs::exists(s.dir / "roofline.json"));
  EXPECT_EQ(cpu::cpu_dispatch_description(), cpu::cpu_isa_name());
}

}  // namespace
}  // namespace llmbench
