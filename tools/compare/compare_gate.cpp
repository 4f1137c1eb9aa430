// The interleaved gate's decision over rounds (see compare_gate.h).
#include "tools/compare/compare_gate.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/core.h>

#include "engine/bench/stats.h"
#include "tools/compare/compare_env.h"
#include "tools/compare/compare_match.h"

namespace llmbench {

namespace {

std::optional<double> median_of(const std::vector<std::optional<double>>& xs) {
  std::vector<double> v;
  for (const auto& x : xs)
    if (x) v.push_back(*x);
  if (v.empty()) return std::nullopt;
  return median(v);
}

// log(x_{2k} / x_{2k-1}) for k = 1, 2, ... where both rounds have a value.
void adjacent_log_ratios(const std::vector<std::optional<double>>& xs, std::vector<double>& out) {
  for (std::size_t i = 0; i + 1 < xs.size(); i += 2)
    if (xs[i] && xs[i + 1]) out.push_back(std::log(*xs[i + 1]) - std::log(*xs[i]));
}

}  // namespace

PairedMetric decide_paired(Metric metric, const std::vector<std::optional<double>>& base,
                           const std::vector<std::optional<double>>& cand,
                           const CompareSettings& s) {
  PairedMetric m;
  m.metric = metric;
  std::vector<double> d;
  for (std::size_t r = 0; r < std::min(base.size(), cand.size()); ++r)
    if (base[r] && cand[r]) d.push_back(std::log(*cand[r]) - std::log(*base[r]));
  m.rounds = int(d.size());
  m.log_ratios = d;
  if (d.empty()) return m;  // n/a: the metric does not apply, or no round has both sides
  m.median_base = median_of(base);
  m.median_cand = median_of(cand);
  m.ratio = std::exp(pseudo_median(d));
  const BootstrapInterval ci = paired_bootstrap(d, s.alpha, kBootstrapResamples, kBootstrapSeed);
  m.ci_low = std::exp(ci.low);
  m.ci_high = std::exp(ci.high);

  std::vector<double> aa;
  adjacent_log_ratios(base, aa);
  adjacent_log_ratios(cand, aa);
  m.aa_pairs = int(aa.size());
  if (!aa.empty()) {
    m.aa_ratio = std::exp(pseudo_median(aa));
    const BootstrapInterval aci = paired_bootstrap(aa, s.alpha, kBootstrapResamples, kBootstrapSeed);
    m.aa_ci_low = std::exp(aci.low);
    m.aa_ci_high = std::exp(aci.high);
    m.aa_noise = std::exp(std::max(std::fabs(aci.low), std::fabs(aci.high))) - 1.0;
  }

  if (signed_rank_min_p(m.rounds) >= s.alpha) {
    m.verdict = Verdict::kTooFew;
    return m;
  }
  m.test = wilcoxon_signed_rank(d);
  const double worse = metric_info(metric).higher_is_better ? 1.0 / *m.ratio : *m.ratio;
  const double factor = 1.0 + s.threshold;
  const bool significant = m.test->p_value < s.alpha;
  if (significant && worse > factor)
    m.verdict = Verdict::kSlower;
  else if (significant && worse < 1.0 / factor)
    m.verdict = Verdict::kFaster;
  else
    m.verdict = Verdict::kSame;
  return m;
}

namespace {

// One case followed across rounds, keyed by the base case's label (or the candidate's, for a
// case only the candidate has) and its occurrence among equal labels in that run.
struct Track {
  std::string label;
  int only_base = 0, only_cand = 0, both = 0, failed = 0;
  std::vector<const CaseSamples*> base, cand;  // per round; null when absent or failed
};

// The tracks of every case, in the order they first appear.
class CaseTracks {
 public:
  explicit CaseTracks(std::size_t n_rounds) : n_rounds_(n_rounds) {}

  Track& at(const std::string& key, const std::string& label) {
    auto it = tracks_.find(key);
    if (it == tracks_.end()) {
      order_.push_back(key);
      it = tracks_.emplace(key, Track{}).first;
      it->second.label = label;
      it->second.base.assign(n_rounds_, nullptr);
      it->second.cand.assign(n_rounds_, nullptr);
    }
    return it->second;
  }
  const std::vector<std::string>& order() const { return order_; }
  const Track& operator[](const std::string& key) const { return tracks_.at(key); }

 private:
  std::size_t n_rounds_;
  std::vector<std::string> order_;
  std::map<std::string, Track> tracks_;
};

// Adds round `r`'s matched, base-only and candidate-only cases to the tracks.
void add_round(const Matching& m, std::size_t r, CaseTracks& tracks) {
  std::map<std::string, int> seen;
  auto key_of = [&](const CaseSamples& c) {
    const std::string label = c.label(!m.threads_ignored);
    const int k = seen[label]++;
    return std::pair{k == 0 ? label : label + " #" + std::to_string(k + 1), label};
  };
  for (const CasePair& p : m.pairs) {
    const auto [key, label] = key_of(*p.base);
    Track& t = tracks.at(key, label);
    if (!p.base->ok() || !p.cand->ok()) {
      ++t.failed;
      continue;
    }
    ++t.both;
    t.base[r] = p.base;
    t.cand[r] = p.cand;
  }
  for (const CaseSamples* c : m.base_only) {
    const auto [key, label] = key_of(*c);
    ++tracks.at(key, label).only_base;
  }
  for (const CaseSamples* c : m.cand_only) {
    const auto [key, label] = key_of(*c);
    ++tracks.at(key, label).only_cand;
  }
}

// One case's verdicts: each metric's per-round medians, base against candidate.
GateCase compare_track(const std::string& key, const Track& t, std::size_t n_rounds,
                       const CompareSettings& s) {
  GateCase c;
  c.label = key;
  c.rounds_failed = t.failed;
  if (t.both == 0) {
    c.status = t.failed > 0 ? CaseStatus::kErrorBoth
               : t.only_base > 0 ? CaseStatus::kBaseOnly
                                 : CaseStatus::kCandOnly;
    return c;
  }
  for (Metric metric : s.metrics) {
    std::vector<std::optional<double>> b(n_rounds), x(n_rounds);
    for (std::size_t r = 0; r < n_rounds; ++r) {
      if (!t.base[r]) continue;
      const auto bs = t.base[r]->samples(metric), cs = t.cand[r]->samples(metric);
      if (!bs || !cs || bs->empty() || cs->empty()) continue;
      b[r] = median(*bs);
      x[r] = median(*cs);
    }
    c.metrics.push_back(decide_paired(metric, b, x, s));
  }
  return c;
}

// The summary counts, the noise floor and the per-case warnings, from g.cases.
void summarize_cases(GateReport& g) {
  for (const GateCase& c : g.cases) {
    switch (c.status) {
      case CaseStatus::kCompared: ++g.summary.compared_cases; break;
      case CaseStatus::kBaseOnly: ++g.summary.base_only; break;
      case CaseStatus::kCandOnly: ++g.summary.cand_only; break;
      default: ++g.summary.failed_cases; break;
    }
    for (const PairedMetric& m : c.metrics) {
      switch (m.verdict) {
        case Verdict::kSlower: ++g.summary.slower; break;
        case Verdict::kFaster: ++g.summary.faster; break;
        case Verdict::kSame: ++g.summary.same; break;
        case Verdict::kTooFew: ++g.summary.too_few; break;
        case Verdict::kNotApplicable: ++g.summary.not_applicable; break;
      }
      if (m.aa_noise && (!g.noise_floor || *m.aa_noise > *g.noise_floor)) {
        g.noise_floor = m.aa_noise;
        g.noise_floor_at = c.label + " " + metric_info(m.metric).column;
      }
    }
    if (c.rounds_failed > 0)
      g.warnings.push_back(c.label + ": status error in " + std::to_string(c.rounds_failed) +
                           " round(s); those rounds are left out for this case");
  }
}

}  // namespace

GateReport build_gate_report(const std::vector<GateRound>& rounds, const CompareSettings& s) {
  GateReport g;
  g.settings = s;
  g.rounds = int(rounds.size());

  CaseTracks tracks(rounds.size());
  for (std::size_t r = 0; r < rounds.size(); ++r) {
    const GateRound& round = rounds[r];
    if (round.base_first) ++g.base_first;
    if (!round.base || !round.cand) continue;
    ++g.rounds_complete;
    add_round(match_cases(round.base->cases, round.cand->cases), r, tracks);
    // Environment differences that change timings by themselves (build type, CPU, threads,
    // ...), from the first complete round: both binaries run on one machine, so these come
    // from the builds or their flags.
    if (g.rounds_complete == 1)
      for (const EnvNote& n : environment_notes(round.base->run, round.cand->run))
        if (n.warning) g.warnings.push_back(n.text());
  }
  for (const std::string& key : tracks.order())
    g.cases.push_back(compare_track(key, tracks[key], rounds.size(), s));

  summarize_cases(g);
  if (g.rounds_complete < g.rounds)
    g.warnings.push_back(std::to_string(g.rounds - g.rounds_complete) + " of " +
                         std::to_string(g.rounds) +
                         " rounds had a side whose process failed; they are left out");
  if (summary_inconclusive(g.summary))
    g.warnings.insert(g.warnings.begin(), inconclusive_warning(g.summary, "rounds"));
  if (g.noise_floor && *g.noise_floor > s.threshold)
    g.warnings.push_back(
        fmt::format("the A/A noise floor ({:.1f}%) is above the threshold ({:g}%): this machine "
                    "cannot resolve a change of the threshold's size today",
                    *g.noise_floor * 100, s.threshold * 100));
  return g;
}

}  // namespace llmbench
