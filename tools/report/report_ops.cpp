// The op-level section of traced cases: the roofline of the largest traced case (each point
// named; an op above its roof drawn in the warning style, since no op beats its roof: the roof
// is too low), the op time per pass by category against batch, the per-layer view and the
// timeline of one step (at most kTimelineMax events; op names drawn in their bars, decoder
// layers shaded, ms on the axis past 10 ms, and the traced repetition's slowdown said).
#include "tools/report/report_section.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <optional>
#include <vector>

namespace llmbench::report {

namespace {

// The rows of a stacked bar chart: one bar per label (in first-seen order), one stack segment
// per category, and the table beside it.
struct StackedBars {
  std::vector<std::string> labels;
  std::map<std::string, std::map<std::string, double>> by_cat;
  json trows = json::array();

  void add(const std::string& label, const std::string& cat, double value, json table_row) {
    if (std::find(labels.begin(), labels.end(), label) == labels.end()) labels.push_back(label);
    by_cat[cat][label] = value;
    trows.push_back(std::move(table_row));
  }
  bool empty() const { return trows.empty(); }

  json chart_config(const std::string& id, const std::string& title, const json& axes,
                    const std::vector<std::string>& header) const {
    json ds = json::array();
    for (const auto& [cat, m] : by_cat) {
      json data = json::array();
      for (const auto& l : labels) {
        const auto it = m.find(l);
        data.push_back(it == m.end() ? json(0) : json(it->second));
      }
      ds.push_back({{"label", cat}, {"data", data}});
    }
    json cfg = chart(id, title, "bar", ds, axes, header, trows);
    cfg["config"]["data"]["labels"] = labels;
    cfg["config"]["options"]["scales"]["x"]["stacked"] = true;
    cfg["config"]["options"]["scales"]["y"]["stacked"] = true;
    return cfg;
  }
};

constexpr int kTimelineMax = 1500;

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

// The ceilings of case `case_id`: its own denominators where the case stored them (schema v7:
// mfu_peak_tflops, the GEMM peak of its dtype; mbu_peak_gbps, the read roof probed beside it),
// else the run's peak of the case's dtype (peak_<dtype>_tflops), else the run's peak_tflops and
// peak_bandwidth_gbps. A bf16 case's ops are drawn under the bf16 roof, not fp32's.
struct CaseCeilings {
  double bw_gbps = 0, tflops = 0;
  std::string dtype, bw_from;
};

CaseCeilings case_ceilings(Ctx& c, std::int64_t case_id) {
  CaseCeilings k;
  const auto run_cols = columns_of(*c.db, "run"), case_cols = columns_of(*c.db, "bench_case");
  Stmt d = c.db->prepare("SELECT dtype, run_id FROM bench_case WHERE id = ?");
  d.bind(1, case_id);
  if (!d.step()) return k;
  k.dtype = d.column_text(0);
  const std::int64_t run_id = d.column_int(1);
  const std::string dtype_col = "peak_" + k.dtype + "_tflops";
  Stmt pk = c.db->prepare("SELECT peak_bandwidth_gbps, " +
                          (run_cols.count(dtype_col) ? "COALESCE(" + dtype_col + ", peak_tflops)"
                                                     : std::string("peak_tflops")) +
                          " FROM run WHERE id = ?");
  pk.bind(1, run_id);
  if (pk.step()) {
    k.bw_gbps = pk.column_double(0);
    k.tflops = pk.column_double(1);
    k.bw_from = "roofline";
  }
  if (case_cols.count("mfu_peak_tflops") && case_cols.count("mbu_peak_gbps")) {
    Stmt own = c.db->prepare("SELECT mfu_peak_tflops, mbu_peak_gbps FROM bench_case WHERE id = ?");
    own.bind(1, case_id);
    if (own.step()) {
      if (!own.column_is_null(0)) k.tflops = own.column_double(0);
      if (!own.column_is_null(1)) {
        k.bw_gbps = own.column_double(1);
        k.bw_from = "probed beside the case";
      }
    }
  }
  return k;
}

void roofline_chart(Ctx& c, json& s, std::int64_t case_id, const std::string& label) {
  const CaseCeilings k = case_ceilings(c, case_id);
  const double bw = k.bw_gbps, tf = k.tflops;
  Stmt q = c.db->prepare(
      "SELECT name, phase, COUNT(*), SUM(flops), SUM(bytes), SUM(dur) FROM event WHERE case_id = ? "
      "AND flops > 0 AND bytes > 0 AND dur > 0 GROUP BY name, phase ORDER BY phase, SUM(dur) DESC");
  q.bind(1, case_id);
  // The roof at intensity ai, GFLOP/s (0: no roof recorded).
  auto roof_at = [&](double ai) { return bw > 0 && tf > 0 ? std::min(bw * ai, tf * 1000) : 0.0; };
  std::map<std::string, json> by_phase;
  json trows = json::array(), above = json::array();
  double lo = 1e300, hi = 0;
  std::vector<std::string> above_names;
  while (q.step()) {
    const double flops = q.column_double(3), bytes = q.column_double(4), dur = q.column_double(5);
    const double ai = flops / bytes, gflops = flops / dur;  // FLOP per ns = GFLOP/s
    lo = std::min(lo, ai);
    hi = std::max(hi, ai);
    const std::string phase = q.column_is_null(1) ? "other" : q.column_text(1);
    const double roof = roof_at(ai);
    const bool over = roof > 0 && gflops > roof * (1 + 1e-9);
    json pt = {{"x", r4(ai)}, {"y", r4(gflops)}, {"name", q.column_text(0)}};
    if (over) {
      above.push_back(pt);
      above_names.push_back(q.column_text(0) + " (" + phase + ")");
    } else {
      by_phase[phase].push_back(pt);
    }
    trows.push_back({q.column_text(0), phase, q.column_int(2), r4(ai), r4(gflops),
                     roof > 0 ? json(r4(gflops / roof)) : json(nullptr), r4(dur / 1e6)});
  }
  if (trows.empty()) return;
  json ds = json::array();
  for (auto& [phase, pts] : by_phase)
    ds.push_back({{"label", "ops, " + phase}, {"data", pts}, {"showLine", false},
                  {"pointRadius", 4}});
  if (!above.empty())
    ds.push_back({{"label", "ops above the roof (impossible: the roof is too low)"},
                  {"data", above}, {"showLine", false}, {"warn", true}});
  if (bw > 0 && tf > 0) {
    json roof = json::array();
    const double a0 = std::min(lo / 4, 0.01), a1 = std::max(hi * 4, tf * 1000 / bw * 4);
    const double ridge = tf * 1000 / bw;
    for (double a : {a0, ridge, a1})
      roof.push_back({{"x", r4(a)}, {"y", r4(std::min(bw * a, tf * 1000))}});
    ds.push_back({{"label", fmt::format("100% roof ({}): {:.1f} GB/s ({}), {:.4g} TFLOP/s {} GEMM",
                                        k.dtype, bw, k.bw_from, tf, k.dtype)},
                  {"data", roof}, {"pointRadius", 0}, {"showLine", true}, {"dash", true},
                  {"roof", true}});
  } else {
    c.omitted.push_back("Roofline ceilings: the run recorded no peaks.");
  }
  json cfg = chart(
      "roofline", "Roofline: achieved GFLOP/s against arithmetic intensity per op (" + label + ")",
      "scatter", ds,
      {{"x", axis("arithmetic intensity (FLOP/byte)", "logarithmic")},
       {"y", axis("achieved (GFLOP/s)", "logarithmic")}},
      {"op", "phase", "events", "FLOP/byte", "GFLOP/s", "fraction of roof", "total ms"}, trows);
  cfg["ceilings"] = {{"dtype", k.dtype}, {"tflops", tf}, {"gbps", bw}, {"gbps_from", k.bw_from}};
  cfg["pointLabels"] = true;
  if (bw > 0 && tf > 0)
    cfg["roofLabel"] = {{"y", r4(tf * 1000)},
                        {"text", fmt::format("100% of the {} GEMM peak ({:.4g} TFLOP/s)", k.dtype, tf)}};
  if (!above.empty()) {
    std::string names;
    for (std::size_t i = 0; i < above_names.size() && i < 4; ++i)
      names += (i ? ", " : "") + above_names[i];
    if (above_names.size() > 4) names += " and " + std::to_string(above_names.size() - 4) + " more";
    cfg["warn"] = true;
    cfg["note"] = std::to_string(above.size()) + (above.size() == 1 ? " op is" : " ops are") +
                  " above the roof (" + names + "): " + roof_advice("above the roof");
  }
  cfg["height"] = 480;
  s["charts"].push_back(std::move(cfg));
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
  StackedBars bars;
  while (q.step()) {
    const std::string l = q.column_text(0), cat = q.column_text(2);
    bars.add(l, cat, r4(q.column_double(3)), {l, cat, r4(q.column_double(3))});
  }
  if (bars.empty()) {
    c.omitted.push_back("Op time breakdown, " + phase + ": no traced " + phase + " ops.");
    return;
  }
  s["charts"].push_back(bars.chart_config(
      "breakdown_" + phase,
      "Op time per " + std::string(phase == "decode" ? "decode step" : "prefill") +
          " (µs) by category, stacked, against batch",
      {{"x", axis("case (model dtype batch)", "category")}, {"y", axis("time per pass (µs)")}},
      {"case", "category", "µs per pass"}));
}

void layer_chart(Ctx& c, json& s, std::int64_t case_id, const std::string& label) {
  Stmt q = c.db->prepare(
      "WITH ev AS (SELECT layer, category, dur, rep, step FROM event WHERE case_id = ? AND phase "
      "= 'decode' AND layer IS NOT NULL AND category IS NOT NULL AND category <> 'range') "
      "SELECT layer, category, SUM(dur) / 1e3 / (SELECT COUNT(DISTINCT rep * 1000000 + step) "
      "FROM ev) FROM ev GROUP BY layer, category ORDER BY layer, category");
  q.bind(1, case_id);
  StackedBars bars;
  while (q.step()) {
    const std::string l = "layer " + std::to_string(q.column_int(0)), cat = q.column_text(1);
    bars.add(l, cat, r4(q.column_double(2)), {q.column_int(0), cat, r4(q.column_double(2))});
  }
  if (bars.empty()) {
    c.omitted.push_back("Per-layer view: the traced case has no decode ops with a layer.");
    return;
  }
  s["charts"].push_back(bars.chart_config(
      "layers", "Decode time per step per layer (µs) by category (" + label + ")",
      {{"x", axis("decoder layer", "category")}, {"y", axis("time per step (µs)")}},
      {"layer", "category", "µs per step"}));
}

// What the traced repetition's step cost against the untraced ones: "the traced repetition
// ran 12.4x slower than the untraced ones (trace_overhead_tpot) ...", from bench_case.
std::string overhead_note(Ctx& c, std::int64_t case_id, const std::string& phase,
                          double step_ms, bool* slow) {
  const auto cols = columns_of(*c.db, "bench_case");
  const std::string ovh = phase == "decode" ? "trace_overhead_tpot" : "trace_overhead_ttft";
  const std::string untraced = phase == "decode" ? "tpot_ms_p50" : "ttft_ms_p50";
  if (!cols.count(ovh) || !cols.count(untraced)) return "";
  Stmt q = c.db->prepare("SELECT " + ovh + ", " + untraced + " FROM bench_case WHERE id = ?");
  q.bind(1, case_id);
  if (!q.step()) return "";
  const std::string what = phase == "decode" ? "TPOT" : "TTFT";
  std::string note = fmt::format("This {} step spans {:.3f} ms in the traced repetition", phase,
                                 step_ms);
  if (!q.column_is_null(1))
    note += fmt::format("; the untraced repetitions' median {} is {} ms", what,
                        field_text(untraced, q.column_double(1)));
  if (q.column_is_null(0)) return note + ".";
  const double x = q.column_double(0);
  *slow = x > 1.1;
  if (x > 1.1)
    return note + fmt::format(": the traced repetition ran {}x slower than the untraced ones "
                              "({}), so the durations here are inflated by tracing; the headline "
                              "numbers come from the untraced repetitions.",
                              field_text(ovh, x), ovh);
  return note + fmt::format(" (tracing overhead x{}, {}).", field_text(ovh, x), ovh);
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
  const std::string where = "e.case_id = ?1 AND e.rep IS ?2 AND e.step = ?3 AND e.phase = ?4";
  auto bind = [&](Stmt& q) { q.bind(1, case_id).bind(2, rep).bind(3, step).bind(4, phase); };
  Stmt span = c.db->prepare("SELECT MIN(e.ts), MAX(e.ts + e.dur) FROM event e WHERE " + where);
  bind(span);
  span.step();
  const std::int64_t t0 = span.column_int(0);
  // Milliseconds once the step is longer than 10 ms: 536 ms reads better than 536000 µs.
  const bool ms = span.column_int(1) - t0 > 10'000'000;
  const double unit_ns = ms ? 1e6 : 1e3;
  const std::string unit = ms ? "ms" : "µs";
  Stmt q = c.db->prepare(
      "SELECT e.ts, e.dur, COALESCE(e.category, 'other'), e.name, e.depth, COALESCE(t.name, "
      "'track ' || e.track_id), e.layer FROM event e LEFT JOIN track t ON t.id = e.track_id "
      "WHERE " + where + " ORDER BY e.ts LIMIT " + std::to_string(kTimelineMax));
  bind(q);
  std::map<std::string, json> by_cat;
  json trows = json::array();
  std::vector<std::string> lanes;
  std::map<std::int64_t, std::pair<double, double>> layers;  // layer -> its span on the axis
  // One track (the CPU backend's): its lanes are "depth N" and the axis names the track, so
  // the bars keep the width (and the room for their names).
  Stmt tracks = c.db->prepare("SELECT COUNT(DISTINCT e.track_id), MIN(COALESCE(t.name, 'track ' "
                              "|| e.track_id)) FROM event e LEFT JOIN track t ON t.id = "
                              "e.track_id WHERE " + where);
  bind(tracks);
  tracks.step();
  const bool one_track = tracks.column_int(0) == 1;
  while (q.step()) {
    const double a = (q.column_int(0) - t0) / unit_ns, b = a + q.column_int(1) / unit_ns;
    const std::string lane = (one_track ? std::string() : q.column_text(5) + " · ") + "depth " +
                             std::to_string(q.column_int(4));
    if (std::find(lanes.begin(), lanes.end(), lane) == lanes.end()) lanes.push_back(lane);
    json pt = {{"x", {r4(a), r4(b)}}, {"y", lane}, {"name", q.column_text(3)}};
    json layer = nullptr;
    if (!q.column_is_null(6)) {
      const std::int64_t l = q.column_int(6);
      layer = l;
      pt["name"] = q.column_text(3) + " (layer " + std::to_string(l) + ")";
      // A range spanning a layer is labelled with its number; an op inside one by its name.
      pt["label"] = q.column_text(2) == "range" ? q.column_text(3) + " " + std::to_string(l)
                                                : q.column_text(3);
      pt["layer"] = l;
      auto [it, fresh] = layers.try_emplace(l, a, b);
      if (!fresh) it->second = {std::min(it->second.first, a), std::max(it->second.second, b)};
    }
    by_cat[q.column_text(2)].push_back(std::move(pt));
    trows.push_back({q.column_text(5), q.column_int(4), q.column_text(2), q.column_text(3), layer,
                     r4(a), r4(q.column_int(1) / unit_ns)});
  }
  if (trows.empty()) return;
  std::sort(lanes.begin(), lanes.end());
  json ds = json::array();
  for (auto& [cat, pts] : by_cat)
    ds.push_back({{"label", cat}, {"data", pts}, {"grouped", false}, {"barPercentage", 0.9},
                  {"categoryPercentage", 1.0}});
  json cfg = chart("timeline",
                   "Timeline of " + phase + " step " + std::to_string(step) +
                       " of traced repetition " + std::to_string(rep) + " (" + label + ")" +
                       (one_track ? " on track " + tracks.column_text(1) : std::string()) +
                       ": ops named where they fit, decoder layers shaded, " + unit +
                       " from the step's start",
                   "bar", ds,
                   {{"x", axis("time since the step's first event (" + unit + ")")},
                    {"y", axis(one_track ? "nesting depth" : "track · nesting depth",
                               "category")}},
                   {"track", "depth", "category", "op", "layer", "start " + unit,
                    "duration " + unit},
                   trows);
  cfg["config"]["data"]["labels"] = lanes;
  cfg["config"]["options"]["indexAxis"] = "y";
  cfg["config"]["options"]["scales"]["x"]["min"] = 0;
  cfg["names"] = true;
  json bands = json::array();
  for (const auto& [l, span_of] : layers)
    bands.push_back({{"from", r4(span_of.first)}, {"to", r4(span_of.second)},
                     {"label", "L" + std::to_string(l)}});
  if (!bands.empty()) cfg["layers"] = bands;
  cfg["height"] = std::max<std::size_t>(240, 28 * lanes.size() + 110);
  bool slow = false;
  const std::string note =
      overhead_note(c, case_id, phase, (span.column_int(1) - t0) / 1e6, &slow);
  if (!note.empty()) cfg["note"] = note;
  if (slow) cfg["warn"] = true;
  s["charts"].push_back(std::move(cfg));
}

}  // namespace

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

}  // namespace llmbench::report
