// The adaptive gate's sequential rule (see compare_sequential.h).
#include "tools/compare/compare_sequential.h"

#include <algorithm>
#include <cmath>

#include <fmt/core.h>

#include "engine/bench/stats.h"
#include "kernels/common/error.h"

namespace llmbench {

namespace {

// Continued fraction of the regularised incomplete beta function (modified Lentz), valid for
// x < (a + 1) / (a + b + 2).
double beta_cf(double a, double b, double x) {
  constexpr double kTiny = 1e-300, kEps = 1e-15;
  double c = 1.0, d = 1.0 - (a + b) * x / (a + 1.0);
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1.0 / d;
  double h = d;
  for (int m = 1; m <= 500; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
    d = 1.0 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1.0 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    h *= d * c;
    aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
    d = 1.0 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1.0 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    const double del = d * c;
    h *= del;
    if (std::fabs(del - 1.0) < kEps) break;
  }
  return h;
}

// I_x(a, b).
double inc_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) +
                                a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1.0) / (a + b + 2.0)) return front * beta_cf(a, b, x) / a;
  return 1.0 - front * beta_cf(b, a, 1.0 - x) / b;
}

std::string key_of(const std::string& label, Metric m) {
  return label + "\t" + metric_info(m).column;
}

}  // namespace

double student_t_sf(double t, double df) {
  LLMBENCH_CHECK(df > 0, "Student's t needs df > 0");
  if (std::isnan(t)) return NAN;
  if (std::isinf(t)) return t > 0 ? 0.0 : 1.0;
  const double tail = 0.5 * inc_beta(df / 2.0, 0.5, df / (df + t * t));
  return t >= 0 ? tail : 1.0 - tail;
}

double student_t_isf(double q, double df) {
  LLMBENCH_CHECK(q > 0 && q < 1, "student_t_isf: q outside (0, 1)");
  if (q == 0.5) return 0;
  if (q > 0.5) return -student_t_isf(1.0 - q, df);
  double lo = 0, hi = 1;
  while (student_t_sf(hi, df) > q) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = (lo + hi) / 2;
    (student_t_sf(mid, df) > q ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

double pocock_spending(double s, double alpha) {
  s = std::clamp(s, 0.0, 1.0);
  return alpha * std::log1p((std::exp(1.0) - 1.0) * s);
}

std::vector<Look> sequential_looks(int max_rounds, double alpha) {
  LLMBENCH_CHECK(max_rounds >= 1, "sequential_looks: max_rounds below 1");
  std::vector<int> at;
  for (int r = std::min(kSequentialFirstLook, max_rounds); r < max_rounds; r += std::max(1, r / 2))
    at.push_back(r);
  at.push_back(max_rounds);
  std::vector<Look> looks;
  double spent = 0;
  for (int r : at) {
    const double a = pocock_spending(double(r) / double(max_rounds), alpha);
    looks.push_back({r, a - spent});
    spent = a;
  }
  return looks;
}

SequentialDecision decide_sequential(const std::vector<double>& d, double level, double threshold,
                                     bool higher_is_better) {
  LLMBENCH_CHECK(d.size() >= 2, "decide_sequential: needs at least 2 rounds");
  LLMBENCH_CHECK(level > 0 && level < 0.5, "decide_sequential: level outside (0, 0.5)");
  SequentialDecision s;
  s.rounds = int(d.size());
  s.level = level;
  s.mean = mean(d);
  const double n = double(d.size());
  const double se = stdev(d) / std::sqrt(n);
  const double df = n - 1.0;
  const double margin = std::log1p(threshold);
  double half = 0;
  if (se > 0) {
    s.p_value = 2.0 * student_t_sf(std::fabs(s.mean) / se, df);
    half = student_t_isf(level, df) * se;
  } else {
    s.p_value = s.mean == 0 ? 1.0 : 0.0;  // every round gave the same ratio
  }
  s.ci_low = std::exp(s.mean - half);
  s.ci_high = std::exp(s.mean + half);
  // "worse" as a log factor: positive when the candidate is worse.
  const double worse = higher_is_better ? -s.mean : s.mean;
  if (s.p_value < level && worse > margin) {
    s.verdict = Verdict::kSlower;
  } else if (s.p_value < level && worse < -margin) {
    s.verdict = Verdict::kFaster;
  } else if (s.mean - half > -margin && s.mean + half < margin) {
    s.verdict = Verdict::kSame;
  } else {
    return s;
  }
  s.decided = true;
  return s;
}

SequentialGate::SequentialGate(int max_rounds, const CompareSettings& settings)
    : max_rounds_(max_rounds), settings_(settings), looks_(sequential_looks(max_rounds, settings.alpha)) {}

const SequentialDecision* SequentialGate::find(const std::string& key) const {
  for (const auto& [k, s] : decided_)
    if (k == key) return &s;
  return nullptr;
}

bool SequentialGate::after_round(const std::vector<GateRound>& rounds) {
  rounds_run_ = int(rounds.size());
  const auto look = std::find_if(looks_.begin(), looks_.end(),
                                 [&](const Look& l) { return l.round == rounds_run_; });
  if (look == looks_.end()) return rounds_run_ < max_rounds_;
  const GateReport g = build_gate_report(rounds, settings_);
  if (g.rounds_complete == 0) return false;  // nothing ran on both sides: nothing to wait for
  bool all = true;
  int metrics = 0;
  for (const GateCase& c : g.cases) {
    if (c.status != CaseStatus::kCompared) continue;
    for (const PairedMetric& m : c.metrics) {
      if (m.verdict == Verdict::kNotApplicable) continue;
      ++metrics;
      const std::string key = key_of(c.label, m.metric);
      if (find(key)) continue;
      if (m.log_ratios.size() >= 2) {
        SequentialDecision s = decide_sequential(m.log_ratios, look->level, settings_.threshold,
                                                 metric_info(m.metric).higher_is_better);
        if (s.decided) {
          decided_.emplace_back(key, s);
          continue;
        }
      }
      all = false;
    }
  }
  all_decided_ = all && metrics > 0;
  return !all_decided_ && rounds_run_ < max_rounds_;
}

void SequentialGate::apply(GateReport& g) const {
  const CompareSummary before = g.summary;
  if (summary_inconclusive(before) && !g.warnings.empty() &&
      g.warnings.front() == inconclusive_warning(before, "rounds"))
    g.warnings.erase(g.warnings.begin());
  CompareSummary& s = g.summary;
  s.slower = s.faster = s.same = s.too_few = s.not_applicable = 0;
  int undecided = 0, results = 0;
  for (GateCase& c : g.cases)
    for (PairedMetric& m : c.metrics) {
      if (m.verdict != Verdict::kNotApplicable) {
        ++results;
        const SequentialDecision* d = c.status == CaseStatus::kCompared ? find(key_of(c.label, m.metric)) : nullptr;
        m.verdict = d ? d->verdict : Verdict::kTooFew;
        if (d) m.decided_at = d->rounds;
        else ++undecided;
      }
      switch (m.verdict) {
        case Verdict::kSlower: ++s.slower; break;
        case Verdict::kFaster: ++s.faster; break;
        case Verdict::kSame: ++s.same; break;
        case Verdict::kTooFew: ++s.too_few; break;
        case Verdict::kNotApplicable: ++s.not_applicable; break;
      }
    }
  if (summary_inconclusive(s))
    g.warnings.insert(g.warnings.begin(),
                      inconclusive_warning(s, fmt::format("rounds (--max-rounds {} ran out)", max_rounds_)));
  std::string at;
  for (const Look& l : looks_) at += (at.empty() ? "" : ", ") + std::to_string(l.round);
  g.stopping = fmt::format(
      "rounds auto: {} after {} round(s) of at most {} (sequential t-test on the per-round log "
      "ratios, equivalence margin +-{:g}%, Pocock-type alpha spending over looks after rounds {})",
      undecided == 0 ? fmt::format("all {} metric results decided", results)
                     : fmt::format("{} of {} metric results undecided", undecided, results),
      rounds_run_, max_rounds_, settings_.threshold * 100, at);
}

}  // namespace llmbench
