// median / percentile / stdev as SQLite aggregates (see sql_functions.h).
#include "tools/query/sql_functions.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "engine/bench/stats.h"
#include "kernels/common/error.h"
#include "tools/store/variants_json.h"

namespace llmbench {

namespace {

// Per-group state. SQLite hands out zeroed aggregate-context memory, so the context holds only
// a pointer; xFinal (which SQLite always calls once a context exists) frees it.
struct Samples {
  std::vector<double> values;
  double p = -1;  // percentile(): the group's p, fixed by its first row
};

Samples* samples(sqlite3_context* ctx) {
  auto** slot = static_cast<Samples**>(sqlite3_aggregate_context(ctx, sizeof(Samples*)));
  if (!slot) return nullptr;  // out of memory
  if (!*slot) *slot = new Samples;
  return *slot;
}

// Takes ownership of the group's state; null when the group had no rows.
Samples* take_samples(sqlite3_context* ctx) {
  auto** slot = static_cast<Samples**>(sqlite3_aggregate_context(ctx, 0));
  if (!slot) return nullptr;
  Samples* s = *slot;
  *slot = nullptr;
  return s;
}

// Appends x unless it is NULL. False (with the error set) for a non-numeric value.
bool add_value(sqlite3_context* ctx, Samples* s, sqlite3_value* x, const char* fn) {
  switch (sqlite3_value_numeric_type(x)) {
    case SQLITE_NULL:
      return true;
    case SQLITE_INTEGER:
    case SQLITE_FLOAT:
      s->values.push_back(sqlite3_value_double(x));
      return true;
    default:
      sqlite3_result_error(ctx, (std::string(fn) + "(): non-numeric value").c_str(), -1);
      return false;
  }
}

void median_step(sqlite3_context* ctx, int, sqlite3_value** argv) {
  Samples* s = samples(ctx);
  if (!s) return sqlite3_result_error_nomem(ctx);
  add_value(ctx, s, argv[0], "median");
}

void percentile_step(sqlite3_context* ctx, int, sqlite3_value** argv) {
  Samples* s = samples(ctx);
  if (!s) return sqlite3_result_error_nomem(ctx);
  const int type = sqlite3_value_numeric_type(argv[1]);
  const double p = sqlite3_value_double(argv[1]);
  if ((type != SQLITE_INTEGER && type != SQLITE_FLOAT) || !(p >= 0 && p <= 100))
    return sqlite3_result_error(ctx, "percentile(x, p): p must be a number in [0, 100]", -1);
  if (s->p >= 0 && s->p != p)
    return sqlite3_result_error(ctx, "percentile(x, p): p must be the same for every row", -1);
  s->p = p;
  add_value(ctx, s, argv[0], "percentile");
}

void stdev_step(sqlite3_context* ctx, int, sqlite3_value** argv) {
  Samples* s = samples(ctx);
  if (!s) return sqlite3_result_error_nomem(ctx);
  add_value(ctx, s, argv[0], "stdev");
}

void percentile_final_at(sqlite3_context* ctx, double fixed_p) {
  Samples* s = take_samples(ctx);
  if (s && !s->values.empty()) {
    std::sort(s->values.begin(), s->values.end());
    sqlite3_result_double(ctx, percentile_sorted(s->values, fixed_p >= 0 ? fixed_p : s->p));
  } else {
    sqlite3_result_null(ctx);
  }
  delete s;
}

void median_final(sqlite3_context* ctx) { percentile_final_at(ctx, 50); }
void percentile_final(sqlite3_context* ctx) { percentile_final_at(ctx, -1); }

void stdev_final(sqlite3_context* ctx) {
  Samples* s = take_samples(ctx);
  if (s && s->values.size() >= 2)
    sqlite3_result_double(ctx, stdev(s->values));
  else
    sqlite3_result_null(ctx);
  delete s;
}

using StepFn = void (*)(sqlite3_context*, int, sqlite3_value**);
using FinalFn = void (*)(sqlite3_context*);

void add_aggregate(sqlite3* db, const char* name, int n_args, StepFn step, FinalFn final) {
  const int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
  const int rc =
      sqlite3_create_function_v2(db, name, n_args, flags, nullptr, nullptr, step, final, nullptr);
  if (rc != SQLITE_OK)
    throw Error(std::string("sqlite: cannot register ") + name + "(): " + sqlite3_errmsg(db));
}

// variants_label(text): bench_case.variants (JSON) as every printed output names it.
void variants_label_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL) {
    sqlite3_result_null(ctx);
    return;
  }
  const auto* text = reinterpret_cast<const char*>(sqlite3_value_text(argv[0]));
  const std::string label = variants_label(std::string(text ? text : ""));
  sqlite3_result_text(ctx, label.c_str(), int(label.size()), SQLITE_TRANSIENT);
}

}  // namespace

void register_sql_functions(sqlite3* db) {
  add_aggregate(db, "median", 1, median_step, median_final);
  add_aggregate(db, "percentile", 2, percentile_step, percentile_final);
  add_aggregate(db, "stdev", 1, stdev_step, stdev_final);
  const int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
  if (sqlite3_create_function_v2(db, "variants_label", 1, flags, nullptr, variants_label_fn,
                                 nullptr, nullptr, nullptr) != SQLITE_OK)
    throw Error(std::string("sqlite: cannot register variants_label(): ") + sqlite3_errmsg(db));
}

}  // namespace llmbench
