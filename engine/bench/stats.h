// Summary statistics over raw samples. Exact definitions (tested with exact values):
//   mean: arithmetic mean; percentile(p): linear interpolation between closest ranks
//   (numpy's default, "type 7"): rank = p/100 * (n - 1); median = percentile(50);
//   stdev: sample standard deviation (n - 1 in the denominator), 0 for n < 2.
// Empty input throws llmbench::Error (a summary of nothing is a bug, not a number).
// The SQL functions of `llmbench query` (tools/query/sql_functions.h) compute with these.
#pragma once
#include <vector>

namespace llmbench {

double mean(const std::vector<double>& xs);
double percentile(std::vector<double> xs, double p);
// percentile() of samples already sorted ascending (no copy, no sort).
double percentile_sorted(const std::vector<double>& sorted, double p);
double median(const std::vector<double>& xs);
double stdev(const std::vector<double>& xs);

}  // namespace llmbench
