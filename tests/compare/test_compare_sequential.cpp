// The adaptive gate's sequential rule (tools/compare/compare_sequential.h): Student's t against
// scipy values, the spending function and look schedule with exact values, single decisions by
// hand, and issue 41's targets on seeded simulated gates: A/A ends "same" with a false-regression
// rate within alpha, a 20% slowdown is decided "slower" within 10 rounds.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "kernels/common/error.h"
#include "tools/compare/compare_sequential.h"

using namespace llmbench;

TEST(SequentialStats, StudentTAgainstScipy) {
  // scipy.stats.t.sf(t, df) (df = 2 in closed form: (1 - t / sqrt(t^2 + 2)) / 2)
  EXPECT_NEAR(student_t_sf(2.0, 5), 0.050969739, 1e-8);
  EXPECT_NEAR(student_t_sf(1.0, 1), 0.25, 1e-12);  // Cauchy: 1/4 exactly
  EXPECT_NEAR(student_t_sf(0.0, 7), 0.5, 1e-12);
  EXPECT_NEAR(student_t_sf(-2.0, 5), 1 - 0.050969739, 1e-8);
  EXPECT_NEAR(student_t_sf(4.0, 30), 0.000190922818, 1e-11);
  EXPECT_NEAR(student_t_sf(3.0, 2), 0.047732983, 1e-8);
  // scipy.stats.t.isf(q, df)
  EXPECT_NEAR(student_t_isf(0.025, 10), 2.228138852, 1e-7);
  EXPECT_NEAR(student_t_isf(0.005, 4), 4.604094871, 1e-7);
  EXPECT_NEAR(student_t_isf(0.975, 10), -2.228138852, 1e-7);
  EXPECT_EQ(student_t_sf(INFINITY, 3), 0.0);
  EXPECT_THROW(student_t_sf(1.0, 0), Error);
}

TEST(SequentialStats, PocockSpendingAndTheLooks) {
  EXPECT_DOUBLE_EQ(pocock_spending(1.0, 0.05), 0.05);
  EXPECT_DOUBLE_EQ(pocock_spending(0.0, 0.05), 0.0);
  EXPECT_NEAR(pocock_spending(0.5, 0.05), 0.05 * std::log(1 + (std::exp(1.0) - 1) / 2), 1e-15);
  const auto looks = sequential_looks(30, 0.05);
  std::vector<int> at;
  double sum = 0;
  for (const Look& l : looks) {
    at.push_back(l.round);
    sum += l.level;
    EXPECT_GT(l.level, 0);
  }
  EXPECT_EQ(at, (std::vector<int>{5, 7, 10, 15, 22, 30}));
  EXPECT_NEAR(sum, 0.05, 1e-15);  // every look together spends alpha, no more
  EXPECT_NEAR(looks[0].level, 0.05 * std::log(1 + (std::exp(1.0) - 1) * 5 / 30), 1e-15);
  // Fewer rounds than the first look: one look at the end, spending everything.
  const auto short_gate = sequential_looks(3, 0.05);
  ASSERT_EQ(short_gate.size(), 1u);
  EXPECT_EQ(short_gate[0].round, 3);
  EXPECT_DOUBLE_EQ(short_gate[0].level, 0.05);
  EXPECT_EQ(sequential_looks(6, 0.05).size(), 2u);  // 5, 6
}

TEST(SequentialDecision, SlowerFasterSameAndUndecidedByHand) {
  // d = log ratios with mean 0.2, sd 0.02: t = 0.2 / (0.02 / sqrt(5)) = 22.4, p ~ 2.4e-5.
  const std::vector<double> slow = {0.18, 0.20, 0.22, 0.19, 0.21};
  SequentialDecision s = decide_sequential(slow, 0.01, 0.05, false);
  EXPECT_TRUE(s.decided);
  EXPECT_EQ(s.verdict, Verdict::kSlower);
  EXPECT_NEAR(s.mean, 0.2, 1e-12);
  const double se = std::sqrt(0.00025) / std::sqrt(5.0);  // sample variance 0.001 / 4
  EXPECT_NEAR(s.p_value, 2 * student_t_sf(0.2 / se, 4), 1e-12);
  EXPECT_NEAR(s.ci_low, std::exp(0.2 - student_t_isf(0.01, 4) * se), 1e-12);
  // Throughput: the same ratios are an improvement.
  EXPECT_EQ(decide_sequential(slow, 0.01, 0.05, true).verdict, Verdict::kFaster);
  // Tight around 0: the interval lies inside +-log(1.05): same.
  const std::vector<double> flat = {0.005, -0.004, 0.001, 0.0, -0.002, 0.003};
  s = decide_sequential(flat, 0.01, 0.05, false);
  EXPECT_TRUE(s.decided);
  EXPECT_EQ(s.verdict, Verdict::kSame);
  // The same data with a 0.1% margin cannot be "same": undecided.
  s = decide_sequential(flat, 0.01, 0.001, false);
  EXPECT_FALSE(s.decided);
  EXPECT_EQ(s.verdict, Verdict::kTooFew);
  // Significant but inside the margin (+2% with a 5% margin): "same" once the interval fits.
  EXPECT_EQ(decide_sequential({0.021, 0.019, 0.020, 0.022, 0.018}, 0.01, 0.05, false).verdict,
            Verdict::kSame);
  // Every round the same ratio: no scatter, decided by the sign of the mean.
  EXPECT_EQ(decide_sequential({0.1, 0.1, 0.1}, 0.01, 0.05, false).verdict, Verdict::kSlower);
  EXPECT_EQ(decide_sequential({0, 0, 0}, 0.01, 0.05, false).verdict, Verdict::kSame);
  EXPECT_THROW(decide_sequential({0.1}, 0.01, 0.05, false), Error);
}

namespace {

// A fake run of one case whose three repetitions are `ttft` -+ 1%.
LoadedRun one_case_run(std::int64_t id, double ttft) {
  LoadedRun run;
  run.path = "x.db";
  run.run.id = id;
  CaseSamples c;
  c.case_id = 1;
  c.model = "tiny";
  c.dtype = "fp32";
  c.backend = "cpu";
  c.batch = 1;
  c.prompt_len = 8;
  c.max_new_tokens = 1;
  c.threads = 1;
  c.status = "ok";
  c.ttft_ms = {ttft * 0.99, ttft, ttft * 1.01};
  c.e2e_ms = {ttft * 0.99 + 1, ttft + 1, ttft * 1.01 + 1};
  c.throughput_tok_s = {1, 1, 1};
  run.cases.push_back(std::move(c));
  return run;
}

struct SimulatedGate {
  GateReport report;
  int rounds = 0;
};

// A gate whose candidate is `ratio` x the base, both with a shared per-round weather factor
// (the machine's minute) and their own log-normal scatter `sigma`, run through SequentialGate
// round by round as `compare --run --rounds auto` does.
SimulatedGate simulate(std::uint64_t seed, double ratio, double sigma, int max_rounds,
                       const CompareSettings& s) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0.0, 1.0);
  std::vector<LoadedRun> runs;
  runs.reserve(std::size_t(2 * max_rounds));
  std::vector<GateRound> rounds;
  SequentialGate gate(max_rounds, s);
  for (int r = 1; r <= max_rounds; ++r) {
    const double weather = std::exp(0.2 * z(rng));  // shared by both sides of the round
    runs.push_back(one_case_run(r, 10 * weather * std::exp(sigma * z(rng))));
    runs.push_back(one_case_run(r, 10 * ratio * weather * std::exp(sigma * z(rng))));
    rounds.push_back({r, r % 2 == 0, &runs[runs.size() - 2], &runs.back()});
    if (!gate.after_round(rounds)) break;
  }
  SimulatedGate out;
  out.report = build_gate_report(rounds, s);
  gate.apply(out.report);
  out.rounds = gate.rounds_run();
  return out;
}

}  // namespace

TEST(SequentialGate, AaEndsSameWithAFalseRegressionRateWithinAlpha) {
  CompareSettings s;
  s.metrics = {Metric::kTtft};
  int same = 0, slower = 0, rounds = 0, most = 0;
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    const SimulatedGate g = simulate(seed, 1.0, 0.03, 30, s);
    const Verdict v = g.report.cases.at(0).metrics.at(0).verdict;
    same += v == Verdict::kSame;
    slower += v == Verdict::kSlower;
    rounds += g.rounds;
    most = std::max(most, g.rounds);
  }
  std::printf("A/A, 3%% scatter per side, margin 5%%: %d of 50 same, %d slower; rounds mean %.1f, "
              "most %d (of 30)\n", same, slower, rounds / 50.0, most);
  EXPECT_LE(slower, int(0.05 * 50));  // false-regression rate <= alpha
  EXPECT_GE(same, 47);
  EXPECT_LE(most, 30);
}

TEST(SequentialGate, TwentyPercentSlowerIsDecidedWithinTenRounds) {
  CompareSettings s;
  s.metrics = {Metric::kTtft, Metric::kE2e};
  int decided = 0, most = 0;
  for (std::uint64_t seed = 100; seed < 150; ++seed) {
    const SimulatedGate g = simulate(seed, 1.2, 0.05, 30, s);
    bool all = true;
    for (const PairedMetric& m : g.report.cases.at(0).metrics) all = all && m.verdict == Verdict::kSlower;
    decided += all && g.rounds <= 10;
    most = std::max(most, g.rounds);
    EXPECT_TRUE(g.report.regressed());
    EXPECT_NE(g.report.stopping.find("all 2 metric results decided"), std::string::npos);
  }
  std::printf("20%% slower, 5%% scatter per side: %d of 50 decided slower within 10 rounds, most %d\n",
              decided, most);
  EXPECT_GE(decided, 48);
}

TEST(SequentialGate, BudgetRunningOutIsInconclusive) {
  CompareSettings s;
  s.metrics = {Metric::kTtft};
  s.threshold = 0;  // no equivalence margin: an A/A gate can never say "same"
  const SimulatedGate g = simulate(7, 1.0, 0.03, 8, s);
  EXPECT_EQ(g.rounds, 8);
  const PairedMetric& m = g.report.cases.at(0).metrics.at(0);
  EXPECT_EQ(m.verdict, Verdict::kTooFew);
  EXPECT_FALSE(m.decided_at);
  EXPECT_TRUE(g.report.inconclusive());
  ASSERT_FALSE(g.report.warnings.empty());
  EXPECT_NE(g.report.warnings[0].find("--max-rounds 8 ran out"), std::string::npos)
      << g.report.warnings[0];
  EXPECT_NE(g.report.stopping.find("1 of 1 metric results undecided after 8 round(s)"),
            std::string::npos) << g.report.stopping;
}
