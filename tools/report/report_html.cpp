// See report_html.h. The drawing is Chart.js's; the script here only turns each chart's JSON
// (a Chart.js config plus a few style hints: series, band, dash, verdict, and on an axis
// tickValues / tickLabels: exactly those ticks, e.g. batch 1, 4, 16 on a log2 axis) into a Chart
// and a table, draws each summary card (a single case: its numbers, not lone dots), and records
// what rendered in the status element the browser test reads.
#include "tools/report/report_html.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "kernels/common/error.h"

namespace llmbench {

namespace {

// Text inside <script> must not contain "</" (it could close the element).
std::string script_safe(const std::string& s) {
  std::string out;
  out.reserve(s.size() + 16);
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<' && i + 1 < s.size() && s[i + 1] == '/') {
      out += "<\\/";
      ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += ch;
    }
  }
  return out;
}

constexpr const char* kStyle = R"css(
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:1150px;color:#222}
h1{font-size:1.5em}h2{border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:2em}
h3{font-size:1.05em;margin:1.5em 0 .4em}
.chart{position:relative;height:420px}
.card{display:grid;grid-template-columns:repeat(auto-fill,minmax(170px,1fr));gap:10px;margin:8px 0 18px}
.card div{border:1px solid #ddd;border-radius:6px;padding:8px 10px;background:#fafafa}
.card b{display:block;font-size:1.6em;font-weight:600;margin:2px 0}.card span{color:#666;font-size:12px}
.card div.flag{border-color:#d62728;background:#fff4f4}
table{border-collapse:collapse;font-size:12px;margin:6px 0}
td,th{border:1px solid #ddd;padding:2px 6px;text-align:right}th{background:#f3f3f3}
td:first-child,th:first-child{text-align:left}
.facts td{text-align:left}.note{color:#555}.warn{color:#a00;font-weight:600}
details{margin:4px 0 16px}summary{cursor:pointer;color:#246}
#report-status{color:#888;font-size:11px}
)css";

constexpr const char* kScript = R"js(
(function () {
  'use strict';
  const errors = [];
  window.addEventListener('error', e => errors.push(String(e.message)));
  const origError = console.error;
  console.error = function () { errors.push(Array.from(arguments).join(' ')); origError.apply(console, arguments); };
  const data = JSON.parse(document.getElementById('report-data').textContent);
  const palette = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2',
                   '#7f7f7f', '#bcbd22', '#17becf'];
  const verdictColor = {'faster': '#2ca02c', 'slower': '#d62728', 'same': '#7f7f7f',
                        'too few samples': '#bcbd22', 'n/a': '#cccccc'};
  const root = document.getElementById('report');
  function add(parent, tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    parent.appendChild(e);
    return e;
  }
  function table(parent, columns, rows, cls) {
    const t = add(parent, 'table', null, cls);
    const hr = add(t, 'tr');
    columns.forEach(c => add(hr, 'th', c));
    rows.forEach(r => { const tr = add(t, 'tr'); r.forEach(v => add(tr, 'td', v === null ? '' : v)); });
    return t;
  }
  // Ticks exactly at tickValues (labelled by tickLabels, else the value): a batch axis on a
  // log2 scale shows 1, 2, 4, 16, never 1.5 or 2.5.
  function fixTicks(scale) {
    if (!scale || !scale.tickValues) return;
    const values = scale.tickValues, labels = scale.tickLabels;
    scale.afterBuildTicks = ax => { ax.ticks = values.map(v => ({value: v})); };
    scale.ticks = Object.assign({}, scale.ticks, {autoSkip: false,
      callback: v => { const i = values.indexOf(v); return labels && i >= 0 ? labels[i] : String(v); }});
  }
  let charts = 0, series = 0, blank = 0, cards = 0;
  add(root, 'h1', data.title);
  for (const s of data.sections) {
    add(root, 'h2', s.title);
    if (s.note) add(root, 'p', s.note, 'note');
    (s.warnings || []).forEach(w => add(root, 'p', 'warning: ' + w, 'warn'));
    (s.info || []).forEach(w => add(root, 'p', 'info: ' + w, 'note'));
    if (s.facts) {
      for (const run of s.facts) {
        table(root, [run.caption || ('run ' + run.id), ''],
              Object.entries(run).filter(kv => kv[0] !== 'id' && kv[0] !== 'caption'), 'facts');
      }
    }
    if (s.cases) add(root, 'p', s.cases.cases + ' cases, ' + s.cases.ok + ' ok, ' + s.cases.traced + ' traced', 'note');
    for (const card of (s.cards || [])) {
      add(root, 'h3', card.title);
      const grid = add(root, 'div', null, 'card');
      for (const it of card.items) {
        const cell = add(grid, 'div', null, it.flag ? 'flag' : null);
        add(cell, 'span', it.label);
        add(cell, 'b', it.value === null ? 'n/a' : it.value);
        if (it.note) add(cell, 'span', it.note);
      }
      cards++;
    }
    for (const c of (s.charts || [])) {
      add(root, 'h3', c.title);
      const box = add(root, 'div', null, 'chart');
      const cfg = c.config;
      if (c.id === 'timeline') box.style.height = Math.max(240, 28 * cfg.data.labels.length + 110) + 'px';
      if (c.height) box.style.height = c.height + 'px';
      const canvas = add(box, 'canvas');
      canvas.id = 'chart-' + c.id;
      const colourOf = {};
      let next = 0;
      for (const ds of cfg.data.datasets) {
        const key = ds.series || ds.label;
        if (!(key in colourOf)) colourOf[key] = palette[next++ % palette.length];
        const col = ds.color ? ds.color : ds.verdict ? verdictColor[ds.verdict] || '#999' :
                    ds.roof ? '#000000' : colourOf[key];
        ds.borderColor = col;
        ds.backgroundColor = cfg.type === 'bar' && !ds.type ? col + 'bb' : col;
        if (ds.dash) ds.borderDash = [6, 4];
        if (ds.band) {
          ds.borderWidth = 0; ds.pointRadius = 0;
          ds.fill = ds.band === 'hi' ? '-1' : false;
          ds.backgroundColor = col + '33';
        }
      }
      Object.values(cfg.options.scales || {}).forEach(fixTicks);
      cfg.options.animation = false;
      cfg.options.responsive = true;
      cfg.options.maintainAspectRatio = false;
      cfg.options.plugins = {
        title: {display: true, text: c.title},
        legend: {labels: {filter: (item, d) => !d.datasets[item.datasetIndex].band}},
        tooltip: {callbacks: {afterLabel: ctx => (ctx.raw && ctx.raw.name) ? ctx.raw.name : ''}}
      };
      // Small charts stacked under a timeline: the heading above says what they are, and a
      // fixed y-axis width lines their time axes up with the timeline's.
      if (c.compact) {
        cfg.options.plugins.title.display = false;
        if (cfg.data.datasets.length < 2) cfg.options.plugins.legend.display = false;
      }
      if (c.yWidth) cfg.options.scales.y.afterFit = ax => { ax.width = c.yWidth; };
      try {
        new Chart(canvas, cfg);
        charts++;
        series += cfg.data.datasets.length;
        const ctx = canvas.getContext('2d');
        const px = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
        let inked = 0;
        for (let i = 3; i < px.length; i += 4) if (px[i] !== 0) { inked++; if (inked > 100) break; }
        if (inked <= 100) blank++;
      } catch (e) {
        errors.push('chart ' + c.id + ': ' + e);
      }
      const det = add(root, 'details');
      add(det, 'summary', 'Table: the numbers of this chart');
      table(det, c.table.columns, c.table.rows);
    }
  }
  if (data.omitted && data.omitted.length) {
    add(root, 'h2', 'Not shown');
    const ul = add(root, 'ul');
    data.omitted.forEach(n => add(ul, 'li', n, 'note'));
  }
  const st = document.getElementById('report-status');
  const resources = performance.getEntriesByType('resource').length;
  st.textContent = 'charts=' + charts + ' series=' + series + ' blank=' + blank + ' cards=' +
                   cards + ' errors=' + errors.length + ' resources=' + resources +
                   (errors.length ? ' ' + errors.join(' | ') : '');
  st.setAttribute('data-done', '1');
})();
)js";

}  // namespace

std::string load_chartjs(const std::string& path) {
  std::string p = path;
  if (p.empty()) {
    const char* env = std::getenv("LLMBENCH_CHARTJS");
    p = env && *env ? env : kChartJsPath;
  }
  std::ifstream in(p, std::ios::binary);
  if (!in)
    throw BadInput("report: Chart.js not found at " + p +
                   " (install Debian's libjs-chart.js: apt-get install libjs-chart.js, or set "
                   "LLMBENCH_CHARTJS to a chart.min.js of Chart.js 3)");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string render_report_html(const nlohmann::ordered_json& data, const std::string& chartjs) {
  std::string out;
  out += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  out += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
         "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n";
  out += "<title>" + html_escape(data.value("title", std::string("llmbench report"))) +
         "</title>\n<style>" + std::string(kStyle) + "</style>\n";
  out += "<script>" + script_safe(chartjs) + "</script>\n</head><body>\n";
  out += "<div id=\"report\"></div>\n<pre id=\"report-status\">not rendered (JavaScript off?)</pre>\n";
  out += "<script type=\"application/json\" id=\"report-data\">" + script_safe(data.dump()) +
         "</script>\n";
  out += "<script>" + std::string(kScript) + "</script>\n</body></html>\n";
  return out;
}

}  // namespace llmbench
