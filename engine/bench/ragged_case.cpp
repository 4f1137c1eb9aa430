// Ragged offline cases (see ragged_case.h). Clocks as in bench_case.cpp: on the CPU backend
// Scheduler::step() returns once its tokens are on the host, so steady_clock around it measures
// the step. TTFT starts just before the requests are handed to the scheduler and stops when the
// last sequence's first token is on the host; each later step is one decode-step sample.
#include "engine/bench/ragged_case.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <numbers>
#include <string>

#include "engine/bench/interrupt.h"
#include "engine/bench/prompts.h"
#include "engine/model/rng.h"
#include "engine/serving/scheduler.h"
#include "kernels/common/error.h"

namespace llmbench {

namespace {

using Clock = std::chrono::steady_clock;

std::int64_t ns_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count();
}

// Uniform in (0, 1) from the top 53 bits of the stream's index-th value.
double uniform53(std::uint64_t key, std::uint64_t index) {
  return (double(stream_u64(key, index) >> 11) + 0.5) * 0x1p-53;
}

// round(mean + stddev * z), z standard normal (Box-Muller over indices 2i, 2i + 1), kept
// within [1, limit] before rounding so that no stddev overflows an int.
int draw_length(std::uint64_t key, int i, int mean, double stddev, int limit) {
  if (!(stddev > 0)) return std::clamp(mean, 1, limit);
  const double u1 = uniform53(key, 2 * std::uint64_t(i));
  const double u2 = uniform53(key, 2 * std::uint64_t(i) + 1);
  const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  const double v = std::clamp(double(mean) + stddev * z, 1.0, double(limit));
  return int(std::lround(v));
}

// One repetition: every request added at once, then steps until the scheduler is idle.
// Writes each sequence's generated ids to `generated`.
RepSample run_once(Scheduler& sched, const std::vector<GenerationRequest>& requests,
                   int max_output, std::vector<std::vector<std::int32_t>>& generated) {
  const int batch = int(requests.size());
  std::vector<GenerationRequest> copies = requests;  // copied outside the timed region
  generated.assign(std::size_t(batch), {});
  sched.restart_steps();
  RepSample s;
  int with_first_token = 0;
  bool first_tokens_done = false;
  const auto t0 = Clock::now();
  for (int i = 0; i < batch; ++i) sched.add(RequestId(i), std::move(copies[std::size_t(i)]));
  // The prefill step and max_output - 1 decode steps; anything beyond is a scheduler fault,
  // and the bound keeps the loop finite.
  for (int n = 0; !sched.idle(); ++n) {
    if (n > max_output)
      throw Error("ragged case: the scheduler needed more than " + std::to_string(max_output + 1) +
                  " steps for " + std::to_string(max_output) + " tokens");
    if (n > 0) throw_if_interrupted();  // Ctrl-C abandons the case between steps
    const auto a = Clock::now();
    const std::vector<RequestUpdate> updates = sched.step();
    const auto b = Clock::now();
    for (const RequestUpdate& u : updates) {
      if (!u.token) continue;
      auto& g = generated[std::size_t(u.id)];
      if (g.empty()) ++with_first_token;
      g.push_back(*u.token);
    }
    if (first_tokens_done) {
      s.decode_ns.push_back(ns_between(a, b));
    } else if (with_first_token == batch) {
      s.ttft_ns = ns_between(t0, b);
      first_tokens_done = true;
    }
  }
  if (!first_tokens_done || int(s.decode_ns.size()) != max_output - 1)
    throw Error("ragged case: expected every first token in one step and " +
                std::to_string(max_output - 1) + " decode steps, got " +
                std::to_string(s.decode_ns.size()));
  return s;
}

}  // namespace

RaggedLengths draw_ragged_lengths(std::uint64_t seed, int batch, int prompt_mean,
                                  double prompt_stddev, int output_mean, double output_stddev,
                                  int max_len) {
  LLMBENCH_CHECK(max_len >= 2, "a ragged case needs a context of at least 2 positions");
  const std::uint64_t pk = stream_key(seed, fnv1a64("ragged_prompt_len"));
  const std::uint64_t ok = stream_key(seed, fnv1a64("ragged_output_len"));
  RaggedLengths l;
  for (int i = 0; i < batch; ++i) {
    const int p = draw_length(pk, i, prompt_mean, prompt_stddev, max_len - 1);
    l.prompt.push_back(p);
    l.output.push_back(draw_length(ok, i, output_mean, output_stddev, max_len - p));
  }
  return l;
}

CaseResult run_ragged_case(const Model& model, const CaseSpec& spec, const Peaks& peaks,
                           Clock::time_point origin) {
  const ModelConfig& c = model.config();
  CaseResult r;
  r.spec = spec;
  const RaggedLengths lens =
      draw_ragged_lengths(spec.seed, spec.batch, spec.prompt_len, spec.variants.prompt_len_stddev,
                          spec.max_new_tokens, spec.variants.output_len_stddev, c.max_seq_len);
  const int max_prompt = *std::max_element(lens.prompt.begin(), lens.prompt.end());
  const int max_output = *std::max_element(lens.output.begin(), lens.output.end());
  std::int64_t prompt_sum = 0, pool_tokens = 0;
  SchedulerOptions opt;
  for (int i = 0; i < spec.batch; ++i) {
    prompt_sum += lens.prompt[std::size_t(i)];
    const int len = lens.prompt[std::size_t(i)] + lens.output[std::size_t(i)];
    pool_tokens += (len + opt.block_size - 1) / opt.block_size * opt.block_size;
  }
  if (prompt_sum > INT_MAX || pool_tokens > INT_MAX)
    throw BadInput("--prompt-len-stddev: the drawn prompts need more than 2^31 positions");
  // Every prompt in step 1 (the budget is all of them), one slot per sequence, and a pool that
  // holds every sequence whole: nothing waits.
  opt.max_num_seqs = spec.batch;
  opt.max_num_batched_tokens = int(prompt_sum);
  opt.chunked_prefill = true;
  opt.kv_cache_tokens = int(pool_tokens);
  opt.max_len = c.max_seq_len;
  opt.kv_dtype = spec.variants.kv_dtype;
  Variants cache;  // what the static estimate counts: the pool's element type
  cache.kv_dtype = spec.variants.kv_dtype;
  // Activations for all prompt rows and a cache for the longest sequence, per sequence: the
  // static estimate of (batch, longest prompt, longest sequence) bounds this case's buffers.
  r.memory = estimate_memory(c, spec.dtype, spec.batch, max_prompt, max_prompt + max_output,
                             cache);
  check_fits(r.memory, available_host_memory(), "host", r.memory.weight_bytes);

  std::vector<std::int32_t> synthetic;
  if (spec.prompt.empty())
    synthetic = synthetic_prompts(spec.seed, spec.batch, max_prompt, c.vocab_size,
                                  spec.distinct_prompts);
  std::vector<GenerationRequest> requests(std::size_t(spec.batch));
  for (int i = 0; i < spec.batch; ++i) {
    GenerationRequest& q = requests[std::size_t(i)];
    if (spec.prompt.empty()) {
      // Sequence i's synthetic row does not depend on the row length: a prefix is the prompt.
      const auto row = synthetic.begin() + std::ptrdiff_t(i) * max_prompt;
      q.prompt.assign(row, row + lens.prompt[std::size_t(i)]);
    } else {
      LLMBENCH_CHECK(lens.prompt[std::size_t(i)] == int(spec.prompt.size()),
                     "explicit prompt ids with a varying prompt length");
      q.prompt = spec.prompt;
    }
    q.max_tokens = lens.output[std::size_t(i)];
    q.ignore_eos = true;  // lengths are the case's, as in the static path
    r.prompt_ids.insert(r.prompt_ids.end(), q.prompt.begin(), q.prompt.end());
  }
  r.prompt_lens = lens.prompt;
  r.cost = ragged_case_cost(c, lens.prompt, lens.output, spec.dtype,
                            kv_dtype_bytes(spec.variants.kv_dtype));

  Scheduler sched(model, opt, origin);
  const auto once = [&](std::vector<std::vector<std::int32_t>>& g) {
    return run_once(sched, requests, max_output, g);
  };
  run_repetitions(r, spec, model, once);
  // The last step's logits: the longest sequences' last tokens.
  const std::vector<float> logits = sched.last_logits();
  check_logits_finite(logits, int(logits.size() / std::size_t(c.vocab_size)),
                      "the last step's sampled row", sched, once);
  r.metrics = compute_metrics(spec.batch, spec.prompt_len, spec.max_new_tokens, r.cost,
                              r.samples, peaks);

  add_traced_repetition(r, spec, model, origin, sched, once);
  if (spec.variants.cuda_graphs) {  // the scheduler's steps are not captured
    r.graphs.requested = true;
    r.graphs.note = "cuda graphs: ragged cases run their steps eagerly";
  }
  return r;
}

}  // namespace llmbench
