// History points from runs, load runs, gates and CSV (see history_import.h).
#include "tools/history/history_import.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include <fmt/core.h>

#include "engine/bench/stats.h"
#include "kernels/common/error.h"
#include "tools/compare/compare_rounds.h"
#include "tools/store/schema.h"

namespace llmbench {

namespace {

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (v && *v) return std::string(v);
  return std::nullopt;
}

// The distribution-free interval of the median (see history_import.h).
std::pair<double, double> median_interval(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  const double n = double(xs.size());
  const double half = 0.98 * std::sqrt(n);
  const auto lo = std::size_t(std::max(0.0, std::floor(n / 2 - half)));
  const auto hi = std::size_t(std::min(n - 1, std::ceil(n / 2 + half) - 1));
  return {xs[lo], xs[std::max(lo, hi)]};
}

SeriesKey key_of(const RunInfo& r, const std::string& suite, const std::string& label,
                 const MetricInfo& m) {
  SeriesKey k;
  k.suite = suite;
  k.case_label = label;
  k.metric = m.column;
  k.cpu = r.cpu;
  // The ISA path only ("avx2" of "avx2 (decode_fp32_m1 portable)"): which decode classes the
  // measured table moved off that path can flip between runs on a noisy machine, and a series
  // split at every flip would never hold enough points for a change point. The run
  // (source_ref) keeps the whole description.
  k.cpu_isa = r.cpu_isa.substr(0, r.cpu_isa.find(' '));
  k.threads = r.threads;
  k.gpu = r.gpu;
  k.driver = r.driver;
  k.higher_is_better = m.higher_is_better;
  return k;
}

HistoryPoint base_point(const RunInfo& r, const std::string& source, const std::string& ref,
                        const PointContext& ctx) {
  HistoryPoint p;
  std::optional<std::string> commit = ctx.commit;
  if (!commit && ctx.live) commit = commit_from_environment();
  p.commit = commit ? *commit : r.git_commit;
  std::optional<std::string> branch = ctx.branch;
  if (!branch && ctx.live) branch = branch_from_environment();
  p.branch = branch.value_or("");
  p.time = ctx.commit_time.value_or(r.started_at);
  p.source = source;
  p.source_ref = ref;
  return p;
}

HistoryRows points_of_cases(const LoadedRun& run, const std::string& suite, const std::string& source,
                            const std::string& ref, const PointContext& ctx) {
  HistoryRows out;
  for (const CaseSamples& c : run.cases) {
    if (!c.ok()) continue;
    for (const MetricInfo& m : all_metrics()) {
      const auto xs = c.samples(m.metric);
      if (!xs || xs->empty()) continue;
      HistoryPoint p = base_point(run.run, source, ref, ctx);
      p.value = median(*xs);
      const auto [lo, hi] = median_interval(*xs);
      p.ci_low = lo;
      p.ci_high = hi;
      out.emplace_back(key_of(run.run, suite, c.display.empty() ? c.label() : c.display, m), p);
    }
  }
  return out;
}

std::vector<std::int64_t> ids(Db& db, const std::string& sql) {
  std::vector<std::int64_t> out;
  auto q = db.prepare(sql);
  while (q.step()) out.push_back(q.column_int(0));
  return out;
}

// Validates ISO 8601 times of the CSV form.
bool iso_time(const std::string& t) {
  static const std::regex re(
      R"(^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$)");
  return std::regex_match(t, re);
}

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quoted) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur += '"';
        ++i;
      } else if (ch == '"') {
        quoted = false;
      } else {
        cur += ch;
      }
    } else if (ch == '"' && cur.empty()) {
      quoted = true;
    } else if (ch == ',') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  out.push_back(cur);
  return out;
}

}  // namespace

std::optional<std::string> commit_from_environment() {
  if (auto c = env("GITHUB_SHA")) return c;
  return env("CI_COMMIT_SHA");
}

std::optional<std::string> branch_from_environment() {
  if (auto b = env("GITHUB_HEAD_REF")) return b;  // a pull request's source branch
  if (auto b = env("GITHUB_REF_NAME")) return b;
  return env("CI_COMMIT_REF_NAME");
}

std::string suite_of(const std::string& profile) {
  if (profile.empty()) return "run";
  std::filesystem::path p(profile);
  return p.extension() == ".toml" ? p.stem().string() : p.filename().string();
}

HistoryRows points_from_run(const LoadedRun& run, const std::string& source_ref,
                            const PointContext& ctx) {
  return points_of_cases(run, ctx.suite ? *ctx.suite : suite_of(run.run.profile), "run", source_ref,
                         ctx);
}

HistoryRows points_from_load_run(const LoadedRun& run, const std::string& source_ref,
                                 const PointContext& ctx) {
  return points_of_cases(run, ctx.suite ? *ctx.suite : "load", "load", source_ref, ctx);
}

HistoryRows points_from_gate(const GateReport& g, const std::vector<GateRound>& rounds,
                             const std::string& profile, const std::string& source_ref,
                             const PointContext& ctx) {
  HistoryRows out;
  const LoadedRun* cand = nullptr;
  for (const GateRound& r : rounds)
    if (r.base && r.cand) {
      cand = r.cand;
      break;
    }
  if (!cand) return out;
  const std::string suite = ctx.suite ? *ctx.suite : suite_of(profile);
  for (const GateCase& c : g.cases) {
    if (c.status != CaseStatus::kCompared) continue;
    for (const PairedMetric& m : c.metrics) {
      if (!m.median_cand || !m.ratio) continue;
      HistoryPoint p = base_point(cand->run, "gate", source_ref, ctx);
      p.value = *m.median_cand;
      if (m.median_base && m.ci_low && m.ci_high) {
        p.ci_low = *m.median_base * *m.ci_low;
        p.ci_high = *m.median_base * *m.ci_high;
      }
      if (m.aa_noise) p.noise_pct = *m.aa_noise * 100;
      p.verdict = verdict_name(m.verdict);
      out.emplace_back(key_of(cand->run, suite, c.label, metric_info(m.metric)), p);
    }
  }
  return out;
}

std::string ref_path(const std::string& path) {
  std::error_code ec;
  const auto p = std::filesystem::weakly_canonical(std::filesystem::absolute(path), ec);
  return ec ? path : p.string();
}

HistoryRows points_from_database(const std::string& input, const PointContext& ctx) {
  const std::string path = ref_path(input);
  auto db = open_read_only(input);
  add_schema_stand_ins(*db);
  HistoryRows out;
  for (std::int64_t id : ids(*db, "SELECT id FROM run ORDER BY id")) {
    const LoadedRun run = read_bench_run(SideSpec{path, id}, "INPUT");
    const HistoryRows rows = points_from_run(run, fmt::format("{}:run {}", path, id), ctx);
    out.insert(out.end(), rows.begin(), rows.end());
  }
  for (std::int64_t id : ids(*db, "SELECT id FROM load_run ORDER BY id")) {
    const LoadedRun run = read_serving_run(SideSpec{path, id}, "INPUT");
    const HistoryRows rows = points_from_load_run(run, fmt::format("{}:load_run {}", path, id), ctx);
    out.insert(out.end(), rows.begin(), rows.end());
  }
  for (std::int64_t gate_id : ids(*db, "SELECT id FROM gate ORDER BY id")) {
    auto g = db->prepare("SELECT profile, base_db, cand_db FROM gate WHERE id = ?");
    g.bind(1, gate_id);
    if (!g.step()) continue;
    const std::string profile = g.column_text(0);
    // The side databases where the gate wrote them, else beside the gate database.
    auto side = [&](const std::string& stored, bool base) {
      return std::filesystem::exists(stored) ? stored : side_db_path(path, base);
    };
    const std::string base_db = side(g.column_text(1), true), cand_db = side(g.column_text(2), false);
    std::deque<LoadedRun> loaded;
    std::map<int, GateRound> by_round;
    auto r = db->prepare("SELECT round, side, position, run_id FROM gate_round WHERE gate_id = ?"
                         " AND run_id IS NOT NULL ORDER BY round, position");
    r.bind(1, gate_id);
    while (r.step()) {
      const int round = int(r.column_int(0));
      const bool base = r.column_text(1) == "base";
      GateRound& gr = by_round[round];
      gr.round = round;
      if (r.column_int(2) == 0) gr.base_first = base;
      loaded.push_back(read_bench_run(SideSpec{base ? base_db : cand_db, r.column_int(3)},
                                      base ? "BASE" : "CAND"));
      (base ? gr.base : gr.cand) = &loaded.back();
    }
    std::vector<GateRound> rounds;
    for (const auto& [n, gr] : by_round) rounds.push_back(gr);
    GateReport report = build_gate_report(rounds, CompareSettings{});
    // The verdicts the gate gave (its own alpha, threshold and rule), where it stored them.
    auto v = db->prepare("SELECT case_label, metric, verdict FROM gate_result WHERE gate_id = ?");
    v.bind(1, gate_id);
    std::map<std::pair<std::string, std::string>, std::string> stored;
    while (v.step()) stored[{v.column_text(0), v.column_text(1)}] = v.column_text(2);
    HistoryRows rows = points_from_gate(report, rounds, profile, fmt::format("{}:gate {}", path, gate_id), ctx);
    for (auto& [key, p] : rows)
      if (auto it = stored.find({key.case_label, key.metric}); it != stored.end()) p.verdict = it->second;
    out.insert(out.end(), rows.begin(), rows.end());
  }
  return out;
}

HistoryRows points_from_csv(const std::string& path) {
  const std::string ref = ref_path(path);
  std::ifstream in(path);
  if (!in) throw BadInput(fmt::format("CSV '{}' cannot be read", path));
  std::string line;
  if (!std::getline(in, line)) throw BadInput(fmt::format("CSV '{}' is empty", path));
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.size() >= 3 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);
  if (split_csv_line(line) != std::vector<std::string>{"series", "commit", "time", "value"})
    throw BadInput(fmt::format("CSV '{}' line 1: expected the header 'series,commit,time,value', got '{}'",
                               path, line));
  HistoryRows out;
  int n = 1;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const auto f = split_csv_line(line);
    auto bad = [&](const std::string& what) {
      return BadInput(fmt::format("CSV '{}' line {}: {}", path, n, what));
    };
    if (f.size() != 4) throw bad(fmt::format("expected 4 fields (series,commit,time,value), got {}", f.size()));
    if (f[0].empty()) throw bad("the series name is empty");
    if (f[1].empty()) throw bad("the commit is empty");
    if (!iso_time(f[2])) throw bad(fmt::format("time '{}' is not ISO 8601 (YYYY-MM-DDTHH:MM:SSZ)", f[2]));
    char* end = nullptr;
    const double v = std::strtod(f[3].c_str(), &end);
    if (f[3].empty() || end != f[3].c_str() + f[3].size() || !std::isfinite(v))
      throw bad(fmt::format("value '{}' is not a finite number", f[3]));
    SeriesKey k;
    k.suite = "csv";
    k.case_label = f[0];
    HistoryPoint p;
    p.commit = f[1];
    p.time = f[2];
    p.value = v;
    p.source = "csv";
    p.source_ref = fmt::format("{}:{}", ref, n);
    out.emplace_back(k, p);
  }
  return out;
}

}  // namespace llmbench
