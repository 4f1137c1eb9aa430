// The serving section of one `llmbench load` run: its settings, TTFT / TPOT / ITL against load
// level and against the throughput each level achieved, the SLO search of a `--sweep slo` run,
// TTFT against turn for sessions, the latency distributions per level (report_serving_dist.cpp),
// and the request timeline with the server's metrics under it. The page's opening table of a
// serving page is serving_summary_table: the bundled load_summary query per run.
// Runs are never merged: a database of several load runs gets one section per run (the latest
// kMaxLoadSections), or the one DB:RUN names. Reading: serving_reader.h; the shared charts:
// serving_charts.h; the SLO search: report_serving_slo.cpp; the timeline:
// report_serving_timeline.cpp.
#include "tools/report/report_section.h"

#include <algorithm>
#include <cctype>

#include <fmt/core.h>

#include "tools/report/serving_charts.h"
#include "tools/report/serving_reader.h"

namespace llmbench::report {

namespace {

constexpr int kMaxLoadSections = 6;  // load runs drawn when DB names none

std::string upper(std::string s) {
  for (char& ch : s) ch = char(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

// The precision `llmbench load` prints each figure with (tools/load's field list).
std::string fixed(const json& v, int decimals) {
  return v.is_number() ? fmt::format("{:.{}f}", v.get<double>(), decimals) : std::string("n/a");
}

}  // namespace

json serving_summary_table(Db& db,
                           const std::vector<std::pair<std::string, std::int64_t>>& runs) {
  json t = {{"title", "Summary: every level (bundled query load_summary)"},
            {"columns", json::array()}, {"rows", json::array()}, {"flagged", json::array()}};
  const bool several = runs.size() > 1;
  if (several) t["columns"].push_back("run");
  for (const char* c : {"level", "requests", "failed", "req/s", "output tok/s", "TTFT p50 (ms)",
                        "TTFT p99 (ms)", "TPOT p50 (ms)", "TPOT p99 (ms)", "ITL p50 (ms)",
                        "ITL p99 (ms)", "E2EL p50 (ms)", "E2EL p99 (ms)"})
    t["columns"].push_back(c);
  // Column -> decimals, as `llmbench load` prints them.
  const std::vector<std::pair<const char*, int>> figures = {
      {"request_throughput", 2}, {"output_tok_s", 1}, {"ttft_ms_p50", 2}, {"ttft_ms_p99", 2},
      {"tpot_ms_p50", 3},        {"tpot_ms_p99", 3},  {"itl_ms_p50", 3},  {"itl_ms_p99", 3},
      {"e2el_ms_p50", 2},        {"e2el_ms_p99", 2}};
  for (const auto& [name, run] : runs) {
    std::vector<std::string> cols;
    const json rows = bundled_rows(db, "load_summary", {{"load_run_id", std::to_string(run)}},
                                   &cols);
    auto at = [&](const json& row, const std::string& c) -> json {
      const auto it = std::find(cols.begin(), cols.end(), c);
      return it == cols.end() ? json(nullptr) : row[it - cols.begin()];
    };
    for (const json& row : rows) {
      json out = json::array();
      if (several) out.push_back(name);
      out.push_back(at(row, "level"));
      out.push_back(at(row, "requests"));
      out.push_back(at(row, "failed"));
      for (const auto& [c, d] : figures) out.push_back(fixed(at(row, c), d));
      const json failed = at(row, "failed");
      if (failed.is_number() && failed.get<double>() > 0) t["flagged"].push_back(t["rows"].size());
      t["rows"].push_back(std::move(out));
    }
  }
  return t;
}

bool serving_section(Ctx& c, Db& db, const std::string& path, std::int64_t run, json& sections,
                     const std::string& id_prefix) {
  const std::string name = load_run_name(db, run);
  const std::vector<ServingLevel> levels = read_serving_levels(db, run);
  if (levels.empty()) {
    c.omitted.push_back("Serving, " + name + ": the run has no finished level.");
    return false;
  }
  const std::string pre = id_prefix + std::to_string(run) + "_";
  json s = section(pre + "section", "Serving: " + name + " of " + path);
  json facts = {{"caption", "load run " + std::to_string(run)}, {"id", run}};
  for (const auto& row : load_run_facts(db, run)) facts[row[0].get<std::string>()] = row[1];
  s["facts"] = json::array({facts});
  const std::vector<RunLevels> runs = {{"", &levels}};
  std::string missing;
  for (const std::string m : kServingLatencies) {
    if (auto ch = latency_curves(pre + m, runs, m, ServingX::kLevel))
      s["charts"].push_back(std::move(*ch));
    else
      missing += (missing.empty() ? "" : ", ") + upper(m);
  }
  if (!missing.empty())
    c.omitted.push_back("Serving, " + name + ": " + missing + " against load level: no level "
                        "has a load position and the figure (an infinite rate or a trace level "
                        "has no position; TPOT and ITL need 2+ output tokens).");
  for (const char* m : {"ttft", "tpot"})
    if (auto ch = latency_curves(pre + m + "_tput", runs, m, ServingX::kThroughput))
      s["charts"].push_back(std::move(*ch));
  if (auto ch = slo_search_chart(db, run, pre + "slo")) s["charts"].push_back(std::move(*ch));
  latency_distributions(c, db, run, pre, s);
  if (auto ch = turn_chart(pre + "turns", {{"", read_turns(db, run)}}))
    s["charts"].push_back(std::move(*ch));
  else
    c.omitted.push_back("Serving, " + name + ": TTFT against turn: no multi-turn sessions "
                        "(every request is turn 0).");
  timeline_charts(c, db, run, pre, s);
  if (s["charts"].empty()) return false;
  sections.push_back(std::move(s));
  return true;
}

std::vector<std::pair<std::string, std::int64_t>> drawn_load_runs(Db& db) {
  std::vector<std::pair<std::string, std::int64_t>> runs;
  if (!db.has_table("load_level")) return runs;
  Stmt q = db.prepare("SELECT id FROM load_run WHERE id IN (SELECT load_run_id FROM load_level) "
                      "ORDER BY id DESC LIMIT ?");
  q.bind(1, std::int64_t(kMaxLoadSections));
  while (q.step()) runs.insert(runs.begin(), {"load run " + std::to_string(q.column_int(0)),
                                              q.column_int(0)});
  return runs;
}

bool serving_sections(Ctx& c, Db& db, const std::string& path, json& sections) {
  if (!db.has_table("load_level")) {
    c.omitted.push_back("Serving charts: the database has no serving tables (no llmbench load run).");
    return false;
  }
  std::vector<std::int64_t> runs;
  Stmt q = db.prepare("SELECT id FROM load_run WHERE id IN (SELECT load_run_id FROM load_level) "
                      "ORDER BY id DESC");
  while (q.step()) runs.push_back(q.column_int(0));
  if (runs.empty()) {
    c.omitted.push_back("Serving charts: the database holds no llmbench load levels.");
    return false;
  }
  if (int(runs.size()) > kMaxLoadSections) {
    std::string older;
    for (std::size_t i = kMaxLoadSections; i < runs.size(); ++i)
      older += (older.empty() ? "" : ", ") + std::to_string(runs[i]);
    c.omitted.push_back("Serving: older load runs " + older + " (the latest " +
                        std::to_string(kMaxLoadSections) + " are drawn; " + path +
                        ":load:N reports load run N alone).");
    runs.resize(kMaxLoadSections);
  }
  bool any = false;
  // Oldest first, as the runs were made.
  for (auto it = runs.rbegin(); it != runs.rend(); ++it)
    any = serving_section(c, db, path, *it, sections) || any;
  return any;
}

}  // namespace llmbench::report
