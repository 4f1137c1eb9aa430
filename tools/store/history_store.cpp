// History tables: append and read (see history_store.h).
#include "tools/store/history_store.h"

#include "tools/store/run_info.h"

namespace llmbench {

std::string SeriesKey::name() const {
  std::string s = suite.empty() ? case_label : suite + " / " + case_label;
  return metric.empty() ? s : s + " / " + metric;
}

std::string SeriesKey::machine() const {
  if (cpu.empty() && cpu_isa.empty() && threads == 0 && gpu.empty()) return "";  // CSV
  std::string m = cpu.empty() ? std::string("unknown CPU") : cpu;
  if (!cpu_isa.empty()) m += " (" + cpu_isa + ")";
  if (threads > 0) m += ", " + std::to_string(threads) + " threads";
  if (!gpu.empty()) m += ", " + gpu + (driver.empty() ? "" : " driver " + driver);
  return m;
}

namespace {

std::int64_t series_id(Db& db, const SeriesKey& k) {
  auto find = db.prepare("SELECT id FROM history_series WHERE suite = ? AND case_label = ? AND"
                         " metric = ? AND cpu = ? AND cpu_isa = ? AND threads = ? AND gpu = ? AND"
                         " driver = ?");
  find.bind(1, k.suite).bind(2, k.case_label).bind(3, k.metric).bind(4, k.cpu).bind(5, k.cpu_isa)
      .bind(6, k.threads).bind(7, k.gpu).bind(8, k.driver);
  if (find.step()) return find.column_int(0);
  auto ins = db.prepare("INSERT INTO history_series (suite, case_label, metric, cpu, cpu_isa,"
                        " threads, gpu, driver, higher_is_better) VALUES (?,?,?,?,?,?,?,?,?)");
  ins.bind(1, k.suite).bind(2, k.case_label).bind(3, k.metric).bind(4, k.cpu).bind(5, k.cpu_isa)
      .bind(6, k.threads).bind(7, k.gpu).bind(8, k.driver);
  if (k.higher_is_better) ins.bind(9, int(*k.higher_is_better)); else ins.bind_null(9);
  ins.run();
  return db.last_insert_id();
}

}  // namespace

int append_history(Db& db, const std::vector<std::pair<SeriesKey, HistoryPoint>>& points) {
  int added = 0;
  const std::string now = utc_now_iso8601();
  transaction(db, [&] {
    auto ins = db.prepare("INSERT OR IGNORE INTO history_point (series_id, commit_sha, branch, time,"
                          " value, ci_low, ci_high, noise_pct, verdict, source, source_ref,"
                          " added_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)");
    for (const auto& [key, p] : points) {
      ins.reset();
      ins.bind(1, series_id(db, key)).bind(2, p.commit).bind(3, p.branch).bind(4, p.time)
          .bind(5, p.value).bind(6, p.ci_low).bind(7, p.ci_high).bind(8, p.noise_pct);
      if (p.verdict) ins.bind(9, *p.verdict); else ins.bind_null(9);
      ins.bind(10, p.source).bind(11, p.source_ref).bind(12, now);
      ins.run();
      added += int(sqlite3_changes(db.handle()));
    }
  });
  return added;
}

std::vector<HistorySeries> read_history(Db& db) {
  std::vector<HistorySeries> out;
  auto s = db.prepare("SELECT id, suite, case_label, metric, cpu, cpu_isa, threads, gpu, driver,"
                      " higher_is_better FROM history_series ORDER BY id");
  while (s.step()) {
    HistorySeries h;
    h.id = s.column_int(0);
    h.key.suite = s.column_text(1);
    h.key.case_label = s.column_text(2);
    h.key.metric = s.column_text(3);
    h.key.cpu = s.column_text(4);
    h.key.cpu_isa = s.column_text(5);
    h.key.threads = int(s.column_int(6));
    h.key.gpu = s.column_text(7);
    h.key.driver = s.column_text(8);
    if (!s.column_is_null(9)) h.key.higher_is_better = s.column_int(9) != 0;
    out.push_back(std::move(h));
  }
  auto p = db.prepare("SELECT commit_sha, branch, time, value, ci_low, ci_high, noise_pct, verdict,"
                      " source, source_ref FROM history_point WHERE series_id = ?"
                      " ORDER BY time, id");
  for (HistorySeries& h : out) {
    p.reset();
    p.bind(1, h.id);
    while (p.step()) {
      HistoryPoint x;
      x.commit = p.column_text(0);
      x.branch = p.column_text(1);
      x.time = p.column_text(2);
      x.value = p.column_double(3);
      auto opt = [&](int i) { return p.column_is_null(i) ? std::nullopt : std::optional<double>(p.column_double(i)); };
      x.ci_low = opt(4);
      x.ci_high = opt(5);
      x.noise_pct = opt(6);
      if (!p.column_is_null(7)) x.verdict = p.column_text(7);
      x.source = p.column_text(8);
      x.source_ref = p.column_text(9);
      h.points.push_back(std::move(x));
    }
  }
  return out;
}

}  // namespace llmbench
