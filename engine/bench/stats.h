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

// The samples of one metric, sorted, with their mean and stdev: any percentile can be asked of
// it (the field lists of tools/store expand a metric over the statistics they print).
struct SampleStats {
  int n = 0;
  double mean = 0, stdev = 0;
  std::vector<double> sorted;
  double percentile(double p) const { return percentile_sorted(sorted, p); }
};
// Throws llmbench::Error for no samples, as the functions above do.
SampleStats sample_stats(std::vector<double> xs);

}  // namespace llmbench
