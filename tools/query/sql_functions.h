// Aggregate SQL functions that SQLite 3.40 lacks and trace analysis needs:
//   median(x)          the 50th percentile
//   percentile(x, p)   p in [0, 100], linear interpolation between closest ranks (numpy's default)
//   stdev(x)           sample standard deviation (n - 1 in the denominator)
// and one scalar function:
//   variants_label(v)  bench_case.variants (JSON) as every printed output names it: "default"
//                      or "qkv=permute kv_cache=paged/16" (tools/store/variants_json.h)
// NULL inputs are skipped, as avg() does; an empty group gives NULL, and stdev of one value
// gives NULL. A non-numeric value or a p outside [0, 100] (or varying within a group) is an
// SQL error, not a silent 0. Plain aggregates only: not usable as window functions (OVER).
#pragma once
#include <sqlite3.h>

#include <vector>

namespace llmbench {

// Registers median, percentile and stdev on `db` (for this connection only). Throws Error.
void register_sql_functions(sqlite3* db);
// The arithmetic is engine/bench/stats.h's (percentile_sorted, stdev): one definition for `run`'s
// summaries and the SQL functions.

}  // namespace llmbench
