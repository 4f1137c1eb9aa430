// See report_data.h. Every chart is built from one aggregating SELECT; the trace sections read
// at most one case's events grouped by op, layer or category, and the timeline at most
// kTimelineMax events of one decode step.
#include "tools/report/report_data.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "kernels/common/error.h"
#include "tools/compare/compare_load.h"
#include "tools/compare/compare_report.h"
#include "tools/query/query_runner.h"
#include "tools/store/sqlite_db.h"

namespace llmbench {

namespace {

using json = nlohmann::ordered_json;
constexpr int kTimelineMax = 1500;

// 4 significant digits: the page shows no more, and the file stays small.
double r4(double v) {
  if (v == 0 || !std::isfinite(v)) return v;
  const double scale = std::pow(10.0, 3 - std::floor(std::log10(std::fabs(v))));
  return std::round(v * scale) / scale;
}
json num(const Stmt& s, int i) {
  return s.column_is_null(i) ? json(nullptr) : json(r4(s.column_double(i)));
}

bool has_table(Db& db, const std::string& t) {
  Stmt s = db.prepare("SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name = ?");
  s.bind(1, t);
  return s.step();
}
std::set<std::string> columns_of(Db& db, const std::string& t) {
  std::set<std::string> out;
  Stmt s = db.prepare("SELECT name FROM pragma_table_info(?)");
  s.bind(1, t);
  while (s.step()) out.insert(s.column_text(0));
  return out;
}

json axis(const std::string& title, const std::string& type = "linear") {
  return {{"type", type}, {"title", {{"display", true}, {"text", title}}}};
}
json chart(const std::string& id, const std::string& title, const std::string& type, json datasets,
           json scales, json columns, json rows) {
  return {{"id", id},
          {"title", title},
          {"config", {{"type", type}, {"data", {{"datasets", std::move(datasets)}}},
                      {"options", {{"scales", std::move(scales)}}}}},
          {"table", {{"columns", std::move(columns)}, {"rows", std::move(rows)}}}};
}
json section(const std::string& id, const std::string& title) {
  return {{"id", id}, {"title", title}, {"charts", json::array()}};
}

struct Ctx {
  Db* db = nullptr;
  std::int64_t group = 0;
  std::string group_sql;  // "COALESCE(run_group, id)", or "id" before merged shards existed
  std::string cases_sql;  // "SELECT id FROM run WHERE <group_sql> = ?1"
  bool show_variants = false;
  json omitted = json::array();
};

// Variants are named only when the run holds more than one set (they are long JSON objects).
std::string series_label(const Ctx& c, const std::string& model, const std::string& dtype,
                         const std::string& variants, int p, int n) {
  std::string l = model + " " + dtype + " p" + std::to_string(p) + " n" + std::to_string(n);
  if (c.show_variants && variants != "{}" && !variants.empty()) l += " " + variants;
  return l;
}

// ---- summary -------------------------------------------------------------------------------
json summary_section(Ctx& c) {
  json s = section("summary", "Run and environment");
  const auto cols = columns_of(*c.db, "run");
  Stmt q = c.db->prepare("SELECT * FROM run WHERE " + c.group_sql + " = ? ORDER BY id");
  q.bind(1, c.group);
  json facts = json::array();
  const std::vector<std::string> keep = {"id", "started_at", "command_line", "llmbench_version",
                                         "git_commit", "build_type", "host", "cpu", "gpu",
                                         "driver", "threads", "peak_bandwidth_gbps", "peak_tflops",
                                         "peak_source", "profile", "shard", "status"};
  while (q.step()) {
    json run = json::object();
    for (int i = 0; i < q.columns(); ++i) {
      const std::string name = q.column_name(i);
      if (std::find(keep.begin(), keep.end(), name) == keep.end()) continue;
      run[name] = q.column_is_null(i) ? std::string() : q.column_text(i);
    }
    facts.push_back(run);
  }
  s["facts"] = facts;
  Stmt n = c.db->prepare(
      std::string("SELECT COUNT(*), SUM(status = 'ok'), ") +
      (columns_of(*c.db, "bench_case").count("trace") ? "SUM(trace <> 'off')" : "0") +
      " FROM bench_case WHERE run_id IN (" + c.cases_sql + ")");
  n.bind(1, c.group);
  n.step();
  s["cases"] = {{"cases", n.column_int(0)}, {"ok", n.column_int(1)}, {"traced", n.column_int(2)}};
  return s;
}

// ---- sweep: latency and utilisation against batch --------------------------------------------
struct CaseRow {
  std::string label;
  int batch;
  std::map<std::string, json> v;  // column -> value or null
};

void sweep_section(Ctx& c, json& sections) {
  const auto cols = columns_of(*c.db, "bench_case");
  const std::vector<std::string> wanted = {
      "ttft_ms_p10", "ttft_ms_p50", "ttft_ms_p90", "ttft_ms_p99", "tpot_ms_p10", "tpot_ms_p50",
      "tpot_ms_p90", "tpot_ms_p99", "tpot_ms_mean", "e2e_ms_p50", "throughput_tok_s", "mfu",
      "mbu"};
  std::vector<std::string> present;
  std::string sel = "SELECT model, dtype, variants, prompt_len, max_new_tokens, batch";
  for (const auto& w : wanted)
    if (cols.count(w)) {
      present.push_back(w);
      sel += ", " + w;
    }
  Stmt q = c.db->prepare(sel + " FROM bench_case WHERE status = 'ok' AND run_id IN (" +
                         c.cases_sql + ") ORDER BY model, dtype, variants, prompt_len, "
                                       "max_new_tokens, batch, id");
  q.bind(1, c.group);
  std::vector<CaseRow> rows;
  std::vector<std::string> order;
  while (q.step()) {
    CaseRow r;
    r.label = series_label(c, q.column_text(0), q.column_text(1), q.column_text(2),
                           int(q.column_int(3)), int(q.column_int(4)));
    r.batch = int(q.column_int(5));
    for (size_t i = 0; i < present.size(); ++i) r.v[present[i]] = num(q, int(6 + i));
    if (order.empty() || order.back() != r.label) order.push_back(r.label);
    rows.push_back(std::move(r));
  }
  if (rows.empty()) {
    c.omitted.push_back("Sweep charts: the run has no successful cases.");
    return;
  }
  json s = section("sweep", "Sweep: latency, throughput and utilisation against batch");
  auto get = [](const CaseRow& r, const std::string& k) {
    auto it = r.v.find(k);
    return it == r.v.end() ? json(nullptr) : it->second;
  };
  // A median line per series with a shaded p10-p90 band (p99 as a dashed line).
  auto band_chart = [&](const std::string& id, const std::string& what, const std::string& m) {
    json ds = json::array(), trows = json::array();
    bool any = false;
    for (const auto& label : order) {
      json med = json::array(), lo = json::array(), hi = json::array(), p99 = json::array();
      for (const auto& r : rows) {
        if (r.label != label) continue;
        const json p50 = get(r, m + "_p50"), p10 = get(r, m + "_p10"), p90 = get(r, m + "_p90"),
                   p9 = get(r, m + "_p99");
        trows.push_back({label, r.batch, p10, p50, p90, p9});
        if (p50.is_null()) continue;
        any = true;
        med.push_back({{"x", r.batch}, {"y", p50}});
        if (!p10.is_null() && !p90.is_null()) {
          lo.push_back({{"x", r.batch}, {"y", p10}});
          hi.push_back({{"x", r.batch}, {"y", p90}});
        }
        if (!p9.is_null()) p99.push_back({{"x", r.batch}, {"y", p9}});
      }
      if (med.empty()) continue;
      ds.push_back({{"label", label + " median"}, {"data", med}, {"series", label}});
      if (!lo.empty()) {
        ds.push_back({{"label", label + " p10"}, {"data", lo}, {"series", label}, {"band", "lo"}});
        ds.push_back({{"label", label + " p90"}, {"data", hi}, {"series", label}, {"band", "hi"}});
      }
      if (!p99.empty())
        ds.push_back({{"label", label + " p99"}, {"data", p99}, {"series", label}, {"dash", true}});
    }
    if (!any) {
      c.omitted.push_back(what + " against batch: no case has it (e.g. TPOT needs "
                                 "--max-new-tokens > 1).");
      return;
    }
    s["charts"].push_back(chart(id, what + " (ms) against batch: median, p10-p90 band, p99",
                                "line", ds,
                                {{"x", axis("batch (sequences)")}, {"y", axis(what + " (ms)")}},
                                {"series", "batch", m + "_p10", m + "_p50", m + "_p90",
                                 m + "_p99"},
                                trows));
  };
  band_chart("ttft", "TTFT", "ttft_ms");
  band_chart("tpot", "TPOT", "tpot_ms");

  // Throughput against latency: one point per case, a line per series in batch order.
  {
    json ds = json::array(), trows = json::array();
    for (const auto& label : order) {
      json pts = json::array();
      for (const auto& r : rows) {
        if (r.label != label) continue;
        const json e2e = get(r, "e2e_ms_p50"), tput = get(r, "throughput_tok_s");
        trows.push_back({label, r.batch, e2e, tput});
        if (!e2e.is_null() && !tput.is_null())
          pts.push_back({{"x", e2e}, {"y", tput}, {"batch", r.batch}});
      }
      if (!pts.empty()) ds.push_back({{"label", label}, {"data", pts}, {"series", label}});
    }
    if (ds.empty())
      c.omitted.push_back("Throughput against latency: no case has both e2e_ms_p50 and "
                          "throughput_tok_s.");
    else
      s["charts"].push_back(chart(
          "throughput_latency",
          "Throughput (tok/s) against end-to-end latency (ms), one point per batch",
          "line", ds,
          {{"x", axis("e2e latency, median (ms)")}, {"y", axis("throughput (tokens/s)")}},
          {"series", "batch", "e2e_ms_p50", "throughput_tok_s"}, trows));
  }
  // MBU and MFU against batch.
  {
    json ds = json::array(), trows = json::array();
    for (const auto& label : order) {
      json mbu = json::array(), mfu = json::array();
      for (const auto& r : rows) {
        if (r.label != label) continue;
        const json bu = get(r, "mbu"), fu = get(r, "mfu");
        trows.push_back({label, r.batch, bu, fu});
        if (!bu.is_null()) mbu.push_back({{"x", r.batch}, {"y", r4(bu.get<double>() * 100)}});
        if (!fu.is_null()) mfu.push_back({{"x", r.batch}, {"y", r4(fu.get<double>() * 100)}});
      }
      if (!mbu.empty()) ds.push_back({{"label", label + " MBU"}, {"data", mbu}, {"series", label}});
      if (!mfu.empty())
        ds.push_back(
            {{"label", label + " MFU"}, {"data", mfu}, {"series", label}, {"dash", true}});
    }
    if (ds.empty())
      c.omitted.push_back("MBU and MFU: no case has them (no peaks recorded).");
    else
      s["charts"].push_back(chart("utilisation",
                                  "MBU (solid) and MFU (dashed), % of the measured peaks, "
                                  "against batch",
                                  "line", ds,
                                  {{"x", axis("batch (sequences)")},
                                   {"y", axis("utilisation (%)")}},
                                  {"series", "batch", "mbu (fraction)", "mfu (fraction)"}, trows));
  }
  sections.push_back(std::move(s));
}

// ---- traces --------------------------------------------------------------------------------
// The traced case the op-level charts show: the largest batch among cases with op events.
std::optional<std::int64_t> traced_case(Ctx& c, std::string* label) {
  Stmt q = c.db->prepare(
      "SELECT bc.id, bc.model, bc.dtype, bc.variants, bc.prompt_len, bc.max_new_tokens, bc.batch "
      "FROM bench_case bc WHERE bc.run_id IN (" + c.cases_sql + ") AND EXISTS (SELECT 1 FROM "
      "event e WHERE e.case_id = bc.id AND e.flops > 0) ORDER BY bc.batch DESC, bc.id DESC "
      "LIMIT 1");
  q.bind(1, c.group);
  if (!q.step()) return std::nullopt;
  *label = series_label(c, q.column_text(1), q.column_text(2), q.column_text(3),
                        int(q.column_int(4)), int(q.column_int(5))) +
           " b" + std::to_string(q.column_int(6));
  return q.column_int(0);
}

void roofline_chart(Ctx& c, json& s, std::int64_t case_id, const std::string& label) {
  Stmt pk = c.db->prepare("SELECT peak_bandwidth_gbps, peak_tflops FROM run WHERE id = ?");
  pk.bind(1, c.group);
  double bw = 0, tf = 0;
  if (pk.step()) {
    bw = pk.column_double(0);
    tf = pk.column_double(1);
  }
  Stmt q = c.db->prepare(
      "SELECT name, phase, COUNT(*), SUM(flops), SUM(bytes), SUM(dur) FROM event WHERE case_id = ? "
      "AND flops > 0 AND bytes > 0 AND dur > 0 GROUP BY name, phase ORDER BY phase, SUM(dur) DESC");
  q.bind(1, case_id);
  std::map<std::string, json> by_phase;
  json trows = json::array();
  double lo = 1e300, hi = 0;
  while (q.step()) {
    const double flops = q.column_double(3), bytes = q.column_double(4), dur = q.column_double(5);
    const double ai = flops / bytes, gflops = flops / dur;  // FLOP per ns = GFLOP/s
    lo = std::min(lo, ai);
    hi = std::max(hi, ai);
    const std::string phase = q.column_is_null(1) ? "other" : q.column_text(1);
    by_phase[phase].push_back({{"x", r4(ai)}, {"y", r4(gflops)}, {"name", q.column_text(0)}});
    trows.push_back({q.column_text(0), phase, q.column_int(2), r4(ai), r4(gflops),
                     r4(dur / 1e6)});
  }
  if (trows.empty()) return;
  json ds = json::array();
  for (auto& [phase, pts] : by_phase)
    ds.push_back({{"label", "ops, " + phase}, {"data", pts}, {"showLine", false},
                  {"pointRadius", 4}});
  if (bw > 0 && tf > 0) {
    json roof = json::array();
    const double a0 = std::min(lo / 4, 0.01), a1 = std::max(hi * 4, tf * 1000 / bw * 4);
    const double ridge = tf * 1000 / bw;
    for (double a : {a0, ridge, a1})
      roof.push_back({{"x", r4(a)}, {"y", r4(std::min(bw * a, tf * 1000))}});
    ds.push_back({{"label", "roofline: " + std::to_string(int(bw)) + " GB/s, " +
                                std::to_string(r4(tf)).substr(0, 6) + " TFLOP/s"},
                  {"data", roof}, {"pointRadius", 0}, {"showLine", true}, {"dash", true},
                  {"roof", true}});
  } else {
    c.omitted.push_back("Roofline ceilings: the run recorded no peaks.");
  }
  s["charts"].push_back(chart(
      "roofline", "Roofline: achieved GFLOP/s against arithmetic intensity per op (" + label + ")",
      "scatter", ds,
      {{"x", axis("arithmetic intensity (FLOP/byte)", "logarithmic")},
       {"y", axis("achieved (GFLOP/s)", "logarithmic")}},
      {"op", "phase", "events", "FLOP/byte", "GFLOP/s", "total ms"}, trows));
}

void breakdown_chart(Ctx& c, json& s, const std::string& phase) {
  // Leaf ops (category other than 'range'), time per pass (per prefill, per decode step).
  Stmt q = c.db->prepare(
      "WITH ev AS (SELECT e.case_id, e.category, e.dur, e.rep, e.step FROM event e WHERE "
      "e.phase = ?2 AND e.case_id IN (SELECT id FROM bench_case WHERE run_id IN (" + c.cases_sql +
      ")) AND e.category IS NOT NULL AND e.category <> 'range' AND e.category <> 'sample'), "
      "passes AS (SELECT case_id, COUNT(DISTINCT rep * 1000000 + step) AS n FROM ev GROUP BY "
      "case_id) SELECT bc.model || ' ' || bc.dtype || ' b' || bc.batch, bc.batch, ev.category, "
      "SUM(ev.dur) / 1e3 / p.n FROM ev JOIN passes p ON p.case_id = ev.case_id JOIN bench_case "
      "bc ON bc.id = ev.case_id GROUP BY ev.case_id, ev.category ORDER BY bc.model, bc.dtype, "
      "bc.batch, bc.id, ev.category");
  q.bind(1, c.group);
  q.bind(2, phase);
  std::vector<std::string> labels;
  std::map<std::string, std::map<std::string, double>> by_cat;
  json trows = json::array();
  while (q.step()) {
    const std::string l = q.column_text(0), cat = q.column_text(2);
    if (std::find(labels.begin(), labels.end(), l) == labels.end()) labels.push_back(l);
    by_cat[cat][l] = r4(q.column_double(3));
    trows.push_back({l, cat, r4(q.column_double(3))});
  }
  if (trows.empty()) {
    c.omitted.push_back("Op time breakdown, " + phase + ": no traced " + phase + " ops.");
    return;
  }
  json ds = json::array();
  for (auto& [cat, m] : by_cat) {
    json data = json::array();
    for (const auto& l : labels) data.push_back(m.count(l) ? json(m[l]) : json(0));
    ds.push_back({{"label", cat}, {"data", data}});
  }
  json cfg = chart("breakdown_" + phase,
                   "Op time per " + std::string(phase == "decode" ? "decode step" : "prefill") +
                       " (µs) by category, stacked, against batch",
                   "bar", ds,
                   {{"x", axis("case (model dtype batch)", "category")},
                    {"y", axis("time per pass (µs)")}},
                   {"case", "category", "µs per pass"}, trows);
  cfg["config"]["data"]["labels"] = labels;
  cfg["config"]["options"]["scales"]["x"]["stacked"] = true;
  cfg["config"]["options"]["scales"]["y"]["stacked"] = true;
  s["charts"].push_back(std::move(cfg));
}

void layer_chart(Ctx& c, json& s, std::int64_t case_id, const std::string& label) {
  Stmt q = c.db->prepare(
      "WITH ev AS (SELECT layer, category, dur, rep, step FROM event WHERE case_id = ? AND phase "
      "= 'decode' AND layer IS NOT NULL AND category IS NOT NULL AND category <> 'range') "
      "SELECT layer, category, SUM(dur) / 1e3 / (SELECT COUNT(DISTINCT rep * 1000000 + step) "
      "FROM ev) FROM ev GROUP BY layer, category ORDER BY layer, category");
  q.bind(1, case_id);
  std::vector<std::string> labels;
  std::map<std::string, std::map<std::string, double>> by_cat;
  json trows = json::array();
  while (q.step()) {
    const std::string l = "layer " + std::to_string(q.column_int(0)), cat = q.column_text(1);
    if (std::find(labels.begin(), labels.end(), l) == labels.end()) labels.push_back(l);
    by_cat[cat][l] = r4(q.column_double(2));
    trows.push_back({q.column_int(0), cat, r4(q.column_double(2))});
  }
  if (trows.empty()) {
    c.omitted.push_back("Per-layer view: the traced case has no decode ops with a layer.");
    return;
  }
  json ds = json::array();
  for (auto& [cat, m] : by_cat) {
    json data = json::array();
    for (const auto& l : labels) data.push_back(m.count(l) ? json(m[l]) : json(0));
    ds.push_back({{"label", cat}, {"data", data}});
  }
  json cfg = chart("layers", "Decode time per step per layer (µs) by category (" + label + ")",
                   "bar", ds,
                   {{"x", axis("decoder layer", "category")}, {"y", axis("time per step (µs)")}},
                   {"layer", "category", "µs per step"}, trows);
  cfg["config"]["data"]["labels"] = labels;
  cfg["config"]["options"]["scales"]["x"]["stacked"] = true;
  cfg["config"]["options"]["scales"]["y"]["stacked"] = true;
  s["charts"].push_back(std::move(cfg));
}

void timeline_chart(Ctx& c, json& s, std::int64_t case_id, const std::string& label) {
  // The first decode step of the first traced repetition (or the prefill when there is none).
  Stmt w = c.db->prepare(
      "SELECT rep, step, phase FROM event WHERE case_id = ? AND step IS NOT NULL ORDER BY "
      "(phase = 'decode') DESC, rep, step LIMIT 1");
  w.bind(1, case_id);
  if (!w.step()) {
    c.omitted.push_back("Timeline: the traced case has no step events.");
    return;
  }
  const std::int64_t rep = w.column_int(0), step = w.column_int(1);
  const std::string phase = w.column_text(2);
  Stmt q = c.db->prepare(
      "SELECT e.ts, e.dur, COALESCE(e.category, 'other'), e.name, e.depth, COALESCE(t.name, "
      "'track ' || e.track_id) FROM event e LEFT JOIN track t ON t.id = e.track_id WHERE "
      "e.case_id = ? AND e.rep IS ? AND e.step = ? AND e.phase = ? ORDER BY e.ts LIMIT " +
      std::to_string(kTimelineMax));
  q.bind(1, case_id).bind(2, rep).bind(3, step).bind(4, phase);
  std::map<std::string, json> by_cat;
  json trows = json::array();
  std::vector<std::string> lanes;
  std::int64_t t0 = -1;
  while (q.step()) {
    if (t0 < 0) t0 = q.column_int(0);
    const double a = (q.column_int(0) - t0) / 1e3, b = a + q.column_int(1) / 1e3;
    const std::string lane = q.column_text(5) + " · depth " + std::to_string(q.column_int(4));
    if (std::find(lanes.begin(), lanes.end(), lane) == lanes.end()) lanes.push_back(lane);
    by_cat[q.column_text(2)].push_back({{"x", {r4(a), r4(b)}}, {"y", lane},
                                        {"name", q.column_text(3)}});
    trows.push_back({q.column_text(5), q.column_int(4), q.column_text(2), q.column_text(3),
                     r4(a), r4(q.column_int(1) / 1e3)});
  }
  if (trows.empty()) return;
  std::sort(lanes.begin(), lanes.end());
  json ds = json::array();
  for (auto& [cat, pts] : by_cat)
    ds.push_back({{"label", cat}, {"data", pts}, {"grouped", false}, {"barPercentage", 0.9},
                  {"categoryPercentage", 1.0}});
  json cfg = chart("timeline",
                   "Timeline of one traced " + phase + " step (step " + std::to_string(step) +
                       ", " + label + "): ops on their tracks, µs from the step's start",
                   "bar", ds,
                   {{"x", axis("time since the step's first event (µs)")},
                    {"y", axis("track · nesting depth", "category")}},
                   {"track", "depth", "category", "op", "start µs", "duration µs"}, trows);
  cfg["config"]["data"]["labels"] = lanes;
  cfg["config"]["options"]["indexAxis"] = "y";
  cfg["config"]["options"]["scales"]["x"]["min"] = 0;
  s["charts"].push_back(std::move(cfg));
}

void trace_sections(Ctx& c, json& sections) {
  if (!has_table(*c.db, "event")) {
    c.omitted.push_back("Roofline, op breakdown, layers, timeline: the database has no trace "
                        "tables.");
    return;
  }
  std::string label;
  const auto case_id = traced_case(c, &label);
  if (!case_id) {
    Stmt any = c.db->prepare("SELECT COUNT(*) FROM event WHERE case_id IS NULL");
    any.step();
    c.omitted.push_back(
        any.column_int(0) > 0
            ? "Roofline, op breakdown, layers, timeline: the trace events belong to no benchmark "
              "case (an imported trace); use llmbench query on them."
            : "Roofline, op breakdown, layers, timeline: no case of this run was traced with "
              "--trace ops.");
    return;
  }
  json s = section("ops", "Where the time goes (traced cases)");
  roofline_chart(c, s, *case_id, label);
  breakdown_chart(c, s, "prefill");
  breakdown_chart(c, s, "decode");
  layer_chart(c, s, *case_id, label);
  timeline_chart(c, s, *case_id, label);
  if (!s["charts"].empty()) sections.push_back(std::move(s));
}

// ---- compare -------------------------------------------------------------------------------
void compare_section(const ReportOptions& o, Ctx& c, json& sections) {
  SideSpec a = parse_side(o.db), b = parse_side(o.db2);
  if (o.run && !a.run_id) a.run_id = o.run;
  const LoadedRun base = load_run(a, "DB"), cand = load_run(b, "DB2");
  CompareSettings settings;
  settings.metrics = {Metric::kTtft, Metric::kTpot, Metric::kE2e, Metric::kThroughput};
  const CompareReport rep = build_report(base, cand, settings);
  json s = section("compare", "Compare: run " + std::to_string(base.run.id) + " of " + base.path +
                                  " (base) against run " + std::to_string(cand.run.id) + " of " +
                                  cand.path + " (candidate)");
  s["note"] = summary_headline(rep.summary) + " " + summary_details(rep.summary);
  std::map<std::string, json> by_verdict;
  json ratios = json::array(), rough = json::array(), trows = json::array(),
       labels = json::array();
  for (const auto& cc : rep.cases) {
    if (cc.status != CaseStatus::kCompared) {
      trows.push_back({cc.label, "-", case_status_name(cc.status), nullptr, nullptr, nullptr,
                       nullptr, nullptr});
      continue;
    }
    for (const auto& m : cc.metrics) {
      const std::string l = cc.label + " · " + metric_info(m.metric).name;
      const char* v = verdict_name(m.verdict);
      trows.push_back({cc.label, metric_info(m.metric).name, v,
                       m.median_base ? json(r4(*m.median_base)) : json(nullptr),
                       m.median_cand ? json(r4(*m.median_cand)) : json(nullptr),
                       m.ratio ? json(r4(m.ratio->ratio)) : json(nullptr),
                       m.ratio ? json(r4(m.ratio->ci_low)) : json(nullptr),
                       m.ratio ? json(r4(m.ratio->ci_high)) : json(nullptr)});
      if (!m.ratio) {
        // Too few repetitions for an interval: the ratio of the medians, drawn as a bare point.
        if (m.median_base && m.median_cand && *m.median_base > 0) {
          labels.push_back(l);
          rough.push_back({{"x", l}, {"y", r4(*m.median_cand / *m.median_base)}});
        }
        continue;
      }
      labels.push_back(l);
      by_verdict[v].push_back({{"x", l}, {"y", {r4(m.ratio->ci_low), r4(m.ratio->ci_high)}}});
      ratios.push_back({{"x", l}, {"y", r4(m.ratio->ratio)}});
    }
  }
  json ds = json::array();
  for (auto& [v, pts] : by_verdict)
    ds.push_back({{"label", std::string("interval, ") + v}, {"data", pts}, {"grouped", false},
                  {"verdict", v}});
  if (!ratios.empty())
    ds.push_back({{"type", "line"}, {"label", "ratio (Hodges-Lehmann)"}, {"data", ratios},
                  {"showLine", false}, {"pointRadius", 4}, {"color", "#000000"}});
  if (!rough.empty())
    ds.push_back({{"type", "line"}, {"label", "median ratio (too few samples for an interval)"},
                  {"data", rough}, {"showLine", false}, {"pointRadius", 4},
                  {"pointStyle", "crossRot"}, {"verdict", "too few samples"}});
  if (labels.empty()) {
    c.omitted.push_back("Compare chart: no case matched between the two runs.");
  } else {
    json cfg = chart("compare",
                     "Candidate / base ratio per case and metric with its " +
                         std::to_string(int(std::round((1 - settings.alpha) * 100))) +
                         "% interval, coloured by verdict (throughput: higher is better)",
                     "bar", ds,
                     {{"x", axis("case · metric", "category")},
                      {"y", axis("ratio candidate / base (1 = unchanged)", "logarithmic")}},
                     {"case", "metric", "verdict", "base median", "cand median", "ratio",
                      "ci low", "ci high"},
                     trows);
    cfg["config"]["data"]["labels"] = labels;
    s["charts"].push_back(std::move(cfg));
  }
  sections.push_back(std::move(s));
}

// ---- serving (llmbench load) ----------------------------------------------------------------
// Every load level of the database, one series per (label, mode, lengths): a merged database of
// several servers draws them side by side. Percentiles are the SQL functions `llmbench query`
// and `llmbench load` share, so the numbers equal load_summary's.
bool serving_section(Ctx& c, json& sections) {
  if (!has_table(*c.db, "load_level")) {
    c.omitted.push_back("Serving charts: the database has no serving tables (no llmbench load run).");
    return false;
  }
  const std::string ok = "FROM load_request q WHERE q.level_id = l.id AND q.status = 'ok'";
  const std::string itl = "FROM load_chunk k JOIN load_request q ON q.id = k.request_id WHERE "
                          "q.level_id = l.id AND q.status = 'ok' AND k.itl_ns IS NOT NULL";
  Stmt q = c.db->prepare(
      "SELECT r.label, r.mode, l.input_len, l.output_len, l.concurrency, l.request_rate, "
      "(SELECT median(q.ttft_ns) " + ok + ") / 1e6, (SELECT percentile(q.ttft_ns, 90) " + ok +
      ") / 1e6, (SELECT percentile(q.ttft_ns, 99) " + ok + ") / 1e6, "
      "(SELECT median(q.tpot_ns) " + ok + ") / 1e6, (SELECT percentile(q.tpot_ns, 90) " + ok +
      ") / 1e6, (SELECT percentile(q.tpot_ns, 99) " + ok + ") / 1e6, "
      "(SELECT median(k.itl_ns) " + itl + ") / 1e6, (SELECT percentile(k.itl_ns, 90) " + itl +
      ") / 1e6, (SELECT percentile(k.itl_ns, 99) " + itl + ") / 1e6, "
      "(SELECT SUM(q.output_tokens) " + ok + ") / (l.duration_ns / 1e9), "
      "(SELECT COUNT(*) " + ok + ") / (l.duration_ns / 1e9), l.failed, l.requests "
      "FROM load_level l JOIN load_run r ON r.id = l.load_run_id "
      "ORDER BY r.label, r.mode, l.input_len, l.output_len, "
      "COALESCE(l.concurrency, l.request_rate), l.id");
  struct Level {
    std::string series;
    json x;  // concurrency or request rate; null for an infinite rate (all at once)
    std::string x_text;
    std::map<std::string, json> v;
  };
  std::vector<Level> levels;
  std::vector<std::string> order;
  const char* metrics[] = {"ttft_p50", "ttft_p90", "ttft_p99", "tpot_p50", "tpot_p90", "tpot_p99",
                           "itl_p50",  "itl_p90",  "itl_p99",  "output_tok_s", "request_s"};
  while (q.step()) {
    Level lv;
    const std::string mode = q.column_text(1);
    lv.series = q.column_text(0) + (mode == "rate" ? " rate" : " concurrency") + " in" +
                std::to_string(q.column_int(2)) + " out" + std::to_string(q.column_int(3));
    if (mode == "rate") {
      const double rate = q.column_double(5);
      lv.x = std::isfinite(rate) ? json(r4(rate)) : json(nullptr);
      lv.x_text = std::isfinite(rate) ? json(r4(rate)).dump() : "inf";
    } else {
      lv.x = q.column_int(4);
      lv.x_text = std::to_string(q.column_int(4));
    }
    for (int i = 0; i < 11; ++i) lv.v[metrics[i]] = num(q, 6 + i);
    lv.v["failed"] = q.column_int(17);
    lv.v["requests"] = q.column_int(18);
    if (order.empty() || order.back() != lv.series) order.push_back(lv.series);
    levels.push_back(std::move(lv));
  }
  if (levels.empty()) {
    c.omitted.push_back("Serving charts: the database holds no llmbench load levels.");
    return false;
  }
  json s = section("serving", "Serving (llmbench load): latency and throughput per load level");
  const json x_axis = axis("load level: concurrency (requests in flight) or request rate (req/s)");
  // A median line per series and the p99 dashed; the table adds the p90.
  auto latency_chart = [&](const std::string& id, const std::string& what, const std::string& m) {
    json ds = json::array(), rows = json::array();
    for (const auto& series : order) {
      json med = json::array(), p99 = json::array();
      for (const auto& lv : levels) {
        if (lv.series != series) continue;
        const json a = lv.v.at(m + "_p50"), b = lv.v.at(m + "_p90"), d = lv.v.at(m + "_p99");
        rows.push_back({series, lv.x_text, a, b, d});
        if (lv.x.is_null() || a.is_null()) continue;
        med.push_back({{"x", lv.x}, {"y", a}});
        if (!d.is_null()) p99.push_back({{"x", lv.x}, {"y", d}});
      }
      if (med.empty()) continue;
      ds.push_back({{"label", series + " median"}, {"data", med}, {"series", series}});
      if (!p99.empty())
        ds.push_back({{"label", series + " p99"}, {"data", p99}, {"series", series},
                      {"dash", true}});
    }
    if (ds.empty()) {
      c.omitted.push_back(what + " against load level: no level has it (e.g. TPOT needs 2+ "
                                 "output tokens; an infinite rate has no x position).");
      return;
    }
    s["charts"].push_back(chart("serving_" + id,
                                what + " (ms) against load level: median (solid), p99 (dashed); "
                                       "p90 in the table",
                                "line", ds, {{"x", x_axis}, {"y", axis(what + " (ms)")}},
                                {"series", "level", m + "_ms_p50", m + "_ms_p90", m + "_ms_p99"},
                                rows));
  };
  latency_chart("ttft", "TTFT", "ttft");
  latency_chart("tpot", "TPOT", "tpot");
  latency_chart("itl", "ITL", "itl");
  // Output throughput against median TTFT: one point per level, a line per series.
  {
    json ds = json::array(), rows = json::array();
    for (const auto& series : order) {
      json pts = json::array();
      for (const auto& lv : levels) {
        if (lv.series != series) continue;
        const json t = lv.v.at("ttft_p50"), tput = lv.v.at("output_tok_s");
        rows.push_back({series, lv.x_text, t, tput, lv.v.at("request_s"), lv.v.at("failed"),
                        lv.v.at("requests")});
        if (!t.is_null() && !tput.is_null()) pts.push_back({{"x", t}, {"y", tput}});
      }
      if (!pts.empty()) ds.push_back({{"label", series}, {"data", pts}, {"series", series}});
    }
    if (!ds.empty())
      s["charts"].push_back(chart(
          "serving_throughput", "Output tokens/s against median TTFT (ms), one point per level",
          "line", ds, {{"x", axis("TTFT, median (ms)")}, {"y", axis("output tokens/s")}},
          {"series", "level", "ttft_ms_p50", "output_tok_s", "request_throughput", "failed",
           "requests"},
          rows));
  }
  if (s["charts"].empty()) return false;
  sections.push_back(std::move(s));
  return true;
}

}  // namespace

json build_report_data(const ReportOptions& o) {
  SideSpec side = parse_side(o.db);
  auto db = open_query_db(side.path);
  if (!has_table(*db, "run") || !has_table(*db, "bench_case"))
    throw BadInput("report: '" + side.path + "' is not an llmbench result database (no run table)");
  Ctx c;
  c.db = db.get();
  // Databases written before `merge` (no run_group column) still report: each run is a group.
  c.group_sql = columns_of(*db, "run").count("run_group") ? "COALESCE(run_group, id)" : "id";
  const auto run = o.run ? o.run : side.run_id;
  if (run) {
    Stmt q = db->prepare("SELECT 1 FROM run WHERE " + c.group_sql + " = ?");
    q.bind(1, *run);
    if (!q.step())
      throw BadInput("report: '" + side.path + "' has no run " + std::to_string(*run));
    c.group = *run;
  } else {
    Stmt q = db->prepare("SELECT " + c.group_sql + " FROM run ORDER BY id DESC LIMIT 1");
    if (!q.step()) {
      // No benchmark run: serving results alone, or an imported trace only (or an empty
      // database): a page that says what is missing.
      json out = {{"title", "llmbench report: " + side.path}, {"sections", json::array()}};
      Ctx serving;
      serving.db = db.get();
      if (serving_section(serving, out["sections"])) {
        out["omitted"] = {"Run summary, sweep charts and op-level charts: the database holds "
                          "serving results (llmbench load) only."};
        return out;
      }
      std::int64_t events = 0;
      if (has_table(*db, "event")) {
        Stmt e = db->prepare("SELECT COUNT(*) FROM event");
        e.step();
        events = e.column_int(0);
      }
      out["omitted"] = {
          "Run summary, sweep charts, roofline, op breakdown, layers and timeline: the database "
          "holds no benchmark runs" +
          (events ? " (only " + std::to_string(events) +
                        " trace events, e.g. an imported trace; llmbench query shows them)"
                  : std::string(".")),
      };
      return out;
    }
    c.group = q.column_int(0);
  }
  c.cases_sql = "SELECT id FROM run WHERE " + c.group_sql + " = ?1";
  {
    Stmt v = db->prepare("SELECT COUNT(DISTINCT variants) FROM bench_case WHERE run_id IN (" +
                         c.cases_sql + ")");
    v.bind(1, c.group);
    c.show_variants = v.step() && v.column_int(0) > 1;
  }
  json out = {{"title", "llmbench report: " + side.path + ", run " + std::to_string(c.group)},
              {"sections", json::array()}};
  out["sections"].push_back(summary_section(c));
  sweep_section(c, out["sections"]);
  trace_sections(c, out["sections"]);
  if (!o.db2.empty()) compare_section(o, c, out["sections"]);
  serving_section(c, out["sections"]);
  out["omitted"] = c.omitted;
  return out;
}

}  // namespace llmbench
