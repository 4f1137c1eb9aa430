// Several runs per side as one sample per run (see compare_runs.h).
#include "tools/compare/compare_runs.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>

#include "engine/bench/stats.h"
#include "kernels/common/error.h"
#include "tools/store/schema.h"

namespace llmbench {

std::vector<SideSpec> parse_sides(const std::string& arg, const std::string& what) {
  std::error_code ec;
  const auto colon = arg.rfind(':');
  if (std::filesystem::exists(arg, ec) || colon == std::string::npos || colon == 0)
    return {parse_side(arg)};
  const std::string path = arg.substr(0, colon), list = arg.substr(colon + 1);
  if (list == "all") {
    std::unique_ptr<Db> db;
    try {
      db = open_read_only(path);
    } catch (const BadInput& e) {
      throw BadInput(what + ": " + e.what());
    }
    std::vector<SideSpec> out;
    // The shards of one merged sweep (run.run_group, schema 5) load as one run: list each
    // group once, by its first run.
    auto st = db->prepare(db->has_column("run", "run_group")
                              ? "SELECT min(id) FROM run GROUP BY COALESCE(run_group, id) ORDER BY 1"
                              : "SELECT id FROM run ORDER BY id");
    while (st.step()) out.push_back({path, st.column_int(0)});
    if (out.empty()) throw BadInput(what + " '" + path + "' has no runs");
    return out;
  }
  if (list.find(',') == std::string::npos) return {parse_side(arg)};
  std::vector<SideSpec> out;
  std::size_t from = 0;
  while (from <= list.size()) {
    const auto to = std::min(list.find(',', from), list.size());
    const std::string id = list.substr(from, to - from);
    if (id.empty() || id.size() > 18 ||
        !std::all_of(id.begin(), id.end(), [](unsigned char c) { return std::isdigit(c); }))
      throw BadInput(what + ": expected DB, DB:RUN_ID, DB:ID,ID,... or DB:all, got '" + arg + "'");
    out.push_back({path, std::stoll(id)});
    from = to + 1;
  }
  return out;
}

LoadedRun collapse_runs(const std::vector<LoadedRun>& runs) {
  LLMBENCH_CHECK(!runs.empty(), "collapse_runs of no runs");
  LoadedRun out;
  out.run = runs.front().run;
  out.path = runs.front().path + " runs ";
  for (std::size_t i = 0; i < runs.size(); ++i)
    out.path += (i ? "," : "") + std::to_string(runs[i].run.id);

  // Cases by (label, occurrence) in each run.
  auto keyed = [](const LoadedRun& r) {
    std::map<std::string, const CaseSamples*> m;
    std::map<std::string, int> seen;
    for (const auto& c : r.cases) {
      const std::string label = c.label();
      m[label + "#" + std::to_string(seen[label]++)] = &c;
    }
    return m;
  };
  std::vector<std::map<std::string, const CaseSamples*>> per_run;
  for (const auto& r : runs) per_run.push_back(keyed(r));
  std::map<std::string, int> seen;
  for (const CaseSamples& first : runs.front().cases) {
    const std::string label = first.label();
    const std::string key = label + "#" + std::to_string(seen[label]++);
    CaseSamples c = first;
    c.ttft_ms.clear();
    c.e2e_ms.clear();
    c.throughput_tok_s.clear();
    if (c.tpot_ms) c.tpot_ms->clear();
    bool any_ok = false;
    for (const auto& m : per_run) {
      const auto it = m.find(key);
      if (it == m.end() || !it->second->ok() || it->second->ttft_ms.empty()) continue;
      const CaseSamples& x = *it->second;
      any_ok = true;
      c.ttft_ms.push_back(median(x.ttft_ms));
      c.e2e_ms.push_back(median(x.e2e_ms));
      c.throughput_tok_s.push_back(median(x.throughput_tok_s));
      if (c.tpot_ms && x.tpot_ms && !x.tpot_ms->empty()) c.tpot_ms->push_back(median(*x.tpot_ms));
    }
    if (any_ok) {
      c.status = "ok";
      c.error.clear();
    }
    out.cases.push_back(std::move(c));
  }
  return out;
}

}  // namespace llmbench
