// Ragged offline cases (`llmbench run --prompt-len-stddev F --output-len-stddev F`): each of
// the batch's sequences gets its own prompt and output length, drawn from a seeded normal
// distribution, and all of them are submitted at once to the continuous-batching scheduler the
// server uses (engine/serving/scheduler.h, ragged_forward.h), which is how real workloads look: the
// batch shrinks as sequences finish.
// The token budget of a step is the sum of the prompts, so every prompt prefills in step 1
// (as the static path's prefill) and every later step is one decode row per unfinished
// sequence. Timing and metrics follow bench_case.cpp's (docs/metrics.md, "Ragged cases").
// Not here: the static path (bench_case.cpp) or flag parsing (tools/run/run_plan.cpp).
#pragma once
#include <chrono>
#include <cstdint>
#include <vector>

#include "engine/bench/bench_case.h"

namespace llmbench {

struct RaggedLengths {
  std::vector<int> prompt;  // per sequence, >= 1
  std::vector<int> output;  // per sequence, >= 1; prompt[i] + output[i] <= max_len
};

// Sequence i's lengths: round(mean + stddev * z) with z standard normal, drawn by Box-Muller
// from the counter-based stream (engine/model/rng.h) of (seed, "ragged_prompt_len") or
// (seed, "ragged_output_len") at indices 2i and 2i + 1, so a draw depends on (seed, i) only.
// The prompt is clamped to [1, max_len - 1], then the output to [1, max_len - prompt]. A
// stddev of 0 gives the mean exactly (clamped the same way). Needs max_len >= 2.
RaggedLengths draw_ragged_lengths(std::uint64_t seed, int batch, int prompt_mean,
                                  double prompt_stddev, int output_mean, double output_stddev,
                                  int max_len);

// Runs a ragged case (spec.variants.ragged()): warm-up and measured repetitions, each one
// submitting the batch's sequences to one scheduler and stepping until all have finished; then
// the traced repetition. Prompts are synthetic (sequence i: the first prompt[i] tokens of its
// synthetic_prompts row) or spec.prompt for every sequence (its output lengths still vary).
// Every repetition must generate the same tokens; a difference throws llmbench::Error.
CaseResult run_ragged_case(const Model& model, const CaseSpec& spec, const Peaks& peaks,
                           std::chrono::steady_clock::time_point origin);

}  // namespace llmbench
