// The serving section of one `llmbench load` run: its settings, TTFT / TPOT / ITL against load
// level and against the throughput each level achieved, the SLO search of a `--sweep slo` run,
// TTFT against turn for sessions, and the request timeline with the server's metrics under it.
// Runs are never merged: a database of several load runs gets one section per run (the latest
// kMaxLoadSections), or the one DB:RUN names. Reading: serving_reader.h; the shared charts:
// serving_charts.h; the SLO search: report_serving_slo.cpp; the timeline:
// report_serving_timeline.cpp.
#include "tools/report/report_section.h"

#include <cctype>

#include "tools/report/serving_charts.h"
#include "tools/report/serving_reader.h"

namespace llmbench::report {

namespace {

constexpr int kMaxLoadSections = 6;  // load runs drawn when DB names none

std::string upper(std::string s) {
  for (char& ch : s) ch = char(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

}  // namespace

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
