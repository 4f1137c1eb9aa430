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
#report-status{display:none}
table.summary{font-size:13px}table.summary td:first-child{white-space:nowrap}table.summary td:last-child{text-align:left}table.summary tr.flag td{background:#fff4f4;color:#a00}
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
  // By the verdict's first word: "slower beyond threshold" is a slower one, "same or unknown"
  // a same one, "too few samples" its own.
  const verdictColor = {'faster': '#2ca02c', 'slower': '#d62728', 'same': '#7f7f7f',
                        'too': '#bcbd22', 'n/a': '#cccccc'};
  const warnColor = '#d62728';
  const root = document.getElementById('report');
  function add(parent, tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    parent.appendChild(e);
    return e;
  }
  function table(parent, columns, rows, cls, flagged) {
    const t = add(parent, 'table', null, cls);
    const hr = add(t, 'tr');
    columns.forEach(c => add(hr, 'th', c));
    rows.forEach((r, i) => {
      const tr = add(t, 'tr', null, flagged && flagged.indexOf(i) >= 0 ? 'flag' : null);
      r.forEach(v => add(tr, 'td', v === null ? '' : v));
    });
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
  function fontOf(scale) {
    try { return Chart.helpers.toFont(scale.options.ticks.font); }
    catch (e) { return {string: '12px sans-serif', lineHeight: 14.4}; }
  }
  // Black or white text, whichever reads on `hex` drawn with opacity `alpha` over white.
  function inkOn(hex, alpha) {
    const n = parseInt(hex.slice(1, 7), 16), a = alpha === undefined ? 1 : alpha;
    const lum = 0.299 * (n >> 16) + 0.587 * ((n >> 8) & 255) + 0.114 * (n & 255);
    return lum * a + 255 * (1 - a) > 150 ? '#111' : '#fff';
  }
  // A timeline bar's fill: alternate decoder layers alternate between two shades of the
  // category's colour, so where one layer ends and the next begins reads off the bars.
  function layerAlpha(p) { return p && typeof p.layer === 'number' && p.layer % 2 ? 0.45 : 0.8; }
  function overlaps(a, b) {
    return a.l < b.r && b.l < a.r && a.t < b.b && b.t < a.b;
  }

  // ---- drawing aids, each a Chart.js plugin switched on by a field of the chart's JSON ----
  // band {axis, lo, hi}: the threshold band, shaded across the whole plot.
  const bandPlugin = {id: 'llmbenchBand', beforeDatasetsDraw(chart, args, o) {
    const b = chart.canvas.$llmbench.band;
    if (!b) return;
    const sc = chart.scales[b.axis], a = chart.chartArea, ctx = chart.ctx;
    const p0 = sc.getPixelForValue(b.lo), p1 = sc.getPixelForValue(b.hi);
    ctx.save();
    ctx.fillStyle = 'rgba(120,120,120,0.18)';
    if (b.axis === 'x') ctx.fillRect(Math.min(p0, p1), a.top, Math.abs(p1 - p0), a.bottom - a.top);
    else ctx.fillRect(a.left, Math.min(p0, p1), a.right - a.left, Math.abs(p1 - p0));
    ctx.restore();
  }};
  // layers [{from, to, label}]: alternate shading behind each decoder layer's time span.
  const layerPlugin = {id: 'llmbenchLayers', beforeDatasetsDraw(chart) {
    const layers = chart.canvas.$llmbench.layers;
    if (!layers) return;
    const sc = chart.scales.x, a = chart.chartArea, ctx = chart.ctx;
    let drawn = 0;
    ctx.save();
    ctx.font = '10px sans-serif';
    ctx.textBaseline = 'top';
    layers.forEach((l, i) => {
      const x0 = Math.max(a.left, sc.getPixelForValue(l.from));
      const x1 = Math.min(a.right, sc.getPixelForValue(l.to));
      if (x1 <= x0) return;
      ctx.fillStyle = i % 2 ? 'rgba(31,119,180,0.07)' : 'rgba(255,127,14,0.07)';
      ctx.fillRect(x0, a.top, x1 - x0, a.bottom - a.top);
      ctx.fillStyle = '#555';
      if (ctx.measureText(l.label).width + 4 < x1 - x0) ctx.fillText(l.label, x0 + 2, a.top + 2);
      drawn++;
    });
    ctx.restore();
    chart.canvas.$llmbench.drawn.layers = drawn;
  }};
  // names: each bar's name (raw.label, else raw.name) drawn inside it where it fits, cut short
  // with an ellipsis where only its first letters do.
  const barNamePlugin = {id: 'llmbenchBarNames', afterDatasetsDraw(chart) {
    if (!chart.canvas.$llmbench.names) return;
    const ctx = chart.ctx, a = chart.chartArea;
    let drawn = 0;
    ctx.save();
    ctx.font = '11px sans-serif';
    ctx.textBaseline = 'middle';
    chart.data.datasets.forEach((ds, i) => {
      const meta = chart.getDatasetMeta(i);
      if (meta.hidden) return;
      meta.data.forEach((el, j) => {
        const raw = ds.data[j];
        if (!raw || !raw.name) return;
        const p = el.getProps(['x', 'y', 'base', 'height'], true);
        const l = Math.max(a.left, Math.min(p.x, p.base)), r = Math.min(a.right, Math.max(p.x, p.base));
        let text = raw.label || raw.name;
        if (p.height < 10) return;
        if (ctx.measureText(text).width + 6 > r - l) {
          let k = text.length - 1;
          while (k >= 3 && ctx.measureText(text.slice(0, k) + '\u2026').width + 6 > r - l) k--;
          if (k < 3) return;
          text = text.slice(0, k) + '\u2026';
        }
        ctx.fillStyle = inkOn(ds.borderColor, layerAlpha(raw));
        ctx.fillText(text, l + 3, p.y);
        drawn++;
      });
    });
    ctx.restore();
    chart.canvas.$llmbench.drawn.labels = drawn;
  }};
  // pointLabels: each point's name beside it, where it overlaps no other label; roofLabel:
  // a text on the roof line.
  const pointLabelPlugin = {id: 'llmbenchPointLabels', afterDatasetsDraw(chart) {
    if (!chart.canvas.$llmbench.pointLabels) return;
    const ctx = chart.ctx, a = chart.chartArea, boxes = [];
    let drawn = 0, skipped = 0;
    ctx.save();
    ctx.font = '11px sans-serif';
    ctx.textBaseline = 'middle';
    const points = [];
    chart.data.datasets.forEach((ds, i) => {
      const meta = chart.getDatasetMeta(i);
      if (meta.hidden || ds.roof) return;
      meta.data.forEach((el, j) => {
        const raw = ds.data[j];
        if (raw && raw.name) points.push({x: el.x, y: el.y, name: raw.name, warn: !!ds.warn});
        boxes.push({l: el.x - 4, r: el.x + 4, t: el.y - 4, b: el.y + 4});
      });
    });
    points.sort((p, q) => (q.warn - p.warn) || (p.x - q.x));
    for (const p of points) {
      const w = ctx.measureText(p.name).width, h = 12;
      const spots = [[p.x + 6, p.y], [p.x - 6 - w, p.y], [p.x - w / 2, p.y - 11], [p.x - w / 2, p.y + 11]];
      let placed = false;
      for (const [x, y] of spots) {
        const box = {l: x, r: x + w, t: y - h / 2, b: y + h / 2};
        if (box.l < a.left || box.r > a.right || box.t < a.top || box.b > a.bottom) continue;
        if (boxes.some(o => overlaps(o, box))) continue;
        ctx.fillStyle = p.warn ? warnColor : '#333';
        ctx.fillText(p.name, x, y);
        boxes.push(box);
        placed = true;
        break;
      }
      if (placed) drawn++; else skipped++;
    }
    const roof = chart.canvas.$llmbench.roofLabel;
    if (roof) {
      // On the flat roof, above it (below it where the plot's top is too close).
      const y = chart.scales.y.getPixelForValue(roof.y);
      ctx.fillStyle = '#000';
      ctx.textBaseline = y - 16 < a.top ? 'top' : 'bottom';
      const w = ctx.measureText(roof.text).width;
      ctx.fillText(roof.text, a.right - w - 4, y - 16 < a.top ? y + 3 : y - 2);
    }
    ctx.restore();
    chart.canvas.$llmbench.drawn.labels = drawn;
    chart.canvas.$llmbench.drawn.unlabelled = skipped;
  }};

  // ---- what the browser test reads: elements outside the plot, tick labels that overlap ----
  function clippedElements(chart) {
    const a = chart.chartArea;
    let n = 0;
    chart.data.datasets.forEach((ds, i) => {
      const meta = chart.getDatasetMeta(i);
      if (meta.hidden) return;
      meta.data.forEach(el => {
        const p = el.getProps(['x', 'y', 'base'], true);
        const along = [p.x], across = [p.y];
        if (meta.type === 'bar' && typeof p.base === 'number') {
          if (chart.options.indexAxis === 'y') along.push(p.base); else across.push(p.base);
        }
        if (along.concat(across).some(v => typeof v !== 'number' || !isFinite(v))) return;
        if (along.some(v => v < a.left - 1 || v > a.right + 1) ||
            across.some(v => v < a.top - 1 || v > a.bottom + 1)) n++;
      });
    });
    return n;
  }
  function tickOverlaps(chart) {
    let n = 0;
    const ctx = chart.ctx;
    for (const sc of Object.values(chart.scales)) {
      if (!sc.options.display || !sc.options.ticks || !sc.options.ticks.display) continue;
      const font = fontOf(sc);
      ctx.save();
      ctx.font = font.string;
      const rot = (sc.labelRotation || 0) * Math.PI / 180;
      const items = [];
      sc.ticks.forEach((t, i) => {
        const lines = Array.isArray(t.label) ? t.label : [t.label];
        if (lines.every(l => l === '' || l === undefined || l === null)) return;
        const w = Math.max.apply(null, lines.map(l => ctx.measureText(String(l)).width));
        const h = font.lineHeight * lines.length;
        const ext = !sc.isHorizontal() ? h : rot > 0.01 ? h / Math.sin(rot) : w;
        items.push({p: sc.getPixelForTick(i), ext: ext});
      });
      ctx.restore();
      items.sort((u, v) => u.p - v.p);
      for (let i = 1; i < items.length; i++)
        if (items[i].p - items[i - 1].p < (items[i].ext + items[i - 1].ext) / 2 - 0.5) n++;
    }
    return n;
  }

  let charts = 0, series = 0, blank = 0, cards = 0, overlapping = 0, clipped = 0;
  add(root, 'h1', data.title);
  if (data.summary) {
    const sm = data.summary;
    add(root, 'h2', sm.title);
    if (sm.note) add(root, 'p', sm.note, 'note');
    (sm.warnings || []).forEach(w => add(root, 'p', 'warning: ' + w, 'warn'));
    table(root, sm.columns, sm.rows, 'summary', sm.flagged).id = 'summary-table';
  }
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
    if (s.cases) add(root, 'p', s.cases.cases + (s.cases.cases === 1 ? ' case, ' : ' cases, ') +
                                s.cases.ok + ' ok, ' + s.cases.traced + ' traced', 'note');
    for (const card of (s.cards || [])) {
      add(root, 'h3', card.title);
      const grid = add(root, 'div', null, 'card');
      for (const it of card.items) {
        const cell = add(grid, 'div', null, it.flag ? 'flag' : null);
        add(cell, 'span', it.label);
        add(cell, 'b', it.value === null ? 'n/a' : it.value);
        if (it.note) add(cell, 'span', it.note);
      }
      if (card.advice) add(root, 'p', card.advice, 'warn');
      cards++;
    }
    for (const c of (s.charts || [])) {
      // The heading is the chart's one title; the canvas draws none of its own.
      add(root, 'h3', c.title);
      if (c.note) add(root, 'p', c.note, c.warn ? 'warn' : 'note');
      const box = add(root, 'div', null, 'chart');
      const cfg = c.config;
      if (c.height) box.style.height = c.height + 'px';
      const canvas = add(box, 'canvas');
      canvas.id = 'chart-' + c.id;
      const colourOf = {};
      let next = 0;
      for (const ds of cfg.data.datasets) {
        const key = ds.series || ds.label;
        if (!(key in colourOf) && !ds.warn && !ds.color) colourOf[key] = palette[next++ % palette.length];
        const col = ds.warn ? warnColor : ds.color ? ds.color :
                    ds.verdict ? verdictColor[ds.verdict.split(' ')[0]] || '#999999' :
                    ds.roof ? '#000000' : colourOf[key];
        // An alpha suffix needs six hex digits: anything else would draw black, unnoticed.
        if (!/^#[0-9a-f]{6}$/i.test(col)) errors.push('chart ' + c.id + ': colour ' + col + ' of ' + ds.label);
        ds.borderColor = col;
        ds.backgroundColor = cfg.type === 'bar' && !ds.type ? col + 'bb' : col;
        if (c.layers && cfg.type === 'bar')
          ds.backgroundColor = ds.data.map(p => col + Math.round(255 * layerAlpha(p)).toString(16).padStart(2, '0'));
        if (ds.dash) ds.borderDash = [6, 4];
        if (ds.warn && cfg.type !== 'bar') { ds.pointStyle = 'triangle'; ds.pointRadius = 7; }
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
        title: {display: false},
        legend: {labels: {filter: (item, d) => !d.datasets[item.datasetIndex].band}},
        tooltip: {callbacks: {afterLabel: ctx => (ctx.raw && ctx.raw.name) ? ctx.raw.name : ''}}
      };
      if (c.compact && cfg.data.datasets.length < 2) cfg.options.plugins.legend.display = false;
      // Small charts stacked under a timeline: a fixed y-axis width lines their time axes up.
      if (c.yWidth) cfg.options.scales.y.afterFit = ax => { ax.width = c.yWidth; };
      cfg.plugins = [bandPlugin, layerPlugin, barNamePlugin, pointLabelPlugin];
      try {
        canvas.$llmbench = {band: c.band, layers: c.layers, names: c.names,
                            pointLabels: c.pointLabels, roofLabel: c.roofLabel, drawn: {}};
        const chart = new Chart(canvas, cfg);
        charts++;
        series += cfg.data.datasets.length;
        const ctx = canvas.getContext('2d');
        const px = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
        let inked = 0;
        for (let i = 3; i < px.length; i += 4) if (px[i] !== 0) { inked++; if (inked > 100) break; }
        if (inked <= 100) blank++;
        const o = tickOverlaps(chart), k = clippedElements(chart);
        overlapping += o;
        clipped += k;
        canvas.setAttribute('data-overlaps', o);
        canvas.setAttribute('data-clipped', k);
        for (const [key, v] of Object.entries(chart.canvas.$llmbench.drawn)) canvas.setAttribute('data-' + key, v);
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
  // For the browser test: never shown (display: none), read from the DOM.
  const st = document.getElementById('report-status');
  const resources = performance.getEntriesByType('resource').length;
  st.textContent = 'charts=' + charts + ' series=' + series + ' blank=' + blank + ' cards=' +
                   cards + ' errors=' + errors.length + ' resources=' + resources +
                   ' overlaps=' + overlapping + ' clipped=' + clipped +
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
