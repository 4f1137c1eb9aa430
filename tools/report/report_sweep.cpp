// The sweep section: TTFT and TPOT bands, throughput against latency, MBU and MFU, each
// against batch, one series per configuration apart from batch.
#include "tools/report/report_section.h"

#include <map>
#include <vector>

namespace llmbench::report {

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

}  // namespace llmbench::report
