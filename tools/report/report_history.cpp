// The history page (see report_history.h).
#include "tools/report/report_history.h"

#include <cmath>
#include <filesystem>
#include <map>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "tools/history/history_output.h"
#include "tools/store/schema.h"

namespace llmbench {

namespace {

// Four significant digits: what a chart can show, and a quarter of the bytes of a full double.
nlohmann::json num(double v) {
  if (!std::isfinite(v)) return nullptr;
  return std::stod(fmt::format("{:.4g}", v));
}

// The drawer: one canvas per series; x = point index, y linear or log; band, line, verdict
// markers, change-point rules with their labels. Writes "charts=N points=P drawn=D ms=T" into
// #report-status and sets data-done, as the run report's page does for the browser test.
constexpr const char* kScript = R"js(
(function () {
  const t0 = performance.now();
  const D = JSON.parse(document.getElementById('history-data').textContent);
  const root = document.getElementById('charts');
  const colors = {slower: '#c0392b', faster: '#27ae60', same: '#7f8c8d'};
  let drawn = 0, points = 0;
  for (const s of D.series) {
    const box = document.createElement('div');
    box.className = 'series';
    const h = document.createElement('h3');
    h.textContent = s.name + (s.machine ? '  @ ' + s.machine : '');
    box.appendChild(h);
    const c = document.createElement('canvas');
    c.width = 960; c.height = 220;
    box.appendChild(c);
    root.appendChild(box);
    const v = s.value, n = v.length;
    points += n;
    if (n === 0) continue;
    let lo = Infinity, hi = -Infinity;
    for (let i = 0; i < n; ++i) {
      const a = s.low[i] !== null ? s.low[i] : v[i], b = s.high[i] !== null ? s.high[i] : v[i];
      lo = Math.min(lo, a, v[i]); hi = Math.max(hi, b, v[i]);
    }
    const log = lo > 0 && hi / lo > 10;
    c.dataset.log = log ? '1' : '0';
    const f = log ? Math.log10 : (x) => x;
    let ylo = f(lo), yhi = f(hi);
    if (yhi === ylo) { yhi += 1; ylo -= 1; }
    const pad = (yhi - ylo) * 0.08; ylo -= pad; yhi += pad;
    const L = 70, R = 20, T = 10, B = 40, W = c.width - L - R, H = c.height - T - B;
    const X = (i) => L + (n === 1 ? W / 2 : W * i / (n - 1));
    const Y = (y) => T + H * (1 - (f(y) - ylo) / (yhi - ylo));
    const g = c.getContext('2d');
    g.font = '11px sans-serif';
    g.strokeStyle = '#ccc'; g.strokeRect(L, T, W, H);
    g.fillStyle = '#333';
    for (let k = 0; k <= 4; ++k) {
      const y = ylo + (yhi - ylo) * k / 4, val = log ? Math.pow(10, y) : y;
      g.fillText(val.toPrecision(3), 4, T + H * (1 - k / 4) + 4);
    }
    const ticks = Math.min(n, 6);
    for (let k = 0; k < ticks; ++k) {
      const i = ticks === 1 ? 0 : Math.round((n - 1) * k / (ticks - 1));
      g.fillText(D.commits[s.commit[i]], Math.min(X(i) - 20, c.width - 60), c.height - 22);
    }
    g.fillText(s.unit_note, L, c.height - 6);
    // The band: each point's interval.
    g.fillStyle = 'rgba(52, 152, 219, 0.18)';
    g.beginPath();
    let open = false;
    for (let i = 0; i < n; ++i) {
      if (s.low[i] === null) continue;
      if (!open) { g.moveTo(X(i), Y(s.high[i])); open = true; } else g.lineTo(X(i), Y(s.high[i]));
    }
    for (let i = n - 1; i >= 0; --i) if (s.low[i] !== null) g.lineTo(X(i), Y(s.low[i]));
    if (open) g.fill();
    g.strokeStyle = '#2c7fb8'; g.lineWidth = 1.2;
    g.beginPath();
    for (let i = 0; i < n; ++i) (i ? g.lineTo(X(i), Y(v[i])) : g.moveTo(X(i), Y(v[i])));
    g.stroke();
    for (const [i, verdict] of s.verdicts) {
      g.fillStyle = colors[verdict] || '#8e44ad';
      g.beginPath(); g.arc(X(i), Y(v[i]), 3.5, 0, 2 * Math.PI); g.fill();
    }
    for (const cp of s.change_points) {
      const x = (X(cp.index - 1) + X(cp.index)) / 2;
      g.strokeStyle = cp.regression ? '#c0392b' : '#27ae60';
      g.setLineDash([4, 3]); g.beginPath(); g.moveTo(x, T); g.lineTo(x, T + H); g.stroke();
      g.setLineDash([]);
      g.fillStyle = g.strokeStyle;
      g.fillText(cp.label, Math.min(x + 3, c.width - 120), T + 12);
    }
    c.dataset.changePoints = String(s.change_points.length);
    c.dataset.points = String(n);
    ++drawn;
  }
  const ms = performance.now() - t0;
  const st = document.getElementById('report-status');
  st.textContent = 'charts=' + D.series.length + ' points=' + points + ' drawn=' + drawn +
                   ' ms=' + ms.toFixed(1);
  st.dataset.done = '1';
})();
)js";

std::string escape_html(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace

bool is_history_database(const std::string& path) {
  // Anything else (a missing file, not SQLite) is left to the run report, which says what is wrong.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  try {
    auto db = open_read_only(path);
    if (!db->prepare("SELECT 1 FROM sqlite_schema WHERE name = 'history_point'").step()) return false;
    return db->prepare("SELECT 1 FROM history_point LIMIT 1").step();
  } catch (const std::exception&) {
    return false;
  }
}

std::string render_history_html(const std::string& path, const CheckOptions& o) {
  auto db = open_read_only(path);
  add_schema_stand_ins(*db);
  const std::vector<HistorySeries> all = read_history(*db);
  nlohmann::json data;
  std::vector<std::string> commits;
  std::map<std::string, int> commit_index;
  data["series"] = nlohmann::json::array();
  int n_cps = 0;
  for (const HistorySeries& s : all) {
    nlohmann::json j;
    j["name"] = s.key.name();
    j["machine"] = s.key.machine();
    nlohmann::json value = nlohmann::json::array(), low = nlohmann::json::array(),
                   high = nlohmann::json::array(), commit = nlohmann::json::array(),
                   verdicts = nlohmann::json::array();
    for (std::size_t i = 0; i < s.points.size(); ++i) {
      const HistoryPoint& p = s.points[i];
      value.push_back(num(p.value));
      std::optional<double> lo = p.ci_low, hi = p.ci_high;
      if ((!lo || !hi) && p.noise_pct) {
        lo = p.value * (1 - *p.noise_pct / 100);
        hi = p.value * (1 + *p.noise_pct / 100);
      }
      low.push_back(lo && hi ? num(*lo) : nlohmann::json(nullptr));
      high.push_back(lo && hi ? num(*hi) : nlohmann::json(nullptr));
      auto [it, fresh] = commit_index.emplace(p.commit, int(commits.size()));
      if (fresh) commits.push_back(short_commit(p.commit));
      commit.push_back(it->second);
      if (p.verdict) verdicts.push_back({int(i), *p.verdict});
    }
    nlohmann::json cps = nlohmann::json::array();
    for (const ChangePointReport& c : check_series(s, o)) {
      cps.push_back({{"index", c.index}, {"regression", c.regression},
                     {"label", fmt::format("{} x{:.3f}", short_commit(c.commit), c.ratio)}});
      ++n_cps;
    }
    j["value"] = value;
    j["low"] = low;
    j["high"] = high;
    j["commit"] = commit;
    j["verdicts"] = verdicts;
    j["change_points"] = cps;
    j["unit_note"] = s.key.higher_is_better.value_or(o.higher_is_better) ? "higher is better"
                                                                          : "lower is better";
    data["series"].push_back(std::move(j));
  }
  data["commits"] = commits;
  std::string json = data.dump();
  // Inside <script type="application/json">, "</" must not close the element.
  for (std::size_t i = json.find("</"); i != std::string::npos; i = json.find("</", i + 3))
    json.replace(i, 2, "<\\/");
  return fmt::format(
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>llmbench history: {}</title>\n"
      "<style>body{{font-family:sans-serif;margin:20px;color:#222}}h1{{font-size:20px}}"
      "h3{{font-size:13px;margin:14px 0 4px}}.note{{color:#555;font-size:12px}}</style></head>\n"
      "<body><h1>History: {}</h1>\n<p class=\"note\">{} series; {} change point(s) by E-divisive "
      "means (permutation p &lt;= {:g}, {} permutations, segments of &gt;= {} points), dashed at "
      "their first commit (red: regression, green: improvement) with the commit and the ratio "
      "after / before. Band: each point's interval (a gate's A/A noise floor where it has none). "
      "Dots: gate verdicts (red slower, green faster, grey same). A y axis spanning more than 10x "
      "is logarithmic.</p>\n<div id=\"charts\"></div>\n<pre id=\"report-status\" hidden></pre>\n"
      "<script type=\"application/json\" id=\"history-data\">{}</script>\n<script>{}</script>\n"
      "</body></html>\n",
      escape_html(path), escape_html(path), all.size(), n_cps, o.detector.max_p,
      o.detector.permutations, o.detector.min_size, json, kScript);
}

}  // namespace llmbench
