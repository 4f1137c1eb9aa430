// The sampler (engine/serving/sampler.h) against a plain reference and known distributions:
// top_k=1, a temperature near 0 and a tiny top_p all give the argmax; min_p keeps exactly the
// tokens above its bound; the filters against a masked, written-out reference on random rows;
// the empirical frequencies of a known 4-way distribution over 20000 draws within 5 sigma; the
// same seed the same draws and different seeds different ones; log-probabilities as
// log_softmax. Fixed seeds throughout: every expectation is exact or has a stated bound.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <set>

#include "engine/bench/prompts.h"
#include "engine/model/cpu_backend.h"
#include "engine/model/model.h"
#include "engine/serving/sampler.h"
#include "engine/serving/scheduler.h"

namespace llmbench {
namespace {

std::vector<float> random_logits(int vocab, std::uint32_t seed, float scale = 3.0f) {
  std::mt19937 g(seed);
  std::normal_distribution<float> n(0.0f, scale);
  std::vector<float> l(std::size_t(vocab), 0.0f);
  for (float& x : l) x = n(g);
  return l;
}

// The filters written out plainly: full probabilities, a mask per filter, the inverse CDF over
// the kept tokens in token id order.
std::int32_t reference_sample(const std::vector<float>& logits, const SamplingParams& p,
                              double u) {
  const std::size_t V = logits.size();
  std::vector<double> z(V);
  for (std::size_t j = 0; j < V; ++j) z[j] = double(logits[j] * (1.0f / p.temperature));
  std::vector<std::int32_t> order(V);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return z[a] > z[b]; });
  std::vector<bool> keep(V, true);
  if (p.top_k > 0)
    for (std::size_t r = std::size_t(p.top_k); r < V; ++r) keep[std::size_t(order[r])] = false;
  auto probs = [&] {  // softmax over the kept tokens
    std::vector<double> q(V, 0.0);
    const double m = z[std::size_t(order[0])];
    double s = 0.0;
    for (std::size_t j = 0; j < V; ++j)
      if (keep[j]) s += q[j] = std::exp(z[j] - m);
    for (double& x : q) x /= s;
    return q;
  };
  if (p.top_p < 1.0f) {
    const std::vector<double> q = probs();
    double cum = 0.0;
    bool reached = false;
    for (std::int32_t t : order) {
      if (!keep[std::size_t(t)]) continue;
      if (reached) keep[std::size_t(t)] = false;
      cum += q[std::size_t(t)];
      reached = reached || cum >= double(p.top_p);
    }
  }
  if (p.min_p > 0.0f) {
    const std::vector<double> q = probs();
    const double top = q[std::size_t(order[0])];
    for (std::size_t j = 0; j < V; ++j)
      if (q[j] < double(p.min_p) * top) keep[j] = false;
  }
  // The draw in token id order.
  const std::vector<double> q = probs();
  double cum = 0.0;
  std::int32_t last = order[0];
  for (std::int32_t t = 0; t < std::int32_t(V); ++t) {
    if (!keep[std::size_t(t)]) continue;
    cum += q[std::size_t(t)];
    last = t;
    if (cum > u) return t;
  }
  return last;
}

TEST(Sampler, ArgmaxIsTheFirstLargest) {
  const std::vector<float> l = {1.0f, 3.0f, -2.0f, 3.0f, 0.5f};
  EXPECT_EQ(argmax_token(l.data(), 5), 1);
}

TEST(Sampler, TopK1AndTinyTemperatureAndTinyTopPAreGreedy) {
  Sampler s;
  for (std::uint32_t seed = 1; seed <= 20; ++seed) {
    const std::vector<float> l = random_logits(1000, seed);
    const int V = int(l.size());
    const std::int32_t greedy = argmax_token(l.data(), V);
    // The largest probability is well above 1% on these rows, so top_p 0.01 keeps one token.
    double sum = 0.0;
    for (float x : l) sum += std::exp(double(x - l[std::size_t(greedy)]));
    ASSERT_GT(1.0 / sum, 0.01);
    for (std::uint64_t i = 0; i < 50; ++i) {
      const double u = sampling_uniform(seed, i);
      SamplingParams k1;
      k1.temperature = 1.5f;
      k1.top_k = 1;
      EXPECT_EQ(s.sample(l.data(), V, k1, u), greedy);
      SamplingParams cold;
      cold.temperature = 1e-4f;  // logit gaps of ~0.01 become ~100: exp(-100) of the mass
      EXPECT_EQ(s.sample(l.data(), V, cold, u), greedy);
      SamplingParams nucleus;
      nucleus.temperature = 1.0f;
      nucleus.top_p = 0.01f;
      EXPECT_EQ(s.sample(l.data(), V, nucleus, u), greedy);
    }
  }
}

TEST(Sampler, AgreesWithThePlainReference) {
  Sampler s;
  int differing_from_greedy = 0;
  for (std::uint32_t seed = 1; seed <= 30; ++seed) {
    const std::vector<float> l = random_logits(733, seed, 1.5f);
    SamplingParams p;
    p.temperature = 0.5f + 0.1f * float(seed % 10);
    p.top_k = seed % 3 == 0 ? 0 : int(5 + seed * 7);
    p.top_p = seed % 4 == 0 ? 1.0f : 0.6f + 0.01f * float(seed);
    p.min_p = seed % 5 == 0 ? 0.0f : 0.02f * float(seed % 5);
    for (std::uint64_t i = 0; i < 40; ++i) {
      const double u = sampling_uniform(1000 + seed, i);
      const std::int32_t got = s.sample(l.data(), int(l.size()), p, u);
      ASSERT_EQ(got, reference_sample(l, p, u)) << "seed " << seed << " draw " << i;
      differing_from_greedy += got != argmax_token(l.data(), int(l.size()));
    }
  }
  EXPECT_GT(differing_from_greedy, 300);  // the comparison is over real draws, not argmaxes
}

// Frequencies of 20000 draws against the expected probabilities: within 5 standard errors.
void expect_frequencies(const std::vector<float>& logits, const SamplingParams& p,
                        const std::vector<double>& expected, std::uint64_t seed) {
  constexpr int kDraws = 20000;
  Sampler s;
  std::vector<int> count(logits.size(), 0);
  for (int i = 0; i < kDraws; ++i)
    ++count[std::size_t(s.sample(logits.data(), int(logits.size()), p, sampling_uniform(seed, std::uint64_t(i))))];
  for (std::size_t j = 0; j < logits.size(); ++j) {
    const double f = double(count[j]) / kDraws;
    const double se = std::sqrt(std::max(expected[j] * (1 - expected[j]), 1e-12) / kDraws);
    EXPECT_NEAR(f, expected[j], 5 * se + 1e-12) << "token " << j;
  }
}

TEST(Sampler, FourWayDistributionFrequencies) {
  const std::vector<float> l = {std::log(0.1f), std::log(0.2f), std::log(0.3f), std::log(0.4f)};
  SamplingParams p;
  p.temperature = 1.0f;
  expect_frequencies(l, p, {0.1, 0.2, 0.3, 0.4}, 1);
  // Temperature 2 takes square roots of the probabilities.
  p.temperature = 2.0f;
  const double r = std::sqrt(0.1) + std::sqrt(0.2) + std::sqrt(0.3) + std::sqrt(0.4);
  expect_frequencies(l, p, {std::sqrt(0.1) / r, std::sqrt(0.2) / r, std::sqrt(0.3) / r,
                            std::sqrt(0.4) / r}, 2);
  // top_k 2: the two largest, renormalised.
  p.temperature = 1.0f;
  p.top_k = 2;
  expect_frequencies(l, p, {0, 0, 0.3 / 0.7, 0.4 / 0.7}, 3);
  // top_p 0.5: 0.4 does not reach it, 0.4 + 0.3 does.
  p.top_k = 0;
  p.top_p = 0.5f;
  expect_frequencies(l, p, {0, 0, 0.3 / 0.7, 0.4 / 0.7}, 4);
  // min_p 0.45: 0.4 x 0.45 = 0.18, so 0.1 goes.
  p.top_p = 1.0f;
  p.min_p = 0.45f;
  expect_frequencies(l, p, {0, 0.2 / 0.9, 0.3 / 0.9, 0.4 / 0.9}, 5);
  // All three in vLLM's order: top_k 3 drops 0.1; top_p 0.6 of {4, 3, 2}/9 keeps {4, 3};
  // min_p 0.7 keeps 3/7 (0.75 of 4/7) as well.
  p.top_k = 3;
  p.top_p = 0.6f;
  p.min_p = 0.7f;
  expect_frequencies(l, p, {0, 0, 3.0 / 7, 4.0 / 7}, 6);
  // min_p 0.8 leaves 4/7 alone: every draw the most likely token.
  p.min_p = 0.8f;
  expect_frequencies(l, p, {0, 0, 0, 1}, 7);
}

TEST(Sampler, MinPKeepsExactlyTheTokensAboveItsBound) {
  // Probabilities 0.5, 0.25, 0.125, 0.0625, 0.0625: min_p 0.2 keeps the first three.
  const std::vector<float> l = {std::log(0.5f), std::log(0.25f), std::log(0.125f),
                                std::log(0.0625f), std::log(0.0625f)};
  SamplingParams p;
  p.temperature = 1.0f;
  p.min_p = 0.2f;
  Sampler s;
  std::set<std::int32_t> seen;
  for (std::uint64_t i = 0; i < 2000; ++i)
    seen.insert(s.sample(l.data(), int(l.size()), p, sampling_uniform(9, i)));
  EXPECT_EQ(seen, (std::set<std::int32_t>{0, 1, 2}));
}

TEST(Sampler, SameSeedSameDrawsDifferentSeedDifferentDraws) {
  const std::vector<float> l = random_logits(32000, 4, 1.0f);
  SamplingParams p;
  p.temperature = 1.0f;
  p.top_p = 0.95f;
  Sampler s;
  auto draws = [&](std::uint64_t seed) {
    std::vector<std::int32_t> out;
    for (std::uint64_t i = 0; i < 32; ++i)
      out.push_back(s.sample(l.data(), int(l.size()), p, sampling_uniform(seed, i)));
    return out;
  };
  const auto a = draws(7);
  EXPECT_EQ(a, draws(7));
  const auto b = draws(8);
  int same = 0;
  for (std::size_t i = 0; i < a.size(); ++i) same += a[i] == b[i];
  EXPECT_LT(same, 4);  // a flat 32000-way row: two seeds agree on a draw with p ~ 1e-3
  // The draws are uniform: their mean over 10000 is 0.5 within 5 sigma (0.0029 each).
  double sum = 0.0;
  for (std::uint64_t i = 0; i < 10000; ++i) {
    const double u = sampling_uniform(3, i);
    ASSERT_GT(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
  }
  EXPECT_NEAR(sum / 10000, 0.5, 5 * 0.0029);
}

TEST(Sampler, LogprobsAreLogSoftmax) {
  const std::vector<float> l = random_logits(100, 11);
  const SampledLogprobs lp = logprobs_of(l.data(), 100, 42, 5);
  double m = *std::max_element(l.begin(), l.end()), s = 0.0;
  for (float x : l) s += std::exp(double(x) - m);
  EXPECT_NEAR(lp.logprob, double(l[42]) - m - std::log(s), 1e-5);
  ASSERT_EQ(lp.top.size(), 5u);
  EXPECT_EQ(lp.top[0].token, argmax_token(l.data(), 100));
  for (std::size_t i = 1; i < lp.top.size(); ++i) EXPECT_GE(lp.top[i - 1].logprob, lp.top[i].logprob);
  for (const TokenLogprob& t : lp.top)
    EXPECT_NEAR(t.logprob, double(l[std::size_t(t.token)]) - m - std::log(s), 1e-5);
  EXPECT_TRUE(logprobs_of(l.data(), 100, 3, 0).top.empty());
}

// In the scheduler: a seeded request draws the same tokens alone and beside others, its
// log-probabilities are log_softmax of the logits its token came from, and a greedy request
// asking for log-probabilities keeps the argmax tokens.
TEST(Sampler, SchedulerDrawsPerRequestWhateverSharesTheStep) {
  CpuBackend be(2);
  const ModelConfig c = *find_preset("tiny");
  Model model(c, load_weights(c, RandomWeights(1), be), be);
  SchedulerOptions o;
  o.keep_logits = true;
  GenerationRequest seeded{synthetic_prompts(5, 1, 9, c.vocab_size, false), 20, true};
  seeded.sampling.temperature = 1.5f;
  seeded.sampling.top_k = 40;
  seeded.sampling.seed = 77;
  seeded.sampling.logprobs = 2;
  auto run = [&](const std::vector<GenerationRequest>& reqs) {
    Scheduler sched(model, o);
    for (std::size_t i = 0; i < reqs.size(); ++i) sched.add(i, reqs[i]);
    std::vector<std::vector<std::int32_t>> out(reqs.size());
    for (int step = 0; step < 200 && !sched.idle(); ++step)
      for (RequestUpdate& u : sched.step()) {
        out[u.id].push_back(*u.token);
        const GenerationRequest& r = reqs[u.id];
        if (r.sampling.logprobs < 0) continue;
        EXPECT_TRUE(u.logprobs.has_value());
        const SampledLogprobs want = logprobs_of(u.logits.data(), c.vocab_size, *u.token, 0);
        EXPECT_FLOAT_EQ(u.logprobs->logprob, want.logprob);
        EXPECT_EQ(int(u.logprobs->top.size()), r.sampling.logprobs);
        if (r.sampling.greedy()) {
          EXPECT_EQ(*u.token, argmax_token(u.logits.data(), c.vocab_size));
        }
      }
    return out;
  };
  const auto alone = run({seeded});
  GenerationRequest other{synthetic_prompts(6, 1, 30, c.vocab_size, false), 12, true};
  other.sampling.temperature = 0.7f;
  other.sampling.seed = 3;
  GenerationRequest greedy{synthetic_prompts(7, 1, 4, c.vocab_size, false), 10, true};
  greedy.sampling.logprobs = 0;
  const auto shared = run({seeded, other, greedy});
  EXPECT_EQ(shared[0], alone[0]);
  // Rows are sampled in parallel: one thread gives the same tokens.
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  EXPECT_EQ(run({seeded, other, greedy}), shared);
  omp_set_num_threads(threads);
  GenerationRequest plain = greedy;
  plain.sampling.logprobs = -1;
  EXPECT_EQ(shared[2], run({plain})[0]);  // log-probabilities do not change greedy tokens
  GenerationRequest reseeded = seeded;
  reseeded.sampling.seed = 78;
  EXPECT_NE(run({reseeded})[0], alone[0]);
}

}  // namespace
}  // namespace llmbench
