// Sampling one token from a row of logits (see sampler.h).
#include "engine/serving/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/model/rng.h"

namespace llmbench {

namespace {

// Most likely first; equal values by lower token id, so every order here is deterministic.
bool before(const std::pair<float, std::int32_t>& a, const std::pair<float, std::int32_t>& b) {
  return a.first > b.first || (a.first == b.first && a.second < b.second);
}

constexpr std::uint64_t kSamplingStream = fnv1a64("sampling");

}  // namespace

std::int32_t argmax_token(const float* logits, int vocab) {
  std::int32_t best = 0;
  for (int j = 1; j < vocab; ++j)
    if (logits[j] > logits[best]) best = j;  // strict: the first of equals stays
  return best;
}

double sampling_uniform(std::uint64_t seed, std::uint64_t index) {
  const std::uint64_t bits = stream_u64(stream_key(seed, kSamplingStream), index) >> 11;
  return (double(bits) + 0.5) * (1.0 / 9007199254740992.0);  // centred in its 2^-53 bucket
}

SampledLogprobs logprobs_of(const float* logits, int vocab, std::int32_t token, int n) {
  float m = -std::numeric_limits<float>::infinity();
  for (int j = 0; j < vocab; ++j) m = std::max(m, logits[j]);
  double sum = 0.0;
  for (int j = 0; j < vocab; ++j) sum += std::exp(double(logits[j]) - m);
  const double lse = double(m) + std::log(sum);
  SampledLogprobs out;
  out.logprob = float(double(logits[token]) - lse);
  n = std::clamp(n, 0, vocab);
  if (n == 0) return out;
  std::vector<std::pair<float, std::int32_t>> all(std::size_t(vocab), {0.0f, 0});
  for (int j = 0; j < vocab; ++j) all[std::size_t(j)] = {logits[j], j};
  std::partial_sort(all.begin(), all.begin() + n, all.end(), before);
  for (int i = 0; i < n; ++i)
    out.top.push_back({all[std::size_t(i)].second, float(double(all[std::size_t(i)].first) - lse)});
  return out;
}

std::int32_t Sampler::sample(const float* logits, int vocab, const SamplingParams& p, double u) {
  // 1. Temperature. A NaN logit is never kept (it has no probability).
  const float inv_t = 1.0f / p.temperature;
  cand_.clear();
  bool cut_k = false;
  if (p.top_k > 0 && std::int64_t(p.top_k) * 8 < vocab) {
    // 2 (a small k). One pass keeping the k best in a heap whose top is the worst of them:
    // most tokens are refused by one comparison, and the vocabulary is never copied.
    for (int j = 0; j < vocab; ++j) {
      if (std::isnan(logits[j])) continue;
      const std::pair<float, std::int32_t> c{logits[j] * inv_t, j};
      if (cand_.size() < std::size_t(p.top_k)) {
        cand_.push_back(c);
        std::push_heap(cand_.begin(), cand_.end(), before);
      } else if (before(c, cand_.front())) {
        std::pop_heap(cand_.begin(), cand_.end(), before);
        cand_.back() = c;
        std::push_heap(cand_.begin(), cand_.end(), before);
      }
    }
    cut_k = true;
  } else {
    for (int j = 0; j < vocab; ++j)
      if (!std::isnan(logits[j])) cand_.push_back({logits[j] * inv_t, j});
    // 2. top_k: the k largest (nth_element leaves them in no particular order).
    if (p.top_k > 0 && std::size_t(p.top_k) < cand_.size()) {
      std::nth_element(cand_.begin(), cand_.begin() + (p.top_k - 1), cand_.end(), before);
      cand_.resize(std::size_t(p.top_k));
      cut_k = true;
    }
  }
  if (cand_.empty()) return argmax_token(logits, vocab);
  // Weights relative to the most likely token (weight 1): probabilities up to one factor.
  float m = cand_.front().first;
  for (const auto& c : cand_) m = std::max(m, c.first);
  weight_.resize(cand_.size());
  double total = 0.0;
  for (std::size_t i = 0; i < cand_.size(); ++i)
    total += weight_[i] = std::exp(double(cand_[i].first - m));

  // 3. top_p: the smallest most-likely-first prefix whose mass reaches top_p of the total.
  // Sorting all 32000 tokens costs milliseconds; the prefix lies among the tokens above any
  // weight bound whose tokens already hold that mass, so only those are sorted (the bound
  // falls by 2^8 per try, to 0: everything).
  bool sorted_by_id = !cut_k;  // the candidates are in token order unless top_k moved them
  std::size_t keep = cand_.size();
  if (p.top_p < 1.0f) {
    const double target = double(p.top_p) * total;
    for (double bound = 0.5;; bound = bound > 1e-300 ? bound * (1.0 / 256) : 0.0) {
      double mass = 0.0;
      std::size_t n = 0;
      for (std::size_t i = 0; i < cand_.size(); ++i)
        if (weight_[i] >= bound) {
          mass += weight_[i];
          std::swap(cand_[n], cand_[i]);
          std::swap(weight_[n], weight_[i]);
          ++n;
        }
      if (mass < target && bound > 0.0) continue;
      // Sort those n by weight (the order of the scaled logits), most likely first.
      order_.resize(n);
      for (std::size_t i = 0; i < n; ++i) order_[i] = i;
      std::sort(order_.begin(), order_.end(), [&](std::size_t a, std::size_t b) {
        return before(cand_[a], cand_[b]);
      });
      double cum = 0.0;
      keep = n;
      for (std::size_t r = 0; r < n; ++r) {
        cum += weight_[order_[r]];
        if (cum >= target) {
          keep = r + 1;
          break;
        }
      }
      scratch_.clear();
      for (std::size_t r = 0; r < keep; ++r) scratch_.push_back(cand_[order_[r]]);
      cand_.assign(scratch_.begin(), scratch_.end());
      for (std::size_t i = 0; i < keep; ++i) weight_[i] = std::exp(double(cand_[i].first - m));
      weight_.resize(keep);
      sorted_by_id = false;
      break;
    }
  }
  // The draw walks the kept tokens in token order (any fixed order samples the same
  // distribution; this one needs no sort of the whole vocabulary).
  if (!sorted_by_id) {
    order_.resize(keep);
    for (std::size_t i = 0; i < keep; ++i) order_[i] = i;
    std::sort(order_.begin(), order_.end(),
              [&](std::size_t a, std::size_t b) { return cand_[a].second < cand_[b].second; });
    scratch_.clear();
    std::vector<double> w;
    w.reserve(keep);
    for (std::size_t i : order_) scratch_.push_back(cand_[i]), w.push_back(weight_[i]);
    cand_.assign(scratch_.begin(), scratch_.end());
    weight_.assign(w.begin(), w.end());
  }

  // 4. min_p: below min_p x the largest probability (weight 1) goes.
  const double min_w = double(p.min_p);

  // 5. The draw: where u x (the kept mass) falls in the kept tokens' cumulative mass.
  double kept = 0.0;
  for (std::size_t i = 0; i < keep; ++i)
    if (weight_[i] >= min_w) kept += weight_[i];
  const double target = u * kept;
  double cum = 0.0;
  std::int32_t last = cand_.front().second;
  for (std::size_t i = 0; i < keep; ++i) {
    if (weight_[i] < min_w) continue;
    cum += weight_[i];
    last = cand_[i].second;
    if (cum > target) return last;
  }
  return last;  // rounding: u x kept at the very top
}

}  // namespace llmbench
