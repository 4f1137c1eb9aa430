// The continuous-batching scheduler (see scheduler.h).
#include "engine/serving/scheduler.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "engine/model/rng.h"
#include "kernels/common/error.h"

namespace llmbench {

std::string_view finish_reason_name(FinishReason r) {
  switch (r) {
    case FinishReason::kNone: return "";
    case FinishReason::kLength: return "length";
    case FinishReason::kStop: return "stop";
    case FinishReason::kAbort: return "abort";
  }
  return "";
}

struct Scheduler::Sequence {
  RequestId id = 0;
  GenerationRequest req;
  int slot = -1;
  std::vector<std::int32_t> blocks;
  std::vector<std::uint64_t> hashes;  // chained hashes of its full, written blocks
  int cached_tokens = 0;             // prompt tokens taken from the prefix cache
  int prefilled = 0;                 // prompt tokens whose k/v are cached
  std::vector<std::int32_t> output;  // generated tokens
  std::uint64_t seed = 0;            // sampling: the request's, or one drawn for it
  RequestTimes times;
  bool scheduled = false;            // has rows in the step being built
  bool samples = false;              // the step being built samples its next token
};

namespace {

SchedulerOptions resolved(SchedulerOptions o, const ModelConfig& c) {
  if (o.max_len <= 0) o.max_len = c.max_seq_len;
  if (o.max_num_seqs <= 0) throw BadInput("--max-num-seqs: expected a positive count");
  if (o.max_num_batched_tokens <= 0)
    throw BadInput("--max-num-batched-tokens: expected a positive count");
  if (o.block_size <= 0) throw BadInput("--kv-block-size: expected a positive size");
  if (o.kv_cache_tokens <= 0) o.kv_cache_tokens = std::max(o.max_num_seqs * 256, o.max_len);
  return o;
}

RaggedLimits limits_of(const SchedulerOptions& o) {
  RaggedLimits l;
  l.max_rows = o.max_num_batched_tokens;
  l.max_seqs = o.max_num_seqs;
  l.block_size = o.block_size;
  l.n_blocks = (o.kv_cache_tokens + o.block_size - 1) / o.block_size;
  l.max_len = o.max_len;
  l.kv_dtype = o.kv_dtype;
  return l;
}

}  // namespace

Scheduler::Scheduler(const Model& model, const SchedulerOptions& options,
                     std::chrono::steady_clock::time_point origin)
    : model_(model), opt_(resolved(options, model.config())), origin_(origin),
      pool_(limits_of(opt_).n_blocks, opt_.block_size, opt_.prefix_caching),
      forward_(model, limits_of(opt_)) {
  for (int s = opt_.max_num_seqs - 1; s >= 0; --s) free_slots_.push_back(s);
  // Requests without a seed differ from run to run, as vLLM's do.
  std::random_device rd;
  unseeded_base_ = (std::uint64_t(rd()) << 32) ^ rd();
}

Scheduler::~Scheduler() = default;

std::int64_t Scheduler::now_ns() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                              origin_)
      .count();
}

void Scheduler::set_tracer(Tracer* tracer) {
  tracer_ = tracer;
  forward_.set_tracer(tracer);
}

void Scheduler::restart_steps() {
  LLMBENCH_CHECK(idle(), "restart_steps() while requests are queued or running");
  steps_ = 0;
}

void Scheduler::validate(const GenerationRequest& r) const {
  const ModelConfig& c = model_.config();
  if (r.prompt.empty()) throw BadInput("the prompt is empty");
  for (auto t : r.prompt)
    if (t < 0 || t >= c.vocab_size)
      throw BadInput("prompt token id " + std::to_string(t) + " is outside the vocabulary [0, " +
                     std::to_string(c.vocab_size) + ")");
  if (r.max_tokens <= 0) throw BadInput("max_tokens must be at least 1");
  const SamplingParams& p = r.sampling;
  if (!(p.temperature >= 0.0f) || !std::isfinite(p.temperature))
    throw BadInput("temperature must be a finite number >= 0");
  if (!(p.top_p > 0.0f && p.top_p <= 1.0f)) throw BadInput("top_p must be in (0, 1]");
  if (!(p.min_p >= 0.0f && p.min_p <= 1.0f)) throw BadInput("min_p must be in [0, 1]");
  if (p.logprobs > kMaxLogprobs)
    throw BadInput("logprobs must be at most " + std::to_string(kMaxLogprobs));
  const std::int64_t len = std::int64_t(r.prompt.size()) + r.max_tokens;
  if (len > opt_.max_len)
    throw BadInput("prompt (" + std::to_string(r.prompt.size()) + " tokens) plus max_tokens (" +
                   std::to_string(r.max_tokens) + ") exceeds the context length " +
                   std::to_string(opt_.max_len) + " of model '" + c.name + "'");
  if (!opt_.chunked_prefill && int(r.prompt.size()) > opt_.max_num_batched_tokens)
    throw BadInput("prompt (" + std::to_string(r.prompt.size()) +
                   " tokens) exceeds --max-num-batched-tokens " +
                   std::to_string(opt_.max_num_batched_tokens) + " without chunked prefill");
  if (pool_.blocks_for(int(len)) > pool_.total())
    throw BadInput("request needs " + std::to_string(pool_.blocks_for(int(len))) +
                   " KV blocks; the pool has " + std::to_string(pool_.total()));
}

void Scheduler::add(RequestId id, GenerationRequest request) {
  validate(request);
  auto s = std::make_unique<Sequence>();
  s->id = id;
  s->req = std::move(request);
  s->times.arrival_ns = s->req.arrival_ns >= 0 ? s->req.arrival_ns : now_ns();
  s->seed = s->req.sampling.seed ? *s->req.sampling.seed : mix64(unseeded_base_ + id);
  waiting_.push_back(std::move(s));
}

bool Scheduler::abort(RequestId id, RequestTimes* times) {
  auto report = [&](Sequence& s) {
    s.times.finished_ns = now_ns();
    if (times) *times = s.times;
  };
  for (auto it = waiting_.begin(); it != waiting_.end(); ++it)
    if ((*it)->id == id) {
      report(**it);
      waiting_.erase(it);
      return true;
    }
  for (auto it = running_.begin(); it != running_.end(); ++it)
    if ((*it)->id == id) {
      report(**it);
      pool_.release((*it)->blocks);
      free_slots_.push_back((*it)->slot);
      running_.erase(it);
      return true;
    }
  return false;
}

void Scheduler::finish(Sequence& s, FinishReason why, std::vector<RequestUpdate>& out) {
  RequestUpdate& u = out.back();  // the update of this step for s
  s.times.finished_ns = now_ns();
  u.finish = why;
  u.times = s.times;
  pool_.release(s.blocks);
  free_slots_.push_back(s.slot);
  s.slot = -1;
}

bool Scheduler::admit(Sequence& s) {
  const int prompt = int(s.req.prompt.size());
  const int need = pool_.blocks_for(prompt + s.req.max_tokens);
  // At least the prompt's last token is run, for the logits of the first output token.
  const BlockPool::Match m = pool_.lookup(s.req.prompt, (prompt - 1) / pool_.block_size());
  if (need - m.blocks > pool_.free() - m.free_blocks) return false;
  pool_.take(m, s.req.prompt, s.blocks);
  LLMBENCH_CHECK(pool_.allocate(need - m.blocks, s.blocks), "block pool: admission miscounted");
  s.hashes = m.hashes;
  s.cached_tokens = s.prefilled = m.blocks * pool_.block_size();
  prefix_query_tokens_ += prompt;
  prefix_hit_tokens_ += s.cached_tokens;
  return true;
}

void Scheduler::register_written_blocks(Sequence& s) {
  if (!pool_.prefix_caching()) return;
  const int prompt = int(s.req.prompt.size()), B = pool_.block_size();
  // Positions whose k/v are written: the prompt so far, then every generated token but the
  // newest (it is written by the next decode row).
  const int written = s.prefilled < prompt ? s.prefilled : prompt + int(s.output.size()) - 1;
  std::vector<std::int32_t> tokens(std::size_t(B), 0);
  for (int b = int(s.hashes.size()); (b + 1) * B <= written; ++b) {
    for (int i = 0; i < B; ++i) {
      const int p = b * B + i;
      tokens[std::size_t(i)] = p < prompt ? s.req.prompt[std::size_t(p)]
                                          : s.output[std::size_t(p - prompt)];
    }
    const std::uint64_t parent = b > 0 ? s.hashes.back() : 0;
    const std::uint64_t h = BlockPool::chain_hash(parent, tokens.data(), B);
    pool_.register_block(s.blocks[std::size_t(b)], h, parent, tokens.data());
    s.hashes.push_back(h);
  }
}

// What schedule() decided for one step: its rows in order, the sequence of each row, and
// what is left of the token budget.
struct Scheduler::StepPlan {
  std::vector<RaggedSeq> rows;
  std::vector<Sequence*> seqs;  // seqs[i] owns rows[i]
  int budget = 0;               // rows left of max_num_batched_tokens
  int prefill_tokens = 0, decode_rows = 0;
  int cached_tokens = 0;        // prompt tokens of the admitted requests found cached

  void add(Sequence& s, const RaggedSeq& row) {
    rows.push_back(row);
    seqs.push_back(&s);
    s.scheduled = true;
    s.samples = row.sample;
    budget -= row.n_tokens;
  }
};

void Scheduler::schedule_prefill(Sequence& s, StepPlan& plan) const {
  const int remaining = int(s.req.prompt.size()) - s.prefilled;
  if (plan.budget <= 0 || (!opt_.chunked_prefill && remaining > plan.budget)) return;
  const int n = std::min(remaining, plan.budget);
  plan.add(s, {s.slot, s.prefilled, s.req.prompt.data() + s.prefilled, n, n == remaining});
  plan.prefill_tokens += n;
}

void Scheduler::admit_waiting(StepPlan& plan) {
  while (!waiting_.empty() && !free_slots_.empty() && plan.budget > 0) {
    Sequence& s = *waiting_.front();
    const int remaining = int(s.req.prompt.size());
    if (!opt_.chunked_prefill && remaining > plan.budget) break;
    if (!admit(s)) break;
    plan.cached_tokens += s.cached_tokens;
    s.slot = free_slots_.back();
    free_slots_.pop_back();
    forward_.set_blocks(s.slot, s.blocks);
    running_.push_back(std::move(waiting_.front()));
    waiting_.pop_front();
    schedule_prefill(*running_.back(), plan);
  }
}

Scheduler::StepPlan Scheduler::schedule() {
  StepPlan plan;
  plan.budget = opt_.max_num_batched_tokens;
  // 1. One decode row per sequence past its prompt.
  for (auto& sp : running_) {
    Sequence& s = *sp;
    s.scheduled = s.samples = false;
    if (s.prefilled < int(s.req.prompt.size()) || plan.budget <= 0) continue;
    const int pos = int(s.req.prompt.size() + s.output.size()) - 1;
    plan.add(s, {s.slot, pos, &s.output.back(), 1, true});
    ++plan.decode_rows;
  }
  // 2. Prompts in progress, oldest first.
  for (auto& sp : running_)
    if (sp->prefilled < int(sp->req.prompt.size())) schedule_prefill(*sp, plan);
  // 3. New requests, first come first served, while a slot, blocks and budget are there.
  admit_waiting(plan);
  return plan;
}

const std::vector<std::int32_t>& Scheduler::execute(const StepPlan& plan,
                                                    std::int64_t& forward_ns) {
  ++steps_;
  forward_.set_step(plan.prefill_tokens > 0 ? Phase::kPrefill : Phase::kDecode, int(steps_));
  const auto f0 = std::chrono::steady_clock::now();
  tokens_ = forward_.step(plan.rows);
  sample_on_host(plan);
  forward_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::steady_clock::now() - f0)
                   .count();
  if (tracer_) tracer_->resolve();
  return tokens_;
}

void Scheduler::sample_on_host(const StepPlan& plan) {
  const std::size_t V = std::size_t(model_.config().vocab_size);
  logprobs_.assign(tokens_.size(), std::nullopt);
  // The rows that need the host: copied one by one (the backend's transfers stay on this
  // thread), then sampled in parallel, each row with its own request's seed and index, so the
  // tokens do not depend on the thread count.
  host_jobs_.clear();
  std::size_t sampled = 0;
  for (std::size_t i = 0; i < plan.seqs.size(); ++i) {
    if (!plan.rows[i].sample) continue;
    const std::size_t k = sampled++;
    const SamplingParams& p = plan.seqs[i]->req.sampling;
    if (p.greedy() && p.logprobs < 0) continue;  // the argmax stands
    host_jobs_.push_back({k, plan.seqs[i]});
  }
  const int n = int(host_jobs_.size());
  if (n == 0) return;
  host_rows_.resize(std::size_t(n) * V);
  for (int j = 0; j < n; ++j)
    forward_.logits_row_to_host(int(host_jobs_[std::size_t(j)].first), &host_rows_[std::size_t(j) * V]);
  samplers_.resize(std::size_t(std::max(1, omp_get_max_threads())));
  auto one = [&](int j, Sampler& sampler) {
    const auto [k, s] = host_jobs_[std::size_t(j)];
    const SamplingParams& p = s->req.sampling;
    const float* row = &host_rows_[std::size_t(j) * V];
    if (!p.greedy())
      tokens_[k] = sampler.sample(row, int(V), p, sampling_uniform(s->seed, s->output.size()));
    if (p.logprobs >= 0) logprobs_[k] = logprobs_of(row, int(V), tokens_[k], p.logprobs);
  };
  if (n == 1) {
    one(0, samplers_[0]);
    return;
  }
#pragma omp parallel for schedule(dynamic, 1)
  for (int j = 0; j < n; ++j) one(j, samplers_[std::size_t(omp_get_thread_num())]);
}

std::vector<RequestUpdate> Scheduler::update_from_output(const StepPlan& plan,
                                                         const std::vector<std::int32_t>& next) {
  std::vector<float> logits;
  if (opt_.keep_logits) logits = forward_.last_logits();
  const std::int64_t end_ns = now_ns();
  const std::size_t V = std::size_t(model_.config().vocab_size);
  std::vector<RequestUpdate> updates;
  std::size_t sampled = 0;
  bool any_done = false;
  for (std::size_t i = 0; i < plan.seqs.size(); ++i) {
    Sequence& s = *plan.seqs[i];
    if (s.prefilled < int(s.req.prompt.size())) s.prefilled += plan.rows[i].n_tokens;
    if (!s.samples) {
      register_written_blocks(s);
      continue;
    }
    const std::int32_t token = next[sampled];
    s.output.push_back(token);
    register_written_blocks(s);
    if (s.times.first_token_ns < 0) s.times.first_token_ns = end_ns;
    RequestUpdate u;
    u.id = s.id;
    u.token = token;
    u.prompt_tokens = int(s.req.prompt.size());
    u.cached_tokens = s.cached_tokens;
    u.completion_tokens = int(s.output.size());
    if (opt_.keep_logits)
      u.logits.assign(logits.begin() + std::ptrdiff_t(sampled * V),
                      logits.begin() + std::ptrdiff_t((sampled + 1) * V));
    u.logprobs = std::move(logprobs_[sampled]);
    ++sampled;
    const auto& eos_ids = opt_.eos_token_ids;
    const bool eos = !s.req.ignore_eos &&
                     std::find(eos_ids.begin(), eos_ids.end(), token) != eos_ids.end();
    const auto& stops = s.req.stop_token_ids;
    const bool stop_id = std::find(stops.begin(), stops.end(), token) != stops.end();
    if (stop_id && !eos) u.stop_token = token;
    updates.push_back(std::move(u));
    if (eos || stop_id || int(s.output.size()) >= s.req.max_tokens) {
      finish(s, eos || stop_id ? FinishReason::kStop : FinishReason::kLength, updates);
      any_done = true;
    }
  }
  if (any_done)
    running_.erase(std::remove_if(running_.begin(), running_.end(),
                                  [](const auto& s) { return s->slot < 0; }),
                   running_.end());
  return updates;
}

std::vector<RequestUpdate> Scheduler::step(StepStats* stats,
                                           const std::function<void()>& scheduled) {
  if (idle()) return {};
  const std::int64_t start_ns = now_ns();
  const StepPlan plan = schedule();
  if (plan.rows.empty()) return {};  // everything waits for blocks or slots
  for (Sequence* s : plan.seqs)
    if (s->times.first_scheduled_ns < 0) s->times.first_scheduled_ns = start_ns;
  if (scheduled) scheduled();
  // Who is in the step, before update_from_output moves the prompts on (a row of a sequence
  // whose prompt is not done yet is a prompt chunk).
  std::vector<StepMember> members;
  if (stats) {
    members.reserve(plan.seqs.size());
    for (std::size_t i = 0; i < plan.seqs.size(); ++i)
      members.push_back({plan.seqs[i]->id,
                         plan.seqs[i]->prefilled < int(plan.seqs[i]->req.prompt.size()),
                         plan.rows[i].n_tokens});
  }
  std::int64_t forward_ns = 0;
  const std::vector<std::int32_t>& next = execute(plan, forward_ns);
  std::vector<RequestUpdate> updates = update_from_output(plan, next);
  if (stats) {
    stats->step = steps_;
    stats->prefill_tokens = plan.prefill_tokens;
    stats->decode_rows = plan.decode_rows;
    stats->seqs = int(plan.seqs.size());
    stats->running = running();
    stats->waiting = waiting();
    stats->blocks_used = pool_.used();
    stats->cached_tokens = plan.cached_tokens;
    stats->start_ns = start_ns;
    stats->forward_ns = forward_ns;
    stats->total_ns = now_ns() - start_ns;
    stats->members = std::move(members);
  }
  return updates;
}

}  // namespace llmbench
