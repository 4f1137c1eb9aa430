// The report's first section: the runs of the group with their environment, and how many
// cases ran, succeeded and were traced.
#include "tools/report/report_section.h"

#include <algorithm>
#include <vector>

namespace llmbench::report {

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
