// Sharding and merging at the library level: shards partition the plan, merge covers every
// table of the store and renumbers ids without collisions.
#include <gtest/gtest.h>

#include <filesystem>

#include "engine/model/backend_factory.h"
#include "kernels/common/error.h"
#include "tools/store/case_key.h"
#include "tools/store/merge.h"
#include "tools/run/run_plan.h"
#include "tools/store/store.h"

namespace llmbench {
namespace {

RunOptions options(const std::string& shard) {
  RunOptions o;
  o.model = "tiny";
  o.backend = "cpu";
  o.batch = "1,2,3";
  o.prompt_len = "8,16";
  o.max_new_tokens = "1,4";
  o.shard = shard;
  return o;
}

TEST(Shard, ShardsPartitionThePlanDeterministically) {
  const RunPlan all = make_plan(options(""));
  ASSERT_EQ(all.cases.size(), 12u);
  std::vector<int> seen(all.cases.size(), 0);
  for (int k = 1; k <= 5; ++k) {
    const RunPlan p = make_plan(options(std::to_string(k) + "/5"));
    EXPECT_EQ(make_plan(options(std::to_string(k) + "/5")).case_index, p.case_index);
    for (std::size_t i = 0; i < p.cases.size(); ++i) {
      const int index = p.case_index[i];
      ++seen[std::size_t(index)];
      EXPECT_EQ(case_key(p.cases[i]), case_key(all.cases[std::size_t(index)]));
    }
  }
  for (int n : seen) EXPECT_EQ(n, 1);
}

TEST(Shard, RejectsMalformedShards) {
  for (const char* bad : {"0/2", "3/2", "1", "a/b", "1/0", "/2"})
    EXPECT_THROW(make_plan(options(bad)), BadInput) << bad;
}

TEST(VariantSets, NaiveAndFastExpandToTheirBundles) {
  RunOptions o = options("");
  o.batch = "1";
  o.prompt_len = "8";
  o.max_new_tokens = "1";
  o.variant_sets = "naive,fast";
  const RunPlan p = make_plan(o);
  ASSERT_EQ(p.cases.size(), 2u);
  EXPECT_EQ(p.cases[0].variants.qkv, QkvLayout::kPermute);
  EXPECT_EQ(p.cases[0].variants.kv_cache, KvCacheKind::kConcat);
  EXPECT_EQ(p.cases[0].variants.logits, LogitsMode::kAll);
  EXPECT_TRUE(p.cases[1].variants.is_default());
  EXPECT_NE(case_key(p.cases[0]), case_key(p.cases[1]));
  o.qkv = "permute";
  EXPECT_THROW(make_plan(o), BadInput);
  o.qkv = "fused";
  o.variant_sets = "slow";
  EXPECT_THROW(make_plan(o), BadInput);
}

TEST(CudaGraphs, FlagIsAVariantListAndNeedsTheCudaBackend) {
  RunOptions o = options("");
  o.batch = "1";
  o.prompt_len = "8";
  o.max_new_tokens = "1";
  o.cuda_graphs = "off";
  const RunPlan off = make_plan(o);
  ASSERT_EQ(off.cases.size(), 1u);
  EXPECT_FALSE(off.cases[0].variants.cuda_graphs);
  EXPECT_TRUE(off.cases[0].variants.is_default());
  for (const char* bad : {"on", "off,on", "yes", "off,off", ""}) {
    o.cuda_graphs = bad;
    EXPECT_THROW(make_plan(o), BadInput) << bad;  // on: the CPU backend has nothing to capture
  }
  try {
    o.cuda_graphs = "on";
    make_plan(o);
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("--cuda-graphs on needs --backend cuda"),
              std::string::npos)
        << e.what();
  }
}

TEST(DecodeAttention, FlagIsAVariantListAndNeedsTheCudaBackend) {
  RunOptions o = options("");
  o.batch = "1";
  o.prompt_len = "8";
  o.max_new_tokens = "1";
  o.decode_attention = "tiled";
  const RunPlan tiled = make_plan(o);
  ASSERT_EQ(tiled.cases.size(), 1u);
  EXPECT_EQ(tiled.cases[0].variants.decode_attention, DecodeAttention::kTiled);
  EXPECT_TRUE(tiled.cases[0].variants.is_default());
  for (const char* bad : {"streamed", "tiled,streamed", "flash", "tiled,tiled", ""}) {
    o.decode_attention = bad;
    // streamed: the CPU backend has one attention kernel
    EXPECT_THROW(make_plan(o), BadInput) << bad;
  }
  try {
    o.decode_attention = "tiled,streamed";
    make_plan(o);
    ADD_FAILURE() << "streamed on the CPU backend was accepted";
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("--decode-attention streamed needs --backend cuda"),
              std::string::npos)
        << e.what();
  }
  try {
    o.decode_attention = "flash";
    make_plan(o);
    ADD_FAILURE() << "flash was accepted";
  } catch (const BadInput& e) {
    EXPECT_EQ(std::string(e.what()), "--decode-attention: expected tiled or streamed, got 'flash'");
  }
}

// On a CUDA backend both kernels run, each its own case, innermost (after --fuse).
TEST(DecodeAttention, ListExpandsInnermostOnTheCudaBackend) {
  if (choose_backend("auto").name != "cuda") GTEST_SKIP() << "no CUDA device";
  RunOptions o = options("");
  o.backend = "cuda";
  o.batch = "1";
  o.prompt_len = "8";
  o.max_new_tokens = "1";
  o.fuse = "none,small";
  o.decode_attention = "tiled,streamed";
  const RunPlan p = make_plan(o);
  std::vector<std::string> got;
  for (const CaseSpec& c : p.cases) got.push_back(c.variants.describe());
  EXPECT_EQ(got, (std::vector<std::string>{"", "decode_attention=streamed", "fuse=small",
                                           "fuse=small decode_attention=streamed"}));
}

TEST(PlanKey, DependsOnCasesAndShard) {
  const RunPlan p = make_plan(options(""));
  std::vector<std::string> keys;
  for (const auto& c : p.cases) keys.push_back(case_key(c));
  EXPECT_EQ(plan_key(keys, ""), plan_key(keys, ""));
  EXPECT_NE(plan_key(keys, ""), plan_key(keys, "1/2"));
  auto fewer = keys;
  fewer.pop_back();
  EXPECT_NE(plan_key(keys, ""), plan_key(fewer, ""));
}

TEST(Merge, KnowsEveryTableOfTheStore) {
  const std::string path = std::string(LLMBENCH_TEST_SCRATCH) + "/merge_tables.db";
  std::filesystem::create_directories(LLMBENCH_TEST_SCRATCH);
  std::filesystem::remove(path);
  ResultStore store(path);
  auto q = store.db().prepare(
      "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'");
  const auto known = mergeable_tables(), skipped = unmerged_tables();
  int tables = 0;
  while (q.step()) {
    ++tables;
    const std::string t = q.column_text(0);
    const bool copied = std::find(known.begin(), known.end(), t) != known.end();
    const bool refused_when_filled = std::find(skipped.begin(), skipped.end(), t) != skipped.end();
    EXPECT_TRUE(copied || refused_when_filled)
        << "merge does not copy table " << t << " (tools/store/merge.cpp)";
  }
  EXPECT_GT(tables, 5);
}

}  // namespace
}  // namespace llmbench
