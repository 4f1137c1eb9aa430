// The latency distributions of one load run, one curve per level: the share of requests whose
// TTFT (or TPOT) is at most x, from every ok request (at most kMaxPoints drawn per level: every
// k-th in SQL, the last always), and the share of inter-token gaps at most x through the bundled
// load_itl_distribution query (its cumulative_share at each bucket's end). A median and a p99
// hide the shape: two modes (prefix-cache hits and misses), a long tail of queued requests.
// Not here: the percentiles against load (serving_charts.cpp).
#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include <fmt/core.h>

#include "tools/report/report_section.h"

namespace llmbench::report {

namespace {

constexpr int kMaxPoints = 200;    // per level and metric
constexpr double kLogSpan = 20;    // max / min of the values above which x is logarithmic
constexpr int kItlBuckets = 10;    // buckets up to the ITL median (the tail gets more)

// 1, 2 or 5 times a power of ten, at least `v`.
double nice_step(double v) {
  const double decade = std::pow(10.0, std::floor(std::log10(v)));
  for (double f : {1.0, 2.0, 5.0, 10.0})
    if (f * decade >= v) return f * decade;
  return 10 * decade;
}

// A CDF chart: one line per level; the x axis logarithmic when the values span > kLogSpan.
json cdf_chart(const std::string& id, const std::string& title, const std::string& x_title,
               const std::vector<std::string>& levels, std::map<std::string, json>& points,
               json rows, double lo, double hi, bool stepped) {
  json ds = json::array();
  for (const auto& level : levels) {
    if (points[level].empty()) continue;
    json d = {{"label", level}, {"data", points[level]}, {"pointRadius", 0}, {"borderWidth", 2}};
    if (stepped) d["stepped"] = "after";
    ds.push_back(std::move(d));
  }
  const bool log = lo > 0 && hi / lo > kLogSpan;
  if (log)  // a log axis has no 0: a curve starts at its first positive x
    for (json& d : ds) {
      json kept = json::array();
      for (const json& p : d["data"])
        if (p["x"].get<double>() > 0) kept.push_back(p);
      d["data"] = std::move(kept);
    }
  json x = axis(log ? x_title.substr(0, x_title.size() - 1) + ", log scale)" : x_title,
                log ? "logarithmic" : "linear");
  if (!log) x["min"] = 0;
  json y = axis("share at or below x (cumulative fraction)");
  y["min"] = 0;
  y["max"] = 1;
  return chart(id, title, "line", ds, {{"x", x}, {"y", y}},
               {"level", x_title, "share at or below"}, std::move(rows));
}

// TTFT or TPOT (load_request.<column>_ns) of every ok request, per level.
std::optional<json> request_cdf(Db& db, std::int64_t run, const std::string& id,
                                const std::string& metric, const std::string& column) {
  Stmt q = db.prepare(
      "WITH r AS (SELECT l.level_index AS li, l.level AS level, q." + column + " / 1e6 AS v, "
      "ROW_NUMBER() OVER (PARTITION BY q.level_id ORDER BY q." + column + ", q.id) AS rn, "
      "COUNT(*) OVER (PARTITION BY q.level_id) AS n FROM load_request q JOIN load_level l ON "
      "l.id = q.level_id WHERE l.load_run_id = ?1 AND q.status = 'ok' AND q." + column +
      " IS NOT NULL) SELECT level, v, 1.0 * rn / n FROM r WHERE (rn - 1) % MAX(1, n / ?2) = 0 "
      "OR rn = n ORDER BY li, rn");
  q.bind(1, run);
  q.bind(2, std::int64_t(kMaxPoints));
  std::vector<std::string> levels;
  std::map<std::string, json> points;
  json rows = json::array();
  double lo = INFINITY, hi = 0;
  while (q.step()) {
    const std::string level = q.column_text(0);
    const double v = q.column_double(1), share = q.column_double(2);
    if (points[level].empty()) {
      levels.push_back(level);
      points[level].push_back({{"x", r4(v)}, {"y", 0}});  // the curve starts at its minimum
    }
    points[level].push_back({{"x", r4(v)}, {"y", r4(share)}});
    rows.push_back({level, r4(v), r4(share)});
    if (v > 0) lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (rows.empty()) return std::nullopt;
  return cdf_chart(id,
                   metric + " distribution per level: the share of requests whose " + metric +
                       " is at most x (CDF, every ok request" +
                       " of the level; at most " + std::to_string(kMaxPoints) +
                       " points drawn per level)",
                   metric + " (ms)", levels, points, std::move(rows), lo, hi, true);
}

// ITL through load_itl_distribution: buckets of a 1-2-5 width near median / kItlBuckets, so
// the bulk of the gaps spans several buckets whatever the tail (the query returns only the
// buckets that hold gaps).
std::optional<json> itl_cdf(Db& db, std::int64_t run, const std::string& id) {
  // Chunks that arrive in one read have a gap of 0 ns: under load that can be most of them,
  // so the scale comes from the median of the positive gaps.
  Stmt p = db.prepare("SELECT COUNT(*), median(NULLIF(c.itl_ns, 0)) / 1e6 FROM load_chunk c JOIN "
                      "load_request q ON q.id = c.request_id JOIN load_level l ON l.id = "
                      "q.level_id WHERE l.load_run_id = ?1 AND q.status = 'ok' AND c.itl_ns IS "
                      "NOT NULL");
  p.bind(1, run);
  if (!p.step() || p.column_int(0) == 0) return std::nullopt;
  const double scale = p.column_is_null(1) ? 0 : p.column_double(1);
  const double bucket = scale > 0 ? std::max(0.001, nice_step(scale / kItlBuckets)) : 0.001;
  std::vector<std::string> cols;
  const json hist = bundled_rows(db, "load_itl_distribution",
                                 {{"load_run_id", std::to_string(run)},
                                  {"bucket_ms", fmt::format("{:g}", bucket)}},
                                 &cols);
  auto col = [&](const std::string& n) {
    return std::size_t(std::find(cols.begin(), cols.end(), n) - cols.begin());
  };
  const std::size_t level_c = col("level"), lo_c = col("bucket_lo_ms"), hi_c = col("bucket_hi_ms"),
                    cum_c = col("cumulative_share");
  if (cum_c >= cols.size()) return std::nullopt;
  std::vector<std::string> levels;
  std::map<std::string, json> points;
  json rows = json::array();
  double lo = INFINITY, hi = 0;
  for (const json& r : hist) {
    const std::string level = r[level_c];
    const double b0 = r[lo_c].get<double>(), b1 = r[hi_c].get<double>(),
                 cum = r[cum_c].get<double>();
    if (points[level].empty()) {
      levels.push_back(level);
      points[level].push_back({{"x", r4(b0)}, {"y", 0}});
      if (b0 > 0) lo = std::min(lo, b0);
    }
    points[level].push_back({{"x", r4(b1)}, {"y", r4(cum)}});
    rows.push_back({level, r4(b1), r4(cum)});
    lo = std::min(lo, b1);
    hi = std::max(hi, b1);
  }
  if (rows.empty()) return std::nullopt;
  return cdf_chart(id,
                   "ITL distribution per level: the share of gaps between output chunks at most "
                   "x (CDF of the bundled load_itl_distribution query, " +
                       fmt::format("{:g}", bucket) + " ms buckets)",
                   "ITL (ms)", levels, points, std::move(rows), lo, hi, false);
}

}  // namespace

void latency_distributions(Ctx& c, Db& db, std::int64_t run, const std::string& pre, json& s) {
  std::string missing;
  for (const auto& [m, column] : {std::pair<const char*, const char*>{"TTFT", "ttft_ns"},
                                  {"TPOT", "tpot_ns"}}) {
    const std::string id = pre + (m == std::string("TTFT") ? "ttft_cdf" : "tpot_cdf");
    if (auto ch = request_cdf(db, run, id, m, column))
      s["charts"].push_back(std::move(*ch));
    else
      missing += (missing.empty() ? "" : ", ") + std::string(m);
  }
  if (!db.has_table("load_chunk")) {
    missing += (missing.empty() ? "" : ", ") + std::string("ITL");
  } else if (auto ch = itl_cdf(db, run, pre + "itl_cdf")) {
    s["charts"].push_back(std::move(*ch));
  } else {
    missing += (missing.empty() ? "" : ", ") + std::string("ITL");
  }
  if (!missing.empty())
    c.omitted.push_back("Serving, load run " + std::to_string(run) + ": " + missing +
                        " distribution: no ok request has it (TPOT and ITL need 2+ output "
                        "tokens).");
}

}  // namespace llmbench::report
