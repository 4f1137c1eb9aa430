// The timeline of one load run: every request as a bar from send to first token (waiting) and
// from first token to end (streaming), and under it, on the same time axis, one small chart per
// scraped server-metric family (`--server-metrics` counter tracks): gauges as scraped, counters
// as their rate between scrapes. Families are chosen by what the database holds (their
// Prometheus type, else the name's `_total` / histogram suffixes), not from a list of one
// server's names; a family whose every sample is equal is named, not drawn. Bounded: at most
// kMaxRequests requests and kMaxMetricPoints samples per series are drawn (every k-th, in SQL),
// and the chart title says so. Time is seconds since the run's first level began: each level's
// own ns are placed by its started_unix_ns.
#include "tools/report/report_section.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "tools/report/serving_reader.h"

namespace llmbench::report {

namespace {

constexpr std::int64_t kMaxRequests = 500;
constexpr std::int64_t kMaxMetricPoints = 400;  // per series, over the whole run
constexpr int kMaxMetricCharts = 8;
constexpr int kMaxSeriesPerChart = 6;
constexpr int kYAxisWidth = 72;  // px: every chart of the timeline, so their time axes line up

// Level id -> its origin in ns since the run's first level's origin.
std::string offset_sql() {
  return "(l.started_unix_ns - (SELECT MIN(started_unix_ns) FROM load_level "
         "WHERE load_run_id = ?1))";
}

std::string nth(std::int64_t k) {
  const char* suffix = k % 10 == 2 && k % 100 != 12 ? "nd" : k % 10 == 3 && k % 100 != 13 ? "rd"
                                                                                            : "th";
  return std::to_string(k) + suffix;
}

// The request bars; returns the chart, and the run's end (s) through `end_s`.
json request_timeline(Db& db, std::int64_t run, const std::string& id, double& end_s) {
  Stmt n = db.prepare("SELECT COUNT(*), MAX(" + offset_sql() + " + q.end_ns) / 1e9 FROM "
                      "load_request q JOIN load_level l ON l.id = q.level_id WHERE "
                      "l.load_run_id = ?1");
  n.bind(1, run);
  n.step();
  const std::int64_t total = n.column_int(0);
  end_s = n.column_is_null(1) ? 0 : n.column_double(1);
  const std::int64_t stride = std::max<std::int64_t>(1, (total + kMaxRequests - 1) / kMaxRequests);
  Stmt q = db.prepare(
      "WITH r AS (SELECT ROW_NUMBER() OVER (ORDER BY l.level_index, q.send_ns, q.id) AS rn, "
      "l.level, " + offset_sql() + " AS off, q.send_ns, q.first_token_ns, q.end_ns, q.status "
      "FROM load_request q JOIN load_level l ON l.id = q.level_id WHERE l.load_run_id = ?1) "
      "SELECT rn, level, (off + send_ns) / 1e9, (off + first_token_ns) / 1e9, (off + end_ns) / 1e9, "
      "status FROM r WHERE (rn - 1) % ?2 = 0 ORDER BY rn");
  q.bind(1, run);
  q.bind(2, stride);
  json waiting = json::array(), streaming = json::array(), failed = json::array(),
       rows = json::array();
  auto bar = [](json& ds, const json& from, const json& to, std::int64_t y) {
    if (from.is_null() || to.is_null()) return;
    ds.push_back({{"x", from}, {"y", y}});
    ds.push_back({{"x", to}, {"y", y}});
    ds.push_back({{"x", to}, {"y", nullptr}});  // a gap: the next request is its own bar
  };
  while (q.step()) {
    const std::int64_t rn = q.column_int(0);
    const json send = num(q, 2), first = num(q, 3), end = num(q, 4);
    const std::string status = q.column_text(5);
    rows.push_back({rn, q.column_text(1), send, first, end, status});
    if (status != "ok") {
      bar(failed, send, end, rn);
    } else {
      bar(waiting, send, first, rn);
      bar(streaming, first, end, rn);
    }
  }
  json ds = json::array();
  auto add = [&](json& data, const char* label, const char* color) {
    if (data.empty()) return;
    ds.push_back({{"label", label}, {"data", std::move(data)}, {"color", color},
                  {"pointRadius", 0}, {"borderWidth", 2}, {"spanGaps", false}});
  };
  add(waiting, "send -> first token (waiting, prefill)", "#ff7f0e");
  add(streaming, "first token -> end (streaming)", "#1f77b4");
  add(failed, "failed: send -> end", "#d62728");
  const std::string drawn = stride == 1 ? "every request drawn"
                                        : "every " + nth(stride) + " of " + std::to_string(total) +
                                              " requests drawn (bounded to " +
                                              std::to_string(kMaxRequests) + ")";
  json y = axis("request number (in send order over the run)");
  y["reverse"] = true;
  json ch = chart(id, "Requests over time: one bar per request from send to first token and on "
                      "to its end (" + drawn + "); the server's metrics below share its time axis",
                  "line", ds, {{"x", axis("time since the run's first level began (s)")}, {"y", y}},
                  {"request", "level", "send_s", "first_token_s", "end_s", "status"}, rows);
  ch["height"] = 380;
  ch["yWidth"] = kYAxisWidth;
  return ch;
}

// One scraped series: its tracks (one per level) and their origins.
struct Series {
  std::string name, type;
  std::vector<std::pair<std::int64_t, double>> tracks;  // track id, level origin (s)
  std::int64_t samples = 0;
  double lo = 0, hi = 0;
};

// "counter" (drawn as a rate), "gauge" (as scraped) or "" (histogram parts, summaries: not drawn).
std::string kind_of(const std::string& name, const std::string& type) {
  const std::string base = name.substr(0, name.find('{'));
  auto ends = [&](const std::string& s) {
    return base.size() >= s.size() && base.compare(base.size() - s.size(), s.size(), s) == 0;
  };
  if (type == "histogram" || type == "summary" || ends("_bucket") || ends("_sum") ||
      ends("_count") || ends("_created"))
    return "";
  if (type == "counter" || (type.empty() && ends("_total"))) return "counter";
  return "gauge";
}

std::map<std::string, std::vector<Series>> read_families(Db& db, std::int64_t run,
                                                         std::vector<std::string>& skipped) {
  Stmt q = db.prepare("SELECT t.id, t.name, COALESCE(t.metric_type, ''), " + offset_sql() +
                      " / 1e9, COUNT(c.id), MIN(c.value), MAX(c.value) FROM track t JOIN "
                      "load_level l ON l.id = t.load_level_id JOIN counter c ON c.track_id = t.id "
                      "WHERE l.load_run_id = ?1 AND t.type = 'counter' GROUP BY t.id "
                      "ORDER BY t.name, l.level_index");
  q.bind(1, run);
  std::map<std::string, Series> by_name;
  while (q.step()) {
    Series& s = by_name[q.column_text(1)];
    const double lo = q.column_double(5), hi = q.column_double(6);
    if (s.tracks.empty()) {
      s.name = q.column_text(1);
      s.type = q.column_text(2);
      s.lo = lo;
      s.hi = hi;
    }
    s.tracks.push_back({q.column_int(0), q.column_double(3)});
    s.samples += q.column_int(4);
    s.lo = std::min(s.lo, lo);
    s.hi = std::max(s.hi, hi);
  }
  std::map<std::string, std::vector<Series>> families;
  for (auto& [name, s] : by_name) {
    const std::string kind = kind_of(name, s.type);
    if (kind.empty() || s.lo == s.hi) {
      skipped.push_back(name + (kind.empty() ? " (histogram part)" : " (constant)"));
      continue;
    }
    s.type = kind;
    families[(kind == "gauge" ? "0" : "1") + name.substr(0, name.find('{'))].push_back(s);
  }
  return families;
}

// The points of one series: as scraped (gauge) or the counter's rate between drawn samples.
json series_points(Db& db, const Series& s, json& rows, double& end_s) {
  const std::int64_t stride =
      std::max<std::int64_t>(1, (s.samples + kMaxMetricPoints - 1) / kMaxMetricPoints);
  Stmt q = db.prepare("SELECT ts / 1e9, value FROM (SELECT ts, value, ROW_NUMBER() OVER "
                      "(ORDER BY ts) AS rn FROM counter WHERE track_id = ?1) WHERE "
                      "(rn - 1) % ?2 = 0 ORDER BY ts");
  json pts = json::array();
  for (const auto& [track, origin_s] : s.tracks) {
    q.reset();
    q.bind(1, track);
    q.bind(2, stride);
    bool have = false;
    double t0 = 0, v0 = 0;
    while (q.step()) {
      const double t = origin_s + q.column_double(0), v = q.column_double(1);
      end_s = std::max(end_s, t);
      if (s.type == "gauge") {
        pts.push_back({{"x", r4(t)}, {"y", r4(v)}});
        rows.push_back({s.name, r4(t), r4(v)});
      } else if (have && t > t0 && v >= v0) {
        const double rate = (v - v0) / (t - t0);
        pts.push_back({{"x", r4(t)}, {"y", r4(rate)}});
        rows.push_back({s.name, r4(t), r4(rate)});
      }
      have = true;
      t0 = t;
      v0 = v;
    }
    if (!pts.empty()) pts.push_back({{"x", pts.back()["x"]}, {"y", nullptr}});  // level gap
  }
  return pts;
}

}  // namespace

void timeline_charts(Ctx& c, Db& db, std::int64_t run, const std::string& pre, json& s) {
  double end_s = 0;
  json requests = request_timeline(db, run, pre + "timeline", end_s);
  if (requests["config"]["data"]["datasets"].empty()) {
    c.omitted.push_back("Serving, load run " + std::to_string(run) +
                        ": request timeline: no request reached the server.");
    return;
  }
  const bool tracks = db.has_column("track", "load_level_id");
  std::vector<std::string> skipped;
  const auto families = tracks ? read_families(db, run, skipped)
                               : std::map<std::string, std::vector<Series>>{};
  std::vector<json> metric_charts;
  for (const auto& [key, members] : families) {
    const std::string family = key.substr(1);
    if (int(metric_charts.size()) >= kMaxMetricCharts) {
      skipped.push_back(family + " (over the " + std::to_string(kMaxMetricCharts) + " charts drawn)");
      continue;
    }
    const bool rate = members.front().type == "counter";
    json ds = json::array(), rows = json::array();
    for (std::size_t i = 0; i < members.size() && int(i) < kMaxSeriesPerChart; ++i)
      ds.push_back({{"label", members[i].name + (rate ? " rate" : "")},
                    {"data", series_points(db, members[i], rows, end_s)},
                    {"pointRadius", 1}, {"spanGaps", false}});
    for (std::size_t i = kMaxSeriesPerChart; i < members.size(); ++i)
      skipped.push_back(members[i].name + " (over " + std::to_string(kMaxSeriesPerChart) +
                        " series per chart)");
    json ch = chart(pre + "metric_" + std::to_string(metric_charts.size()),
                    "Server metric " + family +
                        (rate ? " (counter): rate per second between scrapes"
                              : " (gauge): as scraped") +
                        " (at most " + std::to_string(kMaxMetricPoints) + " samples per series)",
                    "line", ds,
                    {{"x", axis("time since the run's first level began (s)")},
                     {"y", axis(rate ? "rate (per second)" : "value (as exposed)")}},
                    {"series", "time_s", rate ? "per_second" : "value"}, rows);
    ch["height"] = 190;
    ch["compact"] = true;
    ch["yWidth"] = kYAxisWidth;
    metric_charts.push_back(std::move(ch));
  }
  // One time axis for the requests and every metric under them.
  requests["config"]["options"]["scales"]["x"]["min"] = 0;
  requests["config"]["options"]["scales"]["x"]["max"] = r4(end_s * 1.001 + 1e-3);
  s["charts"].push_back(std::move(requests));
  for (json& ch : metric_charts) {
    ch["config"]["options"]["scales"]["x"]["min"] = 0;
    ch["config"]["options"]["scales"]["x"]["max"] = r4(end_s * 1.001 + 1e-3);
    s["charts"].push_back(std::move(ch));
  }
  if (metric_charts.empty())
    c.omitted.push_back("Serving, load run " + std::to_string(run) + ": server metrics: " +
                        (skipped.empty() ? std::string("none scraped (llmbench load --server-metrics)")
                                         : "none that changed"));
  if (!skipped.empty()) {
    std::string list;
    for (const auto& n : skipped) list += (list.empty() ? "" : ", ") + n;
    c.omitted.push_back("Serving, load run " + std::to_string(run) +
                        ": server-metric series not drawn: " + list);
  }
}

}  // namespace llmbench::report
