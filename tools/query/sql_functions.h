// Aggregate SQL functions that SQLite 3.40 lacks and trace analysis needs:
//   median(x)          the 50th percentile
//   percentile(x, p)   p in [0, 100], linear interpolation between closest ranks (numpy's default)
//   stdev(x)           sample standard deviation (n - 1 in the denominator)
// NULL inputs are skipped, as avg() does; an empty group gives NULL, and stdev of one value
// gives NULL. A non-numeric value or a p outside [0, 100] (or varying within a group) is an
// SQL error, not a silent 0. Plain aggregates only: not usable as window functions (OVER).
#pragma once
#include <sqlite3.h>

#include <vector>

namespace llmbench {

// Registers median, percentile and stdev on `db` (for this connection only). Throws Error.
void register_sql_functions(sqlite3* db);

// The arithmetic behind the SQL functions, exposed for tests. `sorted` must be ascending and
// non-empty; p in [0, 100].
double percentile_sorted(const std::vector<double>& sorted, double p);
// `values` needs at least two elements.
double sample_stdev(const std::vector<double>& values);

}  // namespace llmbench
