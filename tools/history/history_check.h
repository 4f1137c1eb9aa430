// `llmbench history check`: change points of every series of a history database (E-divisive
// means with a permutation test, edivisive.h), each with the commits around it, the medians of
// the segments before and after, their ratio and its p-value, and whether it is a regression in
// the newest commits (what makes the command exit 1). Pure over HistorySeries; printing in
// history_output.h.
//
// A change point at index i of a series (points ordered by time) lies between the commits of
// points i - 1 and i; `before` is the median of the segment that ends there (from the previous
// change point), `after` the median of the one that starts there (to the next), ratio = after /
// before. It is a regression when the ratio is worse (above 1 for lower-is-better metrics,
// below 1 for higher-is-better ones; a series of unknown direction, such as CSV, is
// lower-is-better unless CheckOptions::higher_is_better) and at least min_change away from 1;
// recent when its first commit is among the series' `recent` newest distinct commits.
#pragma once
#include <string>
#include <vector>

#include "tools/history/edivisive.h"
#include "tools/store/history_store.h"

namespace llmbench {

struct CheckOptions {
  int recent = 5;                 // newest distinct commits in which a regression fails the check
  bool higher_is_better = false;  // the direction of series that do not know theirs (CSV)
  double min_change = 0;          // smallest |ratio - 1| reported (fraction)
  EDivisiveOptions detector;
};

struct ChangePointReport {
  std::string series, machine;
  int index = 0;                   // first point after the change
  std::string commit;              // its commit: the first commit after the change
  std::string previous_commit;     // the last commit before it
  std::string time;                // the first point's time
  double before = 0, after = 0, ratio = 1, p_value = 1;
  int points_before = 0, points_after = 0;  // the segments' sizes
  bool higher_is_better = false;
  bool regression = false;
  bool recent = false;
};

struct CheckResult {
  int series = 0, points = 0;
  std::vector<ChangePointReport> change_points;  // series in order, then by index
  bool failed() const;  // a recent regression
};

std::vector<ChangePointReport> check_series(const HistorySeries& s, const CheckOptions& o);
CheckResult check_history(const std::vector<HistorySeries>& all, const CheckOptions& o);

}  // namespace llmbench
