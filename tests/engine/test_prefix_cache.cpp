// Automatic prefix caching on the tiny preset: the same requests run through a scheduler with
// and without prefix caching give identical greedy tokens and logits within 1e-4 relative,
// for shared system prompts, multi-turn histories (a turn's prompt is the previous prompt, its
// answer and new tokens), partial-block prefixes, eviction under a small pool, and requests
// that share a prefix still being prefilled; with caching on, the hits are where they must be.
// Also the block pool's prefix bookkeeping: chained hashes, reference counts, LRU eviction.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "engine/serving/block_pool.h"
#include "engine/model/cpu_backend.h"
#include "engine/model/model.h"
#include "engine/bench/prompts.h"
#include "engine/serving/scheduler.h"
#include "tests/kernels/check.h"

namespace llmbench {
namespace {

struct Req {
  std::vector<std::int32_t> prompt;
  int max_tokens;
  int arrive_at_step;
  int after = -1;  // multi-turn: the prompt is request `after`'s prompt + its output + `prompt`
};

struct Outcome {
  std::map<std::size_t, std::vector<std::int32_t>> tokens;
  std::map<std::size_t, std::vector<std::vector<float>>> logits;
  std::map<std::size_t, int> cached;
  std::int64_t hit_tokens = 0;
};

std::vector<std::int32_t> concat(std::vector<std::int32_t> a, const std::vector<std::int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Runs `reqs` (a multi-turn request arrives only once its predecessor is done).
Outcome run(const Model& model, SchedulerOptions o, const std::vector<Req>& reqs) {
  o.keep_logits = true;
  Scheduler sched(model, o);
  Outcome out;
  std::map<std::size_t, std::vector<std::int32_t>> prompts;
  std::vector<bool> added(reqs.size(), false);
  std::map<std::size_t, bool> done;
  for (int step = 0; step < 2000; ++step) {
    for (std::size_t i = 0; i < reqs.size(); ++i) {
      const Req& r = reqs[i];
      if (added[i] || step < r.arrive_at_step) continue;
      if (r.after >= 0 && !done[std::size_t(r.after)]) continue;
      prompts[i] = r.after >= 0 ? concat(concat(prompts[std::size_t(r.after)],
                                                out.tokens[std::size_t(r.after)]),
                                         r.prompt)
                                : r.prompt;
      sched.add(i, {prompts[i], r.max_tokens, true});
      added[i] = true;
    }
    for (RequestUpdate& u : sched.step()) {
      out.tokens[u.id].push_back(*u.token);
      out.logits[u.id].push_back(std::move(u.logits));
      out.cached[u.id] = u.cached_tokens;
      if (u.finish != FinishReason::kNone) done[u.id] = true;
    }
    if (done.size() == reqs.size()) break;
  }
  EXPECT_EQ(done.size(), reqs.size()) << "not every request finished";
  EXPECT_EQ(sched.blocks_used(), 0);
  out.hit_tokens = sched.prefix_hit_tokens();
  return out;
}

class PrefixCache : public ::testing::Test {
 protected:
  PrefixCache() : model_(c_, load_weights(c_, RandomWeights(1), be_), be_) {}
  // Runs with caching off and on; tokens equal, logits within 1e-4 relative. Returns "on".
  Outcome compare(SchedulerOptions o, const std::vector<Req>& reqs) {
    o.prefix_caching = false;
    const Outcome off = run(model_, o, reqs);
    EXPECT_EQ(off.hit_tokens, 0);
    o.prefix_caching = true;
    Outcome on = run(model_, o, reqs);
    for (std::size_t i = 0; i < reqs.size(); ++i) {
      const auto& want_logits = off.logits.at(i);
      EXPECT_EQ(on.tokens[i], off.tokens.at(i)) << "request " << i;
      for (std::size_t t = 0; t < want_logits.size() && t < on.logits[i].size(); ++t)
        EXPECT_TRUE(test::all_close(on.logits[i][t], want_logits[t], 1e-5, 1e-4))
            << "request " << i << " token " << t;
    }
    return on;
  }
  std::vector<std::int32_t> tokens(int seed, int n) {
    return synthetic_prompts(seed, 1, n, c_.vocab_size, false);
  }

  CpuBackend be_{2};
  ModelConfig c_ = *find_preset("tiny");
  Model model_;
};

TEST_F(PrefixCache, SharedSystemPromptIsReusedAfterTheFirstRequest) {
  SchedulerOptions o;
  o.block_size = 8;
  const auto system = tokens(1, 40);  // 5 full blocks
  std::vector<Req> reqs;
  for (int i = 0; i < 4; ++i) reqs.push_back({concat(system, tokens(10 + i, 5 + i)), 6, i * 12});
  const Outcome on = compare(o, reqs);
  EXPECT_EQ(on.cached.at(0), 0);
  for (std::size_t i = 1; i < 4; ++i) EXPECT_EQ(on.cached.at(i), 40) << i;
  EXPECT_EQ(on.hit_tokens, 3 * 40);
}

TEST_F(PrefixCache, MultiTurnHistoriesReuseThePreviousTurn) {
  SchedulerOptions o;
  o.block_size = 4;
  // Turn 2 is turn 1's prompt + answer + 5 new tokens; turn 3 builds on turn 2.
  const std::vector<Req> reqs = {{tokens(2, 13), 7, 0}, {tokens(3, 5), 6, 0, 0},
                                 {tokens(4, 9), 5, 0, 1}};
  const Outcome on = compare(o, reqs);
  // Turn 2's history is 13 + 7 = 20 tokens; 19 are written (the last answer token never ran
  // as input), so 4 full blocks of 4 = 16 hit. Turn 3: 20 + 5 + 6 = 31 history -> 28 (7 blocks).
  EXPECT_EQ(on.cached.at(1), 16);
  EXPECT_EQ(on.cached.at(2), 28);
}

TEST_F(PrefixCache, PartialBlockPrefixesShareOnlyFullBlocks) {
  SchedulerOptions o;
  o.block_size = 16;
  const auto shared = tokens(5, 37);  // 2 full blocks + 5 tokens
  const std::vector<Req> reqs = {{concat(shared, tokens(6, 3)), 4, 0},
                                 {concat(shared, tokens(7, 20)), 4, 10},
                                 {shared, 4, 20}};  // the whole prompt: its last token runs
  const Outcome on = compare(o, reqs);
  EXPECT_EQ(on.cached.at(1), 32);
  EXPECT_EQ(on.cached.at(2), 32);
  // A prompt of exactly 2 blocks reuses only 1: at least one token must be prefilled.
  const Outcome exact = compare(o, {{tokens(8, 32), 3, 0}, {tokens(8, 32), 3, 10}});
  EXPECT_EQ(exact.cached.at(1), 16);
}

TEST_F(PrefixCache, EvictionUnderASmallPoolStaysCorrect) {
  SchedulerOptions o;
  o.block_size = 8;
  o.kv_cache_tokens = 96;  // 12 blocks: a few requests' worth; cached blocks must be evicted
  std::vector<Req> reqs;
  for (int i = 0; i < 8; ++i)
    reqs.push_back({concat(tokens(20 + i % 3, 24), tokens(30 + i, 6)), 10, i * 3});
  const Outcome on = compare(o, reqs);
  EXPECT_GT(on.hit_tokens, 0);
}

TEST_F(PrefixCache, RequestsSharingAPrefixStillBeingPrefilledAreCorrect) {
  SchedulerOptions o;
  o.block_size = 8;
  o.max_num_batched_tokens = 16;  // the shared 64-token prefix takes several chunked steps
  const auto shared = tokens(9, 64);
  std::vector<Req> reqs;
  for (int i = 0; i < 4; ++i) reqs.push_back({concat(shared, tokens(40 + i, 4)), 5, i});
  compare(o, reqs);
}

TEST(BlockPoolPrefix, HashesChainRefsCountAndEvictionIsLruTailFirst) {
  BlockPool pool(4, 2, true);
  const std::vector<std::int32_t> t = {1, 2, 3, 4, 5, 6};
  // The parent hash changes the hash for every parent, small ones included (a seed xor once let
  // the parent's low byte cancel: parents 0 and 7 hashed alike).
  std::set<std::uint64_t> seen;
  for (std::uint64_t parent = 0; parent < 1024; ++parent)
    seen.insert(BlockPool::chain_hash(parent, t.data(), 2));
  EXPECT_EQ(seen.size(), 1024u);
  std::vector<std::int32_t> a;
  ASSERT_TRUE(pool.allocate(3, a));
  std::uint64_t h = 0;
  for (int b = 0; b < 3; ++b) {
    const std::uint64_t parent = h;
    h = BlockPool::chain_hash(parent, t.data() + 2 * b, 2);
    EXPECT_TRUE(pool.register_block(a[std::size_t(b)], h, parent, t.data() + 2 * b));
  }
  EXPECT_EQ(pool.cached(), 3);
  const BlockPool::Match m = pool.lookup(t, 3);
  EXPECT_EQ(m.blocks, 3);
  EXPECT_EQ(m.free_blocks, 0);
  EXPECT_EQ(pool.lookup({9, 9, 3, 4}, 2).blocks, 0);  // block 2's tokens after another prefix
  std::vector<std::int32_t> b;
  pool.take(m, t, b);  // shared: the same ids, never copies
  EXPECT_EQ(b, a);
  pool.release(a);
  EXPECT_EQ(pool.used(), 3);  // still held by b
  pool.release(b);
  EXPECT_EQ(pool.used(), 0);
  EXPECT_EQ(pool.cached(), 3);  // kept until needed
  EXPECT_EQ(pool.lookup(t, 3).free_blocks, 3);
  EXPECT_EQ(pool.lookup({1, 2, 9, 9}, 2).blocks, 1);  // a different second block
  std::vector<std::int32_t> c;
  ASSERT_TRUE(pool.allocate(2, c));  // the never-cached block first, then the LRU one: the
  EXPECT_EQ(c, (std::vector<std::int32_t>{0, a[2]}));  // tail, freed first (tail-first release)
  EXPECT_EQ(pool.cached(), 2);
  EXPECT_EQ(pool.lookup(t, 3).blocks, 2);  // the prefix lost its end, not its head
  // A revived block is used again: freeing it puts it behind the older cached one.
  std::vector<std::int32_t> d;
  pool.take(pool.lookup(t, 1), t, d);
  EXPECT_EQ(d, (std::vector<std::int32_t>{a[0]}));
  pool.release(d);
  pool.release(c);
  std::vector<std::int32_t> e;
  ASSERT_TRUE(pool.allocate(3, e));  // c's two (never cached again), then a[1], the LRU one
  EXPECT_EQ(pool.lookup(t, 3).blocks, 1);
  EXPECT_EQ(pool.cached(), 1);
  EXPECT_FALSE(pool.allocate(2, e));  // one block left: nothing taken
  EXPECT_EQ(pool.free(), 1);
}

}  // namespace
}  // namespace llmbench
