// Continuous batching on the tiny preset: every request's greedy tokens equal the static
// Session's (prefill + decode_step at batch 1) for the same prompt, and its logits agree within
// 1e-4 relative, whatever shares its steps: mixed arrival steps, different prompt and output
// lengths, chunked prefill on and off, a pool too small for everyone at once. Also the block
// pool's accounting (every block back when all are done; abort frees blocks).
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "engine/serving/block_pool.h"
#include "engine/model/cpu_backend.h"
#include "engine/model/model.h"
#include "engine/bench/prompts.h"
#include "engine/serving/scheduler.h"
#include "kernels/common/error.h"
#include "tests/engine/generation.h"
#include "tests/kernels/check.h"

namespace llmbench {
namespace {

struct Reference {
  std::vector<std::int32_t> tokens;
  std::vector<std::vector<float>> logits;
};

// The static path: one sequence, prefill then decode steps, over a cache of `kv` elements.
Reference offline(const Model& model, const std::vector<std::int32_t>& prompt, int max_tokens,
                  KvDtype kv = KvDtype::kFp32) {
  const int n = int(prompt.size());
  Variants v;
  v.kv_dtype = kv;
  Session s(model, 1, n, n + max_tokens, v);
  const test::Generation g = test::generate(s, prompt, n, max_tokens - 1);
  Reference r;
  for (std::size_t i = 0; i < g.tokens.size(); ++i) {
    r.tokens.push_back(g.tokens[i][0]);
    r.logits.push_back(g.logits[i]);
  }
  return r;
}

struct Job {
  std::vector<std::int32_t> prompt;
  int max_tokens;
  int arrive_at_step;  // added before this step (0: before the first)
};

std::vector<Job> mixed_jobs(const ModelConfig& c) {
  const int lens[] = {1, 5, 17, 40, 64, 100, 3, 33, 9, 70};
  const int outs[] = {1, 8, 3, 20, 5, 12, 16, 2, 30, 7};
  const int arrive[] = {0, 0, 0, 2, 3, 3, 7, 10, 11, 25};
  std::vector<Job> jobs;
  for (int i = 0; i < 10; ++i)
    jobs.push_back({synthetic_prompts(100 + i, 1, lens[i], c.vocab_size, false), outs[i],
                    arrive[i]});
  return jobs;
}

// Runs the jobs through a scheduler and checks each against the static path.
void check_against_offline(const SchedulerOptions& options, int max_steps = 500) {
  CpuBackend be;
  const ModelConfig c = *find_preset("tiny");
  Model model(c, load_weights(c, RandomWeights(1), be), be);
  const std::vector<Job> jobs = mixed_jobs(c);
  SchedulerOptions o = options;
  o.keep_logits = true;
  Scheduler sched(model, o);
  std::map<RequestId, Reference> got;
  std::map<RequestId, FinishReason> finished;
  int step = 0;
  std::size_t added = 0;
  int max_running = 0, mixed_steps = 0;
  while ((added < jobs.size() || !sched.idle()) && step < max_steps) {
    for (std::size_t i = 0; i < jobs.size(); ++i)
      if (jobs[i].arrive_at_step == step)
        sched.add(i, {jobs[i].prompt, jobs[i].max_tokens, true}), ++added;
    StepStats st;
    for (RequestUpdate& u : sched.step(&st)) {
      ASSERT_TRUE(u.token.has_value());
      got[u.id].tokens.push_back(*u.token);
      got[u.id].logits.push_back(std::move(u.logits));
      if (u.finish != FinishReason::kNone) finished[u.id] = u.finish;
    }
    max_running = std::max(max_running, st.running);
    if (st.prefill_tokens > 0 && st.decode_rows > 0) ++mixed_steps;
    ASSERT_LE(st.prefill_tokens + st.decode_rows, o.max_num_batched_tokens);
    ++step;
  }
  ASSERT_LT(step, max_steps) << "the scheduler did not finish the jobs";
  EXPECT_GT(mixed_steps, 0) << "no step mixed prefill and decode rows";
  EXPECT_GT(max_running, 1);
  EXPECT_EQ(sched.blocks_used(), 0);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const Reference want = offline(model, jobs[i].prompt, jobs[i].max_tokens, o.kv_dtype);
    ASSERT_EQ(got[i].tokens, want.tokens) << "request " << i;
    EXPECT_EQ(finished[i], FinishReason::kLength);
    // With an fp16 pool both paths round their own k and v, which differ in the last fp32 bits
    // (other GEMM shapes): a value near a rounding boundary may round to the neighbouring half,
    // a 2^-11 relative step, so the logits agree to 1e-4 rather than fp32's 1e-5.
    const bool f16 = o.kv_dtype == KvDtype::kFp16;
    for (std::size_t t = 0; t < want.logits.size(); ++t)
      EXPECT_TRUE(test::all_close(got[i].logits[t], want.logits[t], f16 ? 1e-4 : 1e-5,
                                  f16 ? 1e-3 : 1e-4))
          << "request " << i << " token " << t;
  }
}

TEST(Scheduler, MatchesOfflineWithChunkedPrefill) {
  SchedulerOptions o;
  o.max_num_seqs = 6;
  o.max_num_batched_tokens = 32;  // prompts of 33..100 tokens run in chunks
  check_against_offline(o);
}

TEST(Scheduler, MatchesOfflineWithoutChunkedPrefill) {
  SchedulerOptions o;
  o.max_num_seqs = 8;
  o.max_num_batched_tokens = 128;
  o.chunked_prefill = false;
  check_against_offline(o);
}

TEST(Scheduler, MatchesOfflineWhenThePoolIsShort) {
  SchedulerOptions o;
  o.max_num_seqs = 16;
  o.max_num_batched_tokens = 64;
  o.block_size = 8;
  o.kv_cache_tokens = 160;  // two or three requests at a time: the rest wait for blocks
  check_against_offline(o);
}

// --kv-cache-dtype fp16: the pool of halves gives the static path's tokens over its fp16 cache
// (both round the same keys and values), in half the pool's bytes.
TEST(Scheduler, MatchesOfflineOverAnFp16Pool) {
  SchedulerOptions o;
  o.max_num_seqs = 4;
  o.max_num_batched_tokens = 48;
  o.kv_dtype = KvDtype::kFp16;
  check_against_offline(o);
  CpuBackend be;
  const ModelConfig c = *find_preset("tiny");
  const Model model(c, load_weights(c, RandomWeights(1), be), be);
  SchedulerOptions fp32 = o;
  fp32.kv_dtype = KvDtype::kFp32;
  EXPECT_EQ(2 * Scheduler(model, o).kv_pool_bytes(), Scheduler(model, fp32).kv_pool_bytes());
}

TEST(Scheduler, RefusesBadRequests) {
  CpuBackend be;
  const ModelConfig c = *find_preset("tiny");
  Model model(c, load_weights(c, RandomWeights(1), be), be);
  SchedulerOptions o;
  o.max_num_batched_tokens = 16;
  o.chunked_prefill = false;
  Scheduler sched(model, o);
  EXPECT_THROW(sched.add(1, {{}, 4, false}), BadInput);
  EXPECT_THROW(sched.add(1, {{1, c.vocab_size}, 4, false}), BadInput);
  EXPECT_THROW(sched.add(1, {{1, -1}, 4, false}), BadInput);
  EXPECT_THROW(sched.add(1, {{1, 2}, 0, false}), BadInput);
  EXPECT_THROW(sched.add(1, {std::vector<std::int32_t>(10, 1), c.max_seq_len, false}), BadInput);
  EXPECT_THROW(sched.add(1, {std::vector<std::int32_t>(17, 1), 1, false}), BadInput);
  EXPECT_TRUE(sched.idle());
}

TEST(Scheduler, AbortFreesBlocks) {
  CpuBackend be;
  const ModelConfig c = *find_preset("tiny");
  Model model(c, load_weights(c, RandomWeights(1), be), be);
  SchedulerOptions o;
  o.block_size = 4;
  Scheduler sched(model, o);
  sched.add(1, {std::vector<std::int32_t>(10, 3), 30, false});
  sched.add(2, {std::vector<std::int32_t>(6, 4), 30, false});
  sched.step();
  sched.step();
  EXPECT_EQ(sched.running(), 2);
  EXPECT_EQ(sched.blocks_used(), 10 + 9);  // ceil(40 / 4) + ceil(36 / 4)
  EXPECT_TRUE(sched.abort(1));
  EXPECT_EQ(sched.blocks_used(), 9);
  EXPECT_FALSE(sched.abort(1));
  EXPECT_TRUE(sched.abort(2));
  EXPECT_EQ(sched.blocks_used(), 0);
  EXPECT_TRUE(sched.idle());
}

// A server stamps arrival when the request comes in; the engine thread adds it only between
// steps, and that wait must count in the request's times.
TEST(Scheduler, KeepsTheArrivalTheCallerStamped) {
  CpuBackend be;
  const ModelConfig c = *find_preset("tiny");
  Model model(c, load_weights(c, RandomWeights(1), be), be);
  const auto origin = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  Scheduler sched(model, SchedulerOptions{}, origin);
  GenerationRequest stamped{std::vector<std::int32_t>(5, 3), 1, true};
  stamped.arrival_ns = 1234;
  sched.add(1, stamped);
  sched.add(2, {std::vector<std::int32_t>(5, 3), 1, true});  // unstamped: add() is arrival
  std::map<RequestId, RequestTimes> times;
  for (int i = 0; i < 5 && !sched.idle(); ++i)
    for (const RequestUpdate& u : sched.step()) times[u.id] = u.times;
  ASSERT_EQ(times.size(), 2u);
  EXPECT_EQ(times[1].arrival_ns, 1234);
  EXPECT_GE(times[2].arrival_ns, 1'000'000'000);  // the origin is a second back
  EXPECT_LE(times[2].arrival_ns, times[2].first_scheduled_ns);
  EXPECT_LT(times[1].first_scheduled_ns, times[1].first_token_ns);
}

TEST(Scheduler, TheScheduledHookSeesTheStepsAdmissionsBeforeItsForwardPass) {
  // The server's gauges are published from the hook: a request admitted by a step counts as
  // running (not waiting) while that step's prefill runs. Two requests, one slot: the first
  // step admits one, the other waits; the hook runs once per step, before the tokens exist.
  CpuBackend be;
  const ModelConfig c = *find_preset("tiny");
  Model model(c, load_weights(c, RandomWeights(1), be), be);
  SchedulerOptions o;
  o.max_num_seqs = 1;
  Scheduler sched(model, o);
  sched.add(1, {synthetic_prompts(3, 1, 12, c.vocab_size, false), 2, true});
  sched.add(2, {synthetic_prompts(4, 1, 12, c.vocab_size, false), 2, true});
  EXPECT_EQ(sched.waiting(), 2);
  int calls = 0, running_seen = -1, waiting_seen = -1;
  const auto updates = sched.step(nullptr, [&] {
    ++calls;
    running_seen = sched.running();
    waiting_seen = sched.waiting();
  });
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(running_seen, 1);
  EXPECT_EQ(waiting_seen, 1);
  EXPECT_EQ(updates.size(), 1u) << "the hook ran before the step's one token came back";
  sched.step(nullptr);  // no hook: fine too
}

TEST(BlockPool, HandsOutAndTakesBack) {
  BlockPool pool(5, 16);
  std::vector<std::int32_t> a, b;
  EXPECT_EQ(pool.blocks_for(33), 3);
  EXPECT_TRUE(pool.allocate(3, a));
  EXPECT_EQ(a, (std::vector<std::int32_t>{4, 3, 2}));
  EXPECT_FALSE(pool.allocate(3, b));
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(pool.used(), 3);
  pool.release(a);
  EXPECT_TRUE(a.empty());
  EXPECT_EQ(pool.free(), 5);
}

}  // namespace
}  // namespace llmbench
