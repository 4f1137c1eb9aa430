// Continuous batching: requests join the running batch between engine steps, prefill while
// others decode, and leave when done, over one paged KV pool shared by all of them.
//
// Each step() builds one ragged batch (ragged_forward.h) within two limits:
//   max_num_seqs            sequences holding KV blocks at once (running), and
//   max_num_batched_tokens  rows per step (the token budget).
// Order of the rows: one decode row per running sequence that has its prompt done, then the
// prompts in progress (oldest first), then newly admitted requests (first come, first served).
// With chunked prefill a prompt takes whatever budget is left and continues next step; without
// it a prompt runs whole or waits for a step with room (and a prompt over the budget is refused).
// Admission reserves the blocks for the whole request (prompt + max_tokens) at once, so a
// running sequence never runs out of blocks and nothing is ever preempted; when the pool is
// short the request at the head of the queue, and everything behind it, waits.
// A request's greedy tokens do not depend on what shares its steps: every row reads only its
// own sequence's cache (tests/engine/test_scheduler.cpp checks against the static Session).
// Sampling: a greedy request takes the forward pass's argmax (bit-exact with the static path);
// any other request, or one asking for log-probabilities, has its logits row copied to the
// host and sampled there (sampler.h; rows in parallel) with the request's seed and the index of
// the token.
// Single-threaded: the server (tools/serve) runs it on one engine thread.
// Not here: HTTP, tokenizers, or stop strings (those need text: tools/serve).
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <deque>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "engine/serving/block_pool.h"
#include "engine/serving/sampler.h"
#include "engine/model/model.h"
#include "engine/model/ragged_forward.h"
#include "engine/model/trace.h"

namespace llmbench {

using RequestId = std::uint64_t;

enum class FinishReason { kNone, kLength, kStop, kAbort };
// "length", "stop", "abort" (OpenAI's finish_reason values for the first two).
std::string_view finish_reason_name(FinishReason r);

struct SchedulerOptions {
  int max_num_seqs = 64;
  int max_num_batched_tokens = 2048;
  bool chunked_prefill = true;
  int block_size = 16;
  int kv_cache_tokens = 0;   // pool size in positions; 0: max_num_seqs x 512, at least one context
  int max_len = 0;           // positions per sequence (prompt + max_tokens); 0: the context length
  // Generating one of these ends a request (stop) unless it asks to ignore them; none (random
  // weights): generation stops at length. A checkpoint's: tools/text/end_of_sequence.h.
  std::vector<std::int32_t> eos_token_ids;
  bool keep_logits = false;  // tests: each update carries the logits its token came from
  // Automatic prefix caching (block_pool.h): a request reuses the cached full blocks of its
  // longest cached prefix and prefills only the rest. Off here, so offline ragged cases time
  // every prefill; `serve` turns it on by default (--no-prefix-caching).
  bool prefix_caching = false;
  KvDtype kv_dtype = KvDtype::kFp32;  // the pool's element type (--kv-cache-dtype)
};

struct GenerationRequest {
  std::vector<std::int32_t> prompt;
  int max_tokens = 16;
  bool ignore_eos = false;
  SamplingParams sampling{};                // default: greedy, no log-probabilities
  std::vector<std::int32_t> stop_token_ids{};  // generating one finishes the request (stop)
  // When the request arrived, ns since the scheduler's origin; -1: when add() is called. A
  // server stamps it when the request comes in, so the time it waited for the engine thread
  // (which adds requests only between steps) counts in its TTFT and in its trace.
  std::int64_t arrival_ns = -1;
};

// A request's life, steady_clock ns since the scheduler's origin; -1 until it happens.
struct RequestTimes {
  std::int64_t arrival_ns = -1;          // GenerationRequest::arrival_ns, else add()
  std::int64_t first_scheduled_ns = -1;  // start of the first step that ran its rows
  std::int64_t first_token_ns = -1;      // end of the step that produced its first token
  std::int64_t finished_ns = -1;
};

// What one step did to one request.
struct RequestUpdate {
  RequestId id = 0;
  std::optional<std::int32_t> token;  // the token this step produced, if any
  FinishReason finish = FinishReason::kNone;
  int prompt_tokens = 0;
  int cached_tokens = 0;              // prompt tokens whose k/v came from the prefix cache
  int completion_tokens = 0;          // so far, including `token`
  RequestTimes times;                 // complete when finish != kNone
  std::vector<float> logits;          // keep_logits only: [vocab], the logits of `token`
  std::optional<SampledLogprobs> logprobs;  // sampling.logprobs >= 0 only
  std::optional<std::int32_t> stop_token;   // finished by one of its stop_token_ids
};

// One request's part of a step: a chunk of its prompt (the whole prompt, or the last chunk,
// also samples its first token) or one decode row.
struct StepMember {
  RequestId id = 0;
  bool prefill = false;  // a prompt chunk; else a decode row
  int tokens = 0;        // rows it had in the step
};

// The composition and timing of one step.
struct StepStats {
  std::int64_t step = 0;        // 1, 2, ...
  int prefill_tokens = 0;       // prompt rows (whole prompts and chunks)
  int decode_rows = 0;
  int seqs = 0;                 // sequences with rows in the step
  int running = 0, waiting = 0; // after the step
  int blocks_used = 0;          // after the step
  int cached_tokens = 0;        // prompt tokens of requests admitted in the step that were cached
  std::int64_t start_ns = 0;    // since the origin
  std::int64_t forward_ns = 0;  // RaggedForward::step (includes its host-side enqueue)
  std::int64_t total_ns = 0;    // step(): scheduling + forward + bookkeeping
  std::vector<StepMember> members;  // the requests with rows in the step, in row order
};

class Scheduler {
 public:
  Scheduler(const Model& model, const SchedulerOptions& options,
            std::chrono::steady_clock::time_point origin = std::chrono::steady_clock::now());
  ~Scheduler();

  const SchedulerOptions& options() const { return opt_; }
  // Checks a request without queueing it: BadInput naming what is wrong (empty prompt, token id
  // outside the vocabulary, prompt + max_tokens beyond the sequence length, a prompt over the
  // token budget without chunked prefill, more blocks than the pool has).
  void validate(const GenerationRequest& request) const;
  // Queues a request (validate() first). Ids must be unique among queued and running ones.
  void add(RequestId id, GenerationRequest request);
  // Drops a queued or running request and frees its blocks; false when the id is unknown.
  // `times` (if given) receives the request's times, finished now.
  bool abort(RequestId id, RequestTimes* times = nullptr);

  // Runs one engine step (nothing when idle) and returns what happened to each request:
  // schedule() picks the rows, execute() runs the forward pass over them, update_from_output()
  // applies its tokens (as vLLM's schedule() / execute_model() / update_from_output()).
  // `scheduled`, when set, is called once the step's batch is chosen and before its forward
  // pass (the server publishes its running/waiting gauges there: a request admitted by this step
  // counts as running while its prefill runs).
  std::vector<RequestUpdate> step(StepStats* stats = nullptr,
                                  const std::function<void()>& scheduled = {});

  bool idle() const { return running_.empty() && waiting_.empty(); }
  int running() const { return int(running_.size()); }
  int waiting() const { return int(waiting_.size()); }
  int blocks_used() const { return pool_.used(); }
  int blocks_total() const { return pool_.total(); }
  // Prefix caching: full blocks holding a cached prefix (in use or not), and over all admitted
  // requests, the prompt tokens looked up and the tokens found cached.
  int blocks_cached() const { return pool_.cached(); }
  std::int64_t prefix_query_tokens() const { return prefix_query_tokens_; }
  std::int64_t prefix_hit_tokens() const { return prefix_hit_tokens_; }
  std::int64_t steps() const { return steps_; }
  std::int64_t kv_pool_bytes() const { return forward_.pool_bytes(); }
  // Records later steps' ops into `tracer` (nullptr: stop); resolved after each step.
  void set_tracer(Tracer* tracer);
  // Diagnostic: checks every op's output of later steps (RaggedForward::set_check_ops).
  void set_check_ops(bool on) { forward_.set_check_ops(on); }
  // Numbers the next step 1 again (only when idle): a ragged offline case runs each
  // repetition from step 1, so its traced repetition's step numbers read like a static one's.
  void restart_steps();
  // The logits of the last step's sampled rows, [n_sampled, vocab], copied to the host.
  std::vector<float> last_logits() const { return forward_.last_logits(); }

 private:
  struct Sequence;
  struct StepPlan;
  std::int64_t now_ns() const;

  // The step's rows, in the order of the header comment: decode rows, prompts in progress,
  // then admitted requests (which get their slot and blocks here).
  StepPlan schedule();
  // Adds as much of s's remaining prompt as the plan's budget allows (all of it, without
  // chunked prefill, or nothing).
  void schedule_prefill(Sequence& s, StepPlan& plan) const;
  // Admits waiting requests while a slot, blocks and budget are there.
  void admit_waiting(StepPlan& plan);
  // The forward pass over the plan's rows: one token per sampled row, on the host (the
  // argmax, replaced by a sampled token for non-greedy requests).
  const std::vector<std::int32_t>& execute(const StepPlan& plan, std::int64_t& forward_ns);
  // The host side of sampling, after the forward pass: rows of non-greedy requests and of
  // requests asking for log-probabilities (their logits row copied to the host).
  void sample_on_host(const StepPlan& plan);
  // Applies the step's tokens: prompt progress, new tokens, finished sequences (freed).
  std::vector<RequestUpdate> update_from_output(const StepPlan& plan,
                                                const std::vector<std::int32_t>& next);
  void finish(Sequence& s, FinishReason why, std::vector<RequestUpdate>& out);
  // Admission: a slot and the blocks for prompt + max_tokens, the cached prefix's blocks shared
  // (prefix caching); false (nothing taken) when the pool is short.
  bool admit(Sequence& s);
  // Registers every full block of `s` whose k and v are now written with the prefix cache.
  void register_written_blocks(Sequence& s);

  const Model& model_;
  SchedulerOptions opt_;
  std::chrono::steady_clock::time_point origin_;
  BlockPool pool_;
  RaggedForward forward_;
  Tracer* tracer_ = nullptr;
  std::deque<std::unique_ptr<Sequence>> waiting_;
  std::vector<std::unique_ptr<Sequence>> running_;  // admission order
  std::vector<int> free_slots_;
  std::int64_t steps_ = 0;
  std::int64_t prefix_query_tokens_ = 0, prefix_hit_tokens_ = 0;
  std::vector<Sampler> samplers_;     // one per OpenMP thread
  std::uint64_t unseeded_base_ = 0;  // requests without a seed get mix64(base + id)
  std::vector<std::int32_t> tokens_;  // the step's tokens, one per sampled row
  std::vector<std::optional<SampledLogprobs>> logprobs_;  // per sampled row
  std::vector<std::pair<std::size_t, const Sequence*>> host_jobs_;  // (sampled row, sequence)
  std::vector<float> host_rows_;      // their logits rows on the host
};

}  // namespace llmbench
