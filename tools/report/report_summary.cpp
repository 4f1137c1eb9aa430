// The page's opening table of an engine run (its cases, read through the bundled case_summary
// query, each number with the precision the field list gives it) and the section of the runs of
// the group with their environment and how many cases ran, succeeded and were traced.
#include "tools/report/report_section.h"

#include <algorithm>
#include <map>
#include <vector>

#include <fmt/core.h>

namespace llmbench::report {

namespace {

constexpr int kSummaryRows = 24;  // one screen

// "1.827!" for a utilisation above 1: never a plain number (the CLI table does the same).
std::string utilisation_text(const std::string& column, const json& v) {
  std::string t = field_text(column, v);
  if (v.is_number() && v.get<double>() > 1 + 1e-9) t += "!";
  return t;
}

// "a, b, c and 4 more".
std::string some_of(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < 3; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > 3) out += " and " + std::to_string(names.size() - 3) + " more";
  return out;
}

}  // namespace

json engine_summary_table(Ctx& c) {
  Stmt first = c.db->prepare("SELECT MIN(id) FROM run WHERE " + c.group_sql + " = ?");
  first.bind(1, c.group);
  first.step();
  std::vector<std::string> cols;
  const json rows = bundled_rows(*c.db, "case_summary",
                                 {{"run_id", std::to_string(first.column_int(0))}}, &cols);
  auto at = [&](const json& row, const std::string& name) -> const json& {
    static const json null = nullptr;
    const auto it = std::find(cols.begin(), cols.end(), name);
    return it == cols.end() ? null : row[it - cols.begin()];
  };
  // roof_check is a bench_case column (schema v7+), not one of case_summary's.
  std::map<std::int64_t, std::string> checks;
  if (columns_of(*c.db, "bench_case").count("roof_check")) {
    Stmt q = c.db->prepare("SELECT id, roof_check FROM bench_case WHERE roof_check IS NOT NULL "
                           "AND run_id IN (" + c.cases_sql + ")");
    q.bind(1, c.group);
    while (q.step()) checks[q.column_int(0)] = q.column_text(1);
  }
  json t = {{"title", "Summary: " + std::to_string(rows.size()) +
                          (rows.size() == 1 ? " case" : " cases") +
                          " (bundled query case_summary)"},
            {"columns", {"case", "status", "reps", "TTFT p50 (ms)", "TPOT mean (ms)",
                         "TPOT p99 (ms)", "e2e p50 (ms)", "throughput (tok/s)", "MFU", "MBU",
                         "trace overhead", "roof check"}},
            {"rows", json::array()}, {"flagged", json::array()}, {"warnings", json::array()}};
  std::map<std::string, std::vector<std::string>> advice;  // advice -> cases
  for (const json& row : rows) {
    const std::string variants = at(row, "variants").is_string() ? at(row, "variants").get<std::string>() : "";
    const std::string name = fmt::format(
        "{} {} p{} n{}{} b{}", at(row, "model").get<std::string>(),
        at(row, "dtype").get<std::string>(), at(row, "prompt_len").get<int>(),
        at(row, "max_new_tokens").get<int>(),
        c.show_variants && variants != "default" && !variants.empty() ? " " + variants : "",
        at(row, "batch").get<int>());
    const std::string check = checks.count(at(row, "case_id").get<std::int64_t>())
                                  ? checks[at(row, "case_id").get<std::int64_t>()]
                                  : std::string();
    const json& mfu = at(row, "mfu");
    const json& mbu = at(row, "mbu");
    const bool above = (mfu.is_number() && mfu.get<double>() > 1 + 1e-9) ||
                       (mbu.is_number() && mbu.get<double>() > 1 + 1e-9);
    if (roof_flagged(check) || above)
      advice[roof_advice(roof_flagged(check) ? check : "MFU > 1")].push_back(
          name + (roof_flagged(check) ? " (" + check + ")" : ""));
    if (int(t["rows"].size()) >= kSummaryRows) continue;
    const json& ovh = at(row, "max_new_tokens").get<int>() > 1 ? at(row, "trace_overhead_tpot")
                                                               : at(row, "trace_overhead_ttft");
    if (roof_flagged(check) || above) t["flagged"].push_back(t["rows"].size());
    t["rows"].push_back({name, at(row, "status"), at(row, "n"),
                         field_text("ttft_ms_p50", at(row, "ttft_ms_p50")),
                         field_text("tpot_ms_mean", at(row, "tpot_ms_mean")),
                         field_text("tpot_ms_p99", at(row, "tpot_ms_p99")),
                         field_text("e2e_ms_p50", at(row, "e2e_ms_p50")),
                         field_text("throughput_tok_s", at(row, "throughput_tok_s")),
                         utilisation_text("mfu", mfu), utilisation_text("mbu", mbu),
                         ovh.is_null() ? json("") : json(fmt::format("x{}", field_text("trace_overhead_tpot", ovh))),
                         check});
  }
  if (int(rows.size()) > kSummaryRows)
    t["note"] = fmt::format("The first {} of {} cases; every case is in the charts and tables "
                            "below.", kSummaryRows, rows.size());
  for (const auto& [what, names] : advice)
    t["warnings"].push_back(some_of(names) + ": " + what);
  return t;
}

json summary_section(Ctx& c) {
  json s = section("summary", "Run and environment");
  const auto cols = columns_of(*c.db, "run");
  Stmt q = c.db->prepare("SELECT * FROM run WHERE " + c.group_sql + " = ? ORDER BY id");
  q.bind(1, c.group);
  json facts = json::array();
  const std::vector<std::string> keep = {"id", "started_at", "command_line", "llmbench_version",
                                         "git_commit", "build_type", "host", "cpu", "gpu",
                                         "driver", "threads", "peak_bandwidth_gbps", "peak_tflops",
                                         "peak_source", "profile", "shard", "status"};
  while (q.step()) {
    json run = json::object();
    for (int i = 0; i < q.columns(); ++i) {
      const std::string name = q.column_name(i);
      if (std::find(keep.begin(), keep.end(), name) == keep.end()) continue;
      run[name] = q.column_is_null(i) ? std::string() : q.column_text(i);
    }
    facts.push_back(run);
  }
  s["facts"] = facts;
  Stmt n = c.db->prepare(
      std::string("SELECT COUNT(*), SUM(status = 'ok'), ") +
      (columns_of(*c.db, "bench_case").count("trace") ? "SUM(trace <> 'off')" : "0") +
      " FROM bench_case WHERE run_id IN (" + c.cases_sql + ")");
  n.bind(1, c.group);
  n.step();
  s["cases"] = {{"cases", n.column_int(0)}, {"ok", n.column_int(1)}, {"traced", n.column_int(2)}};
  return s;
}

}  // namespace llmbench::report
