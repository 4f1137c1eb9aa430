// The adaptive gate of `llmbench compare --run --rounds auto` (the default): rounds continue
// until every metric of every compared case is decided -- slower, faster, or same within the
// equivalence margin -- or until --max-rounds, with the error rates controlled across the looks
// by alpha spending. Pure: the per-round log ratios come from the gate (compare_gate.h); the
// runner asks after each round whether to go on (compare_rounds.h). docs/ci.md, "Rounds until
// decided", says which rule and why.
//
// The rule, for one metric with per-round log ratios d_1..d_n (candidate over base, each round
// back to back), threshold t (the equivalence margin is +-log(1 + t)) and alpha:
//   looks     the gate looks after rounds first_look = min(5, max) and then each next = prev +
//             max(1, floor(prev / 2)) (5, 7, 10, 15, 22, 33, ...), and after max_rounds, which is
//             always a look: few looks, each with a usable share of alpha (with looks after
//             every round, each would get a few thousandths and a 20% change on this noisy
//             machine would need twice the rounds);
//   spending  Lan-DeMets with the Pocock-type function a(s) = alpha ln(1 + (e - 1) s) of the
//             information fraction s = n / max_rounds; look k may spend level_k = a(s_k) -
//             a(s_(k-1)) (a(s_0) = 0). Each look tests at its own increment, so by the union
//             bound the chance of any false verdict over all looks is at most a(1) = alpha
//             whatever the correlation between looks (a conservative form of the group-
//             sequential boundary, which would solve for slightly larger nominal levels by
//             recursive integration);
//   test      Student's t on d: mean m, standard error se = sd / sqrt(n), df = n - 1;
//             slower   two-sided p = 2 P(T_df > |m| / se) < level_k and exp(m) worse than 1 + t
//                      (above it for times, below 1 / (1 + t) for throughput);
//             faster   the same with exp(m) better than that factor;
//             same     both one-sided tests of equivalence (TOST) reject at level_k: the
//                      1 - 2 level_k interval m -+ t_(1 - level_k, df) se lies inside
//                      (-log(1 + t), log(1 + t));
//             otherwise the metric is undecided and the rounds go on.
//   A decided metric keeps its verdict. A metric still undecided after max_rounds ends the
//   gate inconclusive (exit 3): the budget ran out.
// Why Pocock-type spending and not O'Brien-Fleming's: OBF spends almost nothing at the first
// looks (a level of 3e-4 at a third of the rounds), so even a 20% slowdown would run most of the
// budget; a CI gate wants the clear cases decided early and pays for it with a wider interval at
// the last look. Why the t-test on log ratios and not the signed-rank test the fixed-rounds gate
// uses: the signed-rank p-value cannot go below 2^(1 - n) (0.0625 at 5 rounds), above every
// early level, so no early decision would be possible; per-round log ratios of medians are close
// to normal, and the fixed-rounds report still prints the signed-rank p-value beside the
// sequential verdict.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "tools/compare/compare_gate.h"

namespace llmbench {

inline constexpr int kSequentialFirstLook = 5;

// Upper tail P(T > t) of Student's t with df > 0 degrees of freedom, and its inverse.
double student_t_sf(double t, double df);
double student_t_isf(double q, double df);

// a(s) = alpha ln(1 + (e - 1) s), s clamped to [0, 1].
double pocock_spending(double s, double alpha);

struct Look {
  int round = 0;      // look after this many rounds
  double level = 0;   // the alpha this look spends
};
// The looks of a gate of at most max_rounds rounds (max_rounds >= 1).
std::vector<Look> sequential_looks(int max_rounds, double alpha);

struct SequentialDecision {
  Verdict verdict = Verdict::kTooFew;  // kTooFew: undecided
  bool decided = false;
  int rounds = 0;        // rounds of d at the look
  double level = 0;      // the look's level
  double mean = 0;       // mean log ratio
  double p_value = 1;    // two-sided t-test p-value
  double ci_low = 1, ci_high = 1;  // exp of the 1 - 2 level interval of the mean
};

// One metric at one look (see above). d must hold at least 2 values.
SequentialDecision decide_sequential(const std::vector<double>& d, double level, double threshold,
                                     bool higher_is_better);

// The adaptive gate's state across looks: decisions frozen as they are made.
class SequentialGate {
 public:
  SequentialGate(int max_rounds, const CompareSettings& settings);

  // Called after each round with every round so far; returns true when the gate should run
  // another round (some metric is undecided and rounds remain).
  bool after_round(const std::vector<GateRound>& rounds);

  // Puts the decisions into the final report of all the rounds run: each compared metric gets
  // its frozen verdict, or kTooFew when it was never decided; recounts the summary, replaces
  // the inconclusive warning, and sets g.stopping.
  void apply(GateReport& g) const;

  int rounds_run() const { return rounds_run_; }
  bool all_decided() const { return all_decided_; }
  const std::vector<Look>& looks() const { return looks_; }

 private:
  int max_rounds_;
  CompareSettings settings_;
  std::vector<Look> looks_;
  std::vector<std::pair<std::string, SequentialDecision>> decided_;  // "case\tmetric"
  int rounds_run_ = 0;
  bool all_decided_ = false;

  const SequentialDecision* find(const std::string& key) const;
};

}  // namespace llmbench
