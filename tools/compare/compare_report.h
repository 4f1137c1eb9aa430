// The result of `llmbench compare` before it is printed: the two runs, their environment notes,
// every case (compared metric by metric, or why not) and the summary counts. Built from two
// loaded runs by matching (compare_match.h) and the verdict rule (compare_verdict.h); printed by
// compare_output.h. Pure: no I/O.
#pragma once
#include <string>
#include <vector>

#include "tools/compare/compare_env.h"
#include "tools/store/run_reader.h"
#include "tools/compare/compare_verdict.h"

namespace llmbench {

enum class CaseStatus { kCompared, kBaseOnly, kCandOnly, kErrorBase, kErrorCand, kErrorBoth };
// "compared", "only in base", "only in candidate", "error in base", "error in candidate",
// "error in both"
const char* case_status_name(CaseStatus s);

struct CaseComparison {
  std::string label;
  CaseStatus status = CaseStatus::kCompared;
  const CaseSamples* base = nullptr;  // null when only in the candidate
  const CaseSamples* cand = nullptr;  // null when only in the base
  std::vector<MetricComparison> metrics;  // one per setting's metric when compared
};

struct CompareSummary {
  int slower = 0, faster = 0, same = 0, too_few = 0, not_applicable = 0;  // metric results
  int unknown = 0;  // "same or unknown" (one run per side: no valid test)
  int compared_cases = 0, base_only = 0, cand_only = 0, failed_cases = 0;  // cases
};

// No regression, and either some metric result could not be decided (too few samples, or too
// few rounds in the interleaved gate) or nothing was decided at all (no case compared, every
// metric n/a): such a comparison is no evidence that nothing got slower, so `compare` exits 3
// (inconclusive) unless --allow-inconclusive (docs/ci.md).
bool summary_inconclusive(const CompareSummary& s);
// The warning line of an inconclusive comparison: "inconclusive: 6 of 6 metric results had too
// few samples to decide ...". `unit` names what was too few ("samples", "rounds").
std::string inconclusive_warning(const CompareSummary& s, const std::string& unit);

struct CompareReport {
  CompareSettings settings;
  const LoadedRun* base = nullptr;
  const LoadedRun* cand = nullptr;
  std::vector<EnvNote> env;
  bool threads_ignored = false;  // see compare_match.h
  // Matched cases in base order (with base-only ones where they occur), then candidate-only.
  std::vector<CaseComparison> cases;
  CompareSummary summary;
  // What every output of the comparison repeats (the CLI's stderr, table, md, json, the HTML
  // report): inconclusive, the one-run-per-side rule, environment differences that change
  // timings by themselves.
  std::vector<std::string> warnings;

  // One run per side without --threshold-gate: whatever the verdicts, no valid test (exit 3).
  bool no_valid_test() const { return settings.threshold_only && !settings.threshold_gate; }
  bool regressed() const { return summary.slower > 0 && !no_valid_test(); }
  bool inconclusive() const { return no_valid_test() || summary_inconclusive(summary); }
};

// `base` and `cand` must outlive the report.
CompareReport build_report(const LoadedRun& base, const LoadedRun& cand,
                           const CompareSettings& settings, bool serving = false);

// The warning every two-database comparison with CompareSettings::threshold_only carries, with
// the advice that fits it (`serving`: load runs, which have no interleaved mode).
std::string one_run_warning(const CompareSettings& s, bool serving = false);

// "1 regression, 0 improvements, 5 same"; with `threshold_only` (one run per side): "no valid
// test (one run per side): 1 slower beyond threshold, 0 faster beyond threshold, 5 same or
// unknown".
std::string summary_headline(const CompareSummary& s, bool threshold_only = false);
// "2 too few samples, 1 n/a; 3 cases compared, 0 only in base, 0 only in candidate, 0 failed"
std::string summary_details(const CompareSummary& s);

}  // namespace llmbench
