// Building the comparison report (see compare_report.h).
#include "tools/compare/compare_report.h"

#include <map>

#include <fmt/core.h>

#include "tools/compare/compare_match.h"

namespace llmbench {

const char* case_status_name(CaseStatus s) {
  switch (s) {
    case CaseStatus::kCompared: return "compared";
    case CaseStatus::kBaseOnly: return "only in base";
    case CaseStatus::kCandOnly: return "only in candidate";
    case CaseStatus::kErrorBase: return "error in base";
    case CaseStatus::kErrorCand: return "error in candidate";
    case CaseStatus::kErrorBoth: return "error in both";
  }
  return "?";
}

namespace {

CaseComparison compare_pair(const CasePair& p, const CompareSettings& s, bool threads_ignored) {
  CaseComparison c;
  c.base = p.base;
  c.cand = p.cand;
  c.label = threads_ignored ? p.base->label(false) : p.base->label();
  if (!p.base->ok() || !p.cand->ok()) {
    c.status = !p.base->ok() && !p.cand->ok() ? CaseStatus::kErrorBoth
               : !p.base->ok()                ? CaseStatus::kErrorBase
                                              : CaseStatus::kErrorCand;
    return c;
  }
  for (Metric m : s.metrics)
    c.metrics.push_back(compare_samples(m, p.base->samples(m), p.cand->samples(m), s));
  return c;
}

void count(CompareSummary& sum, const CaseComparison& c) {
  switch (c.status) {
    case CaseStatus::kCompared: ++sum.compared_cases; break;
    case CaseStatus::kBaseOnly: ++sum.base_only; break;
    case CaseStatus::kCandOnly: ++sum.cand_only; break;
    default: ++sum.failed_cases; break;
  }
  for (const auto& m : c.metrics) {
    switch (m.verdict) {
      case Verdict::kSlower: ++sum.slower; break;
      case Verdict::kFaster: ++sum.faster; break;
      case Verdict::kSame: ++sum.same; break;
      case Verdict::kTooFew: ++sum.too_few; break;
      case Verdict::kNotApplicable: ++sum.not_applicable; break;
      case Verdict::kUnknown: ++sum.unknown; break;
    }
  }
}

std::string plural(int n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

CompareReport build_report(const LoadedRun& base, const LoadedRun& cand,
                           const CompareSettings& settings, bool serving) {
  CompareReport r;
  r.settings = settings;
  r.base = &base;
  r.cand = &cand;
  r.env = environment_notes(base.run, cand.run);
  const Matching m = match_cases(base.cases, cand.cases);
  r.threads_ignored = m.threads_ignored;

  std::map<const CaseSamples*, const CasePair*> pair_of;
  for (const auto& p : m.pairs) pair_of[p.base] = &p;
  for (const auto& b : base.cases) {
    const auto it = pair_of.find(&b);
    if (it != pair_of.end()) {
      r.cases.push_back(compare_pair(*it->second, settings, m.threads_ignored));
    } else {
      CaseComparison c;
      c.status = CaseStatus::kBaseOnly;
      c.base = &b;
      c.label = b.label(!m.threads_ignored);
      r.cases.push_back(std::move(c));
    }
  }
  for (const CaseSamples* x : m.cand_only) {
    CaseComparison c;
    c.status = CaseStatus::kCandOnly;
    c.cand = x;
    c.label = x->label(!m.threads_ignored);
    r.cases.push_back(std::move(c));
  }
  for (const auto& c : r.cases) count(r.summary, c);
  // One run per side is no test at all: its warning says so and gives the exit code; the
  // inconclusive one would only repeat it.
  if (settings.threshold_only)
    r.warnings.push_back(one_run_warning(settings, serving));
  else if (summary_inconclusive(r.summary))
    r.warnings.push_back(inconclusive_warning(r.summary, "samples"));
  for (const EnvNote& n : r.env)
    if (n.warning) r.warnings.push_back(n.text());
  return r;
}

std::string one_run_warning(const CompareSettings& s, bool serving) {
  const std::string exit_rule =
      s.threshold_gate
          ? "--threshold-gate: a change beyond the threshold exits 1"
          : "exit code 3 (no valid test); --threshold-gate makes a change beyond the threshold "
            "exit 1, --allow-inconclusive exits 0";
  const std::string advice =
      serving ? "a valid test needs several load runs per side: alternate the two servers' "
                "`llmbench load` runs and check that the verdict repeats"
              : "a valid test: interleaved rounds (llmbench compare --run BASE_BIN CAND_BIN "
                "--config PROFILE) or several runs per side (BASE.db:all CAND.db:all)";
  return fmt::format(
      "one run per side: the {} of a run share the machine's state for that minute, so the "
      "p-values are no valid test between the two runs (shown for information only); a change "
      "is named only where its whole interval lies beyond {:g}%, the rest is \"same or "
      "unknown\"; {}; {}",
      serving ? "requests" : "repetitions", s.threshold * 100, exit_rule, advice);
}

bool summary_inconclusive(const CompareSummary& s) {
  return s.slower == 0 && (s.too_few > 0 || s.same + s.faster + s.unknown == 0);
}

std::string inconclusive_warning(const CompareSummary& s, const std::string& unit) {
  const int results = s.slower + s.faster + s.same + s.too_few + s.not_applicable;
  const std::string why =
      s.too_few > 0 ? fmt::format("{} of {} metric results had too few {} to decide", s.too_few,
                                  results, unit)
                    : fmt::format("no metric result was decided ({} compared, {} n/a)",
                                  plural(s.compared_cases, "case", "cases"), s.not_applicable);
  return "inconclusive: " + why +
         ", so this comparison is no evidence that nothing got slower (exit code 3; "
         "--allow-inconclusive accepts it)";
}

std::string summary_headline(const CompareSummary& s, bool threshold_only) {
  if (threshold_only)
    return fmt::format("no valid test (one run per side): {} slower beyond threshold, {} faster "
                       "beyond threshold, {} same or unknown",
                       s.slower, s.faster, s.unknown + s.same);
  return plural(s.slower, "regression", "regressions") + ", " +
         plural(s.faster, "improvement", "improvements") + ", " + std::to_string(s.same) + " same";
}

std::string summary_details(const CompareSummary& s) {
  return std::to_string(s.too_few) + " too few samples, " + std::to_string(s.not_applicable) +
         " n/a; " + plural(s.compared_cases, "case", "cases") + " compared, " +
         std::to_string(s.base_only) + " only in base, " + std::to_string(s.cand_only) +
         " only in candidate, " + std::to_string(s.failed_cases) + " failed";
}

}  // namespace llmbench
