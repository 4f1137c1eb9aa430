// The sweep section: TTFT and TPOT bands, throughput against latency, MBU and MFU, each
// against batch, one series per configuration apart from batch. Batch is drawn on a log2 axis
// with a tick at each batch of the run (1, 4, 16: never 1.5 or 2.5); a value axis whose data
// spans more than kLogSpan (tiny's milliseconds beside small's) turns logarithmic, so no series
// lies flat on zero. A run without a batch sweep (every series one case, e.g. the README's
// `run --batch 16 --max-new-tokens 1`) gets a summary card per case instead of lone dots.
// A case whose roof_check is not "ok" (a probe that moved, a stale cached peak, a utilisation
// above 1) is named in the section's warnings with what to do, and its card and utilisation
// points are drawn in the warning style. Cases with energy per phase (a CUDA run with NVML,
// docs/metrics.md) get it on their cards and, with a batch sweep, J per token against batch.
#include "tools/report/report_section.h"

#include <algorithm>
#include <fmt/core.h>
#include <map>
#include <set>
#include <vector>

namespace llmbench::report {

// ---- sweep: latency and utilisation against batch --------------------------------------------
struct CaseRow {
  std::string label;
  int batch;
  std::map<std::string, json> v;    // column -> value (4 significant digits: charts) or null
  std::map<std::string, json> raw;  // column -> the stored value or null (cards, printed text)
  std::string roof_check;         // "" when the column or the probe is absent
};

namespace {

constexpr double kLogSpan = 10;   // max / min above which a value axis is logarithmic
constexpr int kMaxCards = 24;     // cases drawn as cards when there is no batch sweep

// A log2 batch axis with exactly the run's batches as ticks.
json batch_axis(const std::vector<CaseRow>& rows) {
  std::set<int> batches;
  for (const auto& r : rows) batches.insert(r.batch);
  json a = axis("batch (sequences, log2 scale)", "logarithmic");
  json ticks = json::array(), labels = json::array();
  for (int b : batches) {
    ticks.push_back(b);
    labels.push_back(std::to_string(b));
  }
  a["min"] = r4(*batches.begin() / 1.25);
  a["max"] = r4(*batches.rbegin() * 1.25);
  a["tickValues"] = ticks;
  a["tickLabels"] = labels;
  return a;
}

// Linear, or logarithmic (and said so in the title) when the positive values span > kLogSpan.
json value_axis(const std::string& title, const std::vector<double>& values) {
  double lo = 0, hi = 0;
  for (double v : values)
    if (v > 0) {
      lo = lo == 0 ? v : std::min(lo, v);
      hi = std::max(hi, v);
    }
  if (lo > 0 && hi / lo > kLogSpan) {
    std::string t = title;
    const auto at = t.rfind(')');
    t = at == std::string::npos ? t + " (log scale)" : t.insert(at, ", log scale");
    return axis(t, "logarithmic");
  }
  return axis(title);
}

void collect(std::vector<double>& out, const json& points, const char* key) {
  for (const auto& p : points)
    if (p.contains(key) && p[key].is_number()) out.push_back(p[key].get<double>());
}

// Row r's value of column k, or null when the database lacks the column.
json get(const CaseRow& r, const std::string& k) {
  auto it = r.v.find(k);
  return it == r.v.end() ? json(nullptr) : it->second;
}

// The stored value of column k, printed as the field list says (never rounded first).
std::string text(const CaseRow& r, const std::string& k, double scale = 1, int extra = 0) {
  auto it = r.raw.find(k);
  return field_text(k, it == r.raw.end() ? json(nullptr) : it->second, scale, extra);
}

bool above_one(const json& v) { return v.is_number() && v.get<double>() > 1 + 1e-9; }

// One card per case: what a chart of lone dots would hide in its tooltips. A utilisation above
// 1 or a roof_check other than "ok" is drawn in the warning style, with what to do unless the
// page's summary table already says it (`advise` false).
json case_cards(const std::vector<CaseRow>& rows, bool advise) {
  json cards = json::array();
  for (const auto& r : rows) {
    if (int(cards.size()) == kMaxCards) break;
    json items = json::array();
    auto item = [&](const std::string& label, const std::string& value, const std::string& note,
                    bool flag = false) {
      items.push_back({{"label", label}, {"value", value}, {"note", note}});
      if (flag) items.back()["flag"] = true;
    };
    item("TTFT, median (ms)", text(r, "ttft_ms_p50"),
         "p10-p90 " + text(r, "ttft_ms_p10") + "-" + text(r, "ttft_ms_p90"));
    item("TPOT, median (ms)", text(r, "tpot_ms_p50"),
         get(r, "tpot_ms_p50").is_null() ? "no decode step (max_new_tokens 1)"
                                         : "p99 " + text(r, "tpot_ms_p99"));
    item("end-to-end, median (ms)", text(r, "e2e_ms_p50"), "");
    item("throughput (tokens/s)", text(r, "throughput_tok_s"), "generated tokens / e2e");
    // A fraction printed as a percentage: two decimals fewer than the fraction's.
    const bool mfu_high = above_one(get(r, "mfu")), mbu_high = above_one(get(r, "mbu"));
    item("MFU (% of the dtype's GEMM peak)", text(r, "mfu", 100, -2),
         mfu_high ? "above 100%: its denominator is too low" : "prefill", mfu_high);
    item("MBU (% of the probed read roof)", text(r, "mbu", 100, -2),
         mbu_high ? "above 100%: its denominator is too low" : "decode", mbu_high);
    if (!r.roof_check.empty())
      item("roof check", r.roof_check, "probes before and after the case",
           roof_flagged(r.roof_check));
    // Energy per phase, where the case has it (the board's counter through NVML).
    if (!get(r, "prefill_j_per_token").is_null())
      item("energy per prompt token (J)", text(r, "prefill_j_per_token"),
           "prefill at " + text(r, "prefill_w") + " W");
    if (!get(r, "decode_j_per_token").is_null())
      item("energy per decode token (J)", text(r, "decode_j_per_token"),
           "decode at " + text(r, "decode_w") + " W");
    json card = {{"title", r.label + " b" + std::to_string(r.batch)}, {"items", items}};
    if (advise && (roof_flagged(r.roof_check) || mfu_high || mbu_high))
      card["advice"] = "What to do: " + roof_advice(roof_flagged(r.roof_check) ? r.roof_check
                                                                               : "MFU > 1");
    cards.push_back(std::move(card));
  }
  return cards;
}

// The successful cases of the report's runs, in series order, with the columns this database
// has of `wanted` (and roof_check where it has that column).
std::vector<CaseRow> read_case_rows(Ctx& c) {
  const auto cols = columns_of(*c.db, "bench_case");
  const std::vector<std::string> wanted = {
      "ttft_ms_p10", "ttft_ms_p50", "ttft_ms_p90", "ttft_ms_p99", "tpot_ms_p10", "tpot_ms_p50",
      "tpot_ms_p90", "tpot_ms_p99", "tpot_ms_mean", "e2e_ms_p50", "throughput_tok_s", "mfu",
      "mbu", "prefill_j_per_token", "decode_j_per_token", "prefill_w", "decode_w"};
  const bool has_roof = cols.count("roof_check") > 0;
  std::vector<std::string> present;
  std::string sel = "SELECT model, dtype, variants, prompt_len, max_new_tokens, batch";
  for (const auto& w : wanted)
    if (cols.count(w)) {
      present.push_back(w);
      sel += ", " + w;
    }
  if (has_roof) sel += ", roof_check";
  Stmt q = c.db->prepare(sel + " FROM bench_case WHERE status = 'ok' AND run_id IN (" +
                         c.cases_sql + ") ORDER BY model, dtype, variants, prompt_len, "
                                       "max_new_tokens, batch, id");
  q.bind(1, c.group);
  std::vector<CaseRow> rows;
  while (q.step()) {
    CaseRow r;
    r.label = series_label(c, q.column_text(0), q.column_text(1), q.column_text(2),
                           int(q.column_int(3)), int(q.column_int(4)));
    r.batch = int(q.column_int(5));
    for (size_t i = 0; i < present.size(); ++i) {
      r.v[present[i]] = num(q, int(6 + i));
      r.raw[present[i]] = q.column_is_null(int(6 + i)) ? json(nullptr)
                                                       : json(q.column_double(int(6 + i)));
    }
    const int rc = int(6 + present.size());
    if (has_roof && !q.column_is_null(rc)) r.roof_check = q.column_text(rc);
    rows.push_back(std::move(r));
  }
  return rows;
}

// The cases grouped by series: the labels in order, and the batch axis they share.
struct Series {
  const std::vector<CaseRow>& rows;
  std::vector<std::string> order;
  json batch_x;
};

// A median line per series with a shaded p10-p90 band (p99 as a dashed line) of metric `m`.
void band_chart(Ctx& c, json& s, const Series& sr, const std::string& id,
                const std::string& what, const std::string& m) {
  json ds = json::array(), trows = json::array();
  bool any = false;
  for (const auto& label : sr.order) {
    json med = json::array(), lo = json::array(), hi = json::array(), p99 = json::array();
    for (const auto& r : sr.rows) {
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
  std::vector<double> ys;
  for (const auto& d : ds) collect(ys, d["data"], "y");
  s["charts"].push_back(chart(id, what + " (ms) against batch: median, p10-p90 band, p99",
                              "line", ds,
                              {{"x", sr.batch_x}, {"y", value_axis(what + " (ms)", ys)}},
                              {"series", "batch", m + "_p10", m + "_p50", m + "_p90",
                               m + "_p99"},
                              trows));
}

// Throughput against latency: one point per case, a line per series in batch order.
void throughput_chart(Ctx& c, json& s, const Series& sr, const std::string& id) {
  json ds = json::array(), trows = json::array();
  for (const auto& label : sr.order) {
    json pts = json::array();
    for (const auto& r : sr.rows) {
      if (r.label != label) continue;
      const json e2e = get(r, "e2e_ms_p50"), tput = get(r, "throughput_tok_s");
      trows.push_back({label, r.batch, e2e, tput});
      if (!e2e.is_null() && !tput.is_null())
        pts.push_back({{"x", e2e}, {"y", tput}, {"batch", r.batch}});
    }
    if (!pts.empty()) ds.push_back({{"label", label}, {"data", pts}, {"series", label}});
  }
  if (ds.empty()) {
    c.omitted.push_back("Throughput against latency: no case has both e2e_ms_p50 and "
                        "throughput_tok_s.");
    return;
  }
  std::vector<double> xs, ys;
  for (const auto& d : ds) {
    collect(xs, d["data"], "x");
    collect(ys, d["data"], "y");
  }
  s["charts"].push_back(chart(
      id,
      "Throughput (tok/s) against end-to-end latency (ms), one point per batch",
      "line", ds,
      {{"x", value_axis("e2e latency, median (ms)", xs)},
       {"y", value_axis("throughput (tokens/s)", ys)}},
      {"series", "batch", "e2e_ms_p50", "throughput_tok_s"}, trows));
}

// MBU and MFU against batch; a point above 100% is drawn again in the warning style.
void utilisation_chart(Ctx& c, json& s, const Series& sr) {
  json ds = json::array(), trows = json::array(), high = json::array();
  for (const auto& label : sr.order) {
    json mbu = json::array(), mfu = json::array();
    for (const auto& r : sr.rows) {
      if (r.label != label) continue;
      const json bu = get(r, "mbu"), fu = get(r, "mfu");
      trows.push_back({label, r.batch, bu, fu});
      if (!bu.is_null()) mbu.push_back({{"x", r.batch}, {"y", r4(bu.get<double>() * 100)}});
      if (!fu.is_null()) mfu.push_back({{"x", r.batch}, {"y", r4(fu.get<double>() * 100)}});
      for (const auto& [what, v] : {std::pair<const char*, json>{"MBU", bu}, {"MFU", fu}})
        if (above_one(v))
          high.push_back({{"x", r.batch}, {"y", r4(v.get<double>() * 100)},
                          {"name", label + " " + what}});
    }
    if (!mbu.empty()) ds.push_back({{"label", label + " MBU"}, {"data", mbu}, {"series", label}});
    if (!mfu.empty())
      ds.push_back(
          {{"label", label + " MFU"}, {"data", mfu}, {"series", label}, {"dash", true}});
  }
  if (ds.empty()) {
    c.omitted.push_back("MBU and MFU: no case has them (no peaks recorded).");
    return;
  }
  if (!high.empty())
    ds.push_back({{"label", "above 100%: a denominator is wrong (the cached peak is stale)"},
                  {"data", high}, {"showLine", false}, {"warn", true}});
  std::vector<double> ys;
  for (const auto& d : ds) collect(ys, d["data"], "y");
  s["charts"].push_back(chart("utilisation",
                              "MBU (solid, of the read roof probed beside each case) and MFU "
                              "(dashed, of the case dtype's GEMM peak), %, against batch",
                              "line", ds,
                              {{"x", sr.batch_x}, {"y", value_axis("utilisation (%)", ys)}},
                              {"series", "batch", "mbu (fraction)", "mfu (fraction)"}, trows));
}

// Energy per token against batch (decode solid, prefill dashed), only when some case has it.
void energy_chart(json& s, const Series& sr) {
  json ds = json::array(), trows = json::array();
  for (const auto& label : sr.order) {
    json decode = json::array(), prefill = json::array();
    for (const auto& r : sr.rows) {
      if (r.label != label) continue;
      const json d = get(r, "decode_j_per_token"), p = get(r, "prefill_j_per_token");
      if (d.is_null() && p.is_null()) continue;
      trows.push_back({label, r.batch, d, p, get(r, "decode_w"), get(r, "prefill_w")});
      if (!d.is_null()) decode.push_back({{"x", r.batch}, {"y", d}});
      if (!p.is_null()) prefill.push_back({{"x", r.batch}, {"y", p}});
    }
    if (!decode.empty())
      ds.push_back({{"label", label + " decode"}, {"data", decode}, {"series", label}});
    if (!prefill.empty())
      ds.push_back({{"label", label + " prefill"}, {"data", prefill}, {"series", label},
                    {"dash", true}});
  }
  if (ds.empty()) return;
  std::vector<double> ys;
  for (const auto& d : ds) collect(ys, d["data"], "y");
  s["charts"].push_back(chart("energy",
                              "Board energy per token (J): decode (solid) and prefill (dashed), "
                              "against batch (NVML's counter over every repetition's phase)",
                              "line", ds,
                              {{"x", sr.batch_x}, {"y", value_axis("energy per token (J)", ys)}},
                              {"series", "batch", "decode_j_per_token", "prefill_j_per_token",
                               "decode_w", "prefill_w"},
                              trows));
}

}  // namespace

void sweep_section(Ctx& c, json& sections) {
  const std::vector<CaseRow> rows = read_case_rows(c);
  if (rows.empty()) {
    c.omitted.push_back("Sweep charts: the run has no successful cases.");
    return;
  }
  Series sr{rows, {}, json()};
  for (const auto& r : rows)
    if (sr.order.empty() || sr.order.back() != r.label) sr.order.push_back(r.label);
  json s = section("sweep", "Sweep: latency, throughput and utilisation against batch");
  for (const auto& r : rows) {
    const bool high = above_one(get(r, "mfu")) || above_one(get(r, "mbu"));
    if ((roof_flagged(r.roof_check) || high) && !c.flags_in_summary)
      s["warnings"].push_back(r.label + " b" + std::to_string(r.batch) + ": roof check " +
                              (r.roof_check.empty() ? "a utilisation above 1" : r.roof_check) +
                              ": " + roof_advice(roof_flagged(r.roof_check) ? r.roof_check
                                                                           : "MFU > 1"));
  }
  // No batch sweep (each series a single case): cards, not charts of lone dots.
  if (rows.size() == sr.order.size()) {
    s["title"] = rows.size() == 1 ? "The case" : "The cases (no batch sweep: one card per case)";
    s["cards"] = case_cards(rows, !c.flags_in_summary);
    sections.push_back(std::move(s));
    return;
  }
  sr.batch_x = batch_axis(rows);
  band_chart(c, s, sr, "ttft", "TTFT", "ttft_ms");
  band_chart(c, s, sr, "tpot", "TPOT", "tpot_ms");
  throughput_chart(c, s, sr, "throughput_latency");
  utilisation_chart(c, s, sr);
  energy_chart(s, sr);
  sections.push_back(std::move(s));
}

void engine_compare_curves(Ctx& base, Ctx& cand, json& s) {
  std::vector<CaseRow> rows;
  for (auto [ctx, prefix] : {std::pair<Ctx*, const char*>{&base, "base: "}, {&cand, "cand: "}})
    for (CaseRow& r : read_case_rows(*ctx)) {
      r.label = prefix + r.label;
      rows.push_back(std::move(r));
    }
  if (rows.empty()) return;
  Series sr{rows, {}, batch_axis(rows)};
  for (const auto& r : rows)
    if (std::find(sr.order.begin(), sr.order.end(), r.label) == sr.order.end())
      sr.order.push_back(r.label);
  band_chart(base, s, sr, "compare_ttft", "TTFT", "ttft_ms");
  band_chart(base, s, sr, "compare_tpot", "TPOT", "tpot_ms");
  throughput_chart(base, s, sr, "compare_throughput_latency");
}

}  // namespace llmbench::report
