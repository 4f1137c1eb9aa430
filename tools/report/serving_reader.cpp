// See serving_reader.h.
#include "tools/report/serving_reader.h"

#include <cmath>

#include "tools/report/report_section.h"

namespace llmbench::report {

std::string column_or(Db& db, const std::string& table, const std::string& column,
                      const std::string& fallback) {
  return db.has_column(table, column) ? column : fallback;
}

namespace {

// "concurrency in16 out8", "rate sharegpt", "SLO search (rate) in16 out8", "trace mooncake".
std::string series_of(const std::string& mode, const std::string& sweep,
                      const std::string& dataset, int input_len, int output_len) {
  std::string s = sweep == "slo" ? "SLO search (rate)" : mode;
  if (dataset != "random" && !dataset.empty()) return s + " " + dataset;
  return s + " in" + std::to_string(input_len) + " out" + std::to_string(output_len);
}

}  // namespace

std::vector<ServingLevel> read_serving_levels(Db& db, std::int64_t load_run_id) {
  const std::string ok = "FROM load_request q WHERE q.level_id = l.id AND q.status = 'ok'";
  const std::string itl = "FROM load_chunk k JOIN load_request q ON q.id = k.request_id WHERE "
                          "q.level_id = l.id AND q.status = 'ok' AND k.itl_ns IS NOT NULL";
  const std::string pct = [&] {
    std::string s;
    for (const char* m : kServingLatencies) {
      const std::string from = std::string(m) == "itl" ? itl : ok;
      const std::string col = std::string(m) == "itl" ? "k.itl_ns" : std::string("q.") + m + "_ns";
      s += "(SELECT median(" + col + ") " + from + ") / 1e6, (SELECT percentile(" + col + ", 90) " +
           from + ") / 1e6, (SELECT percentile(" + col + ", 99) " + from + ") / 1e6, ";
    }
    return s;
  }();
  Stmt q = db.prepare(
      "SELECT l.id, l.level, r.mode, " + column_or(db, "load_run", "sweep", "'list'") + ", " +
      column_or(db, "load_run", "dataset_name", "'random'") +
      ", l.input_len, l.output_len, l.concurrency, l.request_rate, " + pct +
      "(SELECT SUM(q.output_tokens) " + ok + ") / (l.duration_ns / 1e9), "
      "(SELECT COUNT(*) " + ok + ") / (l.duration_ns / 1e9), l.failed, l.requests, " +
      (db.has_column("load_level", "over_capacity") ? "l.over_capacity" : "NULL") +
      " FROM load_level l JOIN load_run r ON r.id = l.load_run_id WHERE r.id = ? "
      "ORDER BY l.input_len, l.output_len, COALESCE(l.concurrency, l.request_rate), l.level_index");
  q.bind(1, load_run_id);
  std::vector<ServingLevel> levels;
  while (q.step()) {
    ServingLevel lv;
    lv.id = q.column_int(0);
    lv.name = q.column_text(1);
    const std::string mode = q.column_text(2);
    lv.mode = mode;
    lv.series = series_of(mode, q.column_text(3), q.column_text(4), int(q.column_int(5)),
                          int(q.column_int(6)));
    if (!q.column_is_null(7)) {
      lv.x = q.column_int(7);
      lv.x_text = std::to_string(q.column_int(7));
    } else if (!q.column_is_null(8)) {
      const double rate = q.column_double(8);
      lv.x = std::isfinite(rate) ? json(r4(rate)) : json(nullptr);
      lv.x_text = std::isfinite(rate) ? json(r4(rate)).dump() : "inf";
    } else {
      lv.x_text = mode;  // a trace level: no load axis
    }
    int col = 9;
    for (const char* m : kServingLatencies)
      for (const char* p : {"_p50", "_p90", "_p99"}) lv.v[std::string(m) + p] = num(q, col++);
    lv.v["output_tok_s"] = num(q, col++);
    lv.v["request_s"] = num(q, col++);
    lv.v["failed"] = q.column_int(col++);
    lv.v["requests"] = q.column_int(col++);
    // The saturation guard's verdict (schema 13): "over", "ok", or null when not judged.
    lv.v["capacity"] = q.column_is_null(col) ? json(nullptr) : json(q.column_int(col) ? "over" : "ok");
    ++col;
    levels.push_back(std::move(lv));
  }
  return levels;
}

std::string load_run_name(Db& db, std::int64_t id) {
  Stmt q = db.prepare("SELECT label, mode, " +
                      column_or(db, "load_run", "dataset_name", "'random'") +
                      " FROM load_run WHERE id = ?");
  q.bind(1, id);
  if (!q.step()) return "load run " + std::to_string(id);
  return "load run " + std::to_string(id) + " (" + q.column_text(0) + ", " + q.column_text(1) +
         ", " + q.column_text(2) + ")";
}

json load_run_facts(Db& db, std::int64_t id) {
  const std::vector<std::string> keep = {
      "started_at", "status", "command_line", "llmbench_version", "git_commit", "host", "label",
      "url", "endpoint", "model", "prompt_kind", "mode", "sweep", "dataset_name", "dataset_path",
      "lengths", "goodput", "slo_frontier_rate", "server_metrics_url"};
  Stmt q = db.prepare("SELECT * FROM load_run WHERE id = ?");
  q.bind(1, id);
  json rows = json::array();
  if (!q.step()) return rows;
  for (const auto& name : keep)
    for (int i = 0; i < q.columns(); ++i)
      if (q.column_name(i) == name && !q.column_is_null(i) && !q.column_text(i).empty())
        rows.push_back({name, q.column_type(i) == SQLITE_FLOAT ? json(r4(q.column_double(i))).dump()
                                                                : q.column_text(i)});
  return rows;
}

std::vector<TurnPoint> read_turns(Db& db, std::int64_t load_run_id) {
  if (!db.has_column("load_request", "turn_index")) return {};
  Stmt any = db.prepare("SELECT 1 FROM load_request q JOIN load_level l ON l.id = q.level_id "
                        "WHERE l.load_run_id = ? AND q.turn_index > 0 LIMIT 1");
  any.bind(1, load_run_id);
  if (!any.step()) return {};
  Stmt q = db.prepare(
      "SELECT l.level, q.turn_index, COUNT(*), median(q.ttft_ns) / 1e6, "
      "percentile(q.ttft_ns, 90) / 1e6 FROM load_request q JOIN load_level l ON l.id = q.level_id "
      "WHERE l.load_run_id = ? AND q.status = 'ok' AND q.turn_index IS NOT NULL "
      "GROUP BY l.id, q.turn_index ORDER BY l.level_index, q.turn_index");
  q.bind(1, load_run_id);
  std::vector<TurnPoint> out;
  while (q.step())
    out.push_back({q.column_text(0), int(q.column_int(1)), q.column_int(2), num(q, 3), num(q, 4)});
  return out;
}

}  // namespace llmbench::report
