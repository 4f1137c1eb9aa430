// Sampling one token from a row of logits, as vLLM's sampler does it: temperature, then top-k,
// then top-p (nucleus), then min-p, then one draw from what is left. Greedy (temperature 0)
// is the engine's own argmax (Decoder::greedy_tokens), not this file: served greedy tokens stay
// bit-exact with `run`'s. Also the log-probabilities a client may ask for (of the raw model
// output, as vLLM returns them by default) and the per-request random numbers: counter-based on
// the request's seed and the index of the token, so a seed gives the same tokens whatever
// shares the request's steps.
// Plain host code over one row: on the CUDA backend the scheduler copies the row to the host
// first. Not here: which rows sample (scheduler.h) or the HTTP fields (tools/serve).
#pragma once
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace llmbench {

// vLLM's bound: a temperature below it is greedy.
inline constexpr float kGreedyTemperature = 1e-5f;
// The most log-probabilities a request may ask for per token (vLLM's default max_logprobs).
inline constexpr int kMaxLogprobs = 20;

struct SamplingParams {
  float temperature = 0.0f;  // < kGreedyTemperature: greedy (top_k, top_p, min_p unused)
  float top_p = 1.0f;        // (0, 1]: keep the smallest most-likely set whose mass reaches it
  int top_k = 0;             // <= 0: all tokens; else keep the k most likely
  float min_p = 0.0f;        // [0, 1]: drop tokens below min_p x the most likely one's probability
  std::optional<std::uint64_t> seed;  // none: the scheduler draws one per request
  int logprobs = -1;         // -1: none; 0..kMaxLogprobs: the token's log-probability and the top N

  bool greedy() const { return temperature < kGreedyTemperature; }
};

struct TokenLogprob {
  std::int32_t token = 0;
  float logprob = 0.0f;
};

// The log-probabilities of one generated token: its own and the `n` most likely tokens' (ties
// by lower id), from log_softmax of the raw logits.
struct SampledLogprobs {
  float logprob = 0.0f;
  std::vector<TokenLogprob> top;
};

// The index of the largest logit, the lowest index among equals (what argmax_rows returns).
std::int32_t argmax_token(const float* logits, int vocab);

// The uniform draw in (0, 1) for the `index`-th generated token of a request seeded `seed`
// (53 bits, from the SplitMix64 counter stream of engine/model/rng.h).
double sampling_uniform(std::uint64_t seed, std::uint64_t index);

// Log-probabilities of `token` and of the top `n` tokens of `logits` (n may be 0).
SampledLogprobs logprobs_of(const float* logits, int vocab, std::int32_t token, int n);

// Samples from one row; keeps its scratch space between calls (one per engine thread).
class Sampler {
 public:
  // One token of `logits` [vocab] under `p` (not greedy) with the draw `u` in (0, 1).
  // The filters, in vLLM's order: logits / temperature; the top_k largest; the smallest
  // prefix of the rest, most likely first, whose probability reaches top_p (the token that
  // crosses it included); tokens with probability below min_p x the largest; then the token
  // where u x (the kept mass) falls in the kept tokens' cumulative mass, in token id order.
  std::int32_t sample(const float* logits, int vocab, const SamplingParams& p, double u);

 private:
  std::vector<std::pair<float, std::int32_t>> cand_;  // (scaled logit, token)
  std::vector<double> weight_;
  std::vector<std::size_t> order_;
  std::vector<std::pair<float, std::int32_t>> scratch_;
};

}  // namespace llmbench
