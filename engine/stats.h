// Summary statistics over raw samples. Exact definitions (tested with exact values):
//   mean: arithmetic mean; percentile(p): linear interpolation between closest ranks
//   (numpy's default, "type 7"): rank = p/100 * (n - 1); median = percentile(50);
//   stdev: sample standard deviation (n - 1 in the denominator), 0 for n < 2.
// Empty input throws llmbench::Error (a summary of nothing is a bug, not a number).
#pragma once
#include <vector>

namespace llmbench {

double mean(const std::vector<double>& xs);
double percentile(std::vector<double> xs, double p);
double median(const std::vector<double>& xs);
double stdev(const std::vector<double>& xs);

}  // namespace llmbench
