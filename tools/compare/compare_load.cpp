// Loading one run's samples read-only (see compare_load.h).
#include "tools/compare/compare_load.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>

#include "kernels/common/error.h"
#include "tools/store/run_info.h"
#include "tools/query/query_runner.h"

namespace llmbench {

std::optional<std::vector<double>> CaseSamples::samples(Metric m) const {
  switch (m) {
    case Metric::kTtft: return ttft_ms;
    case Metric::kTpot: return tpot_ms;
    case Metric::kE2e: return e2e_ms;
    case Metric::kThroughput: return throughput_tok_s;
  }
  return std::nullopt;
}

std::string CaseSamples::label(bool with_threads) const {
  std::string s = model + " " + dtype + " " + backend + " b" + std::to_string(batch) + " p" +
                  std::to_string(prompt_len) + " n" + std::to_string(max_new_tokens);
  if (with_threads) s += " t" + std::to_string(threads);
  const auto j = nlohmann::json::parse(variants, nullptr, /*allow_exceptions=*/false);
  if (j.is_object()) {
    // Only what differs from the engine's defaults, as run's labels do ("qkv=permute").
    static const std::map<std::string, std::string> kDefaults = {
        {"qkv", "fused"}, {"kv_cache", "prealloc"}, {"logits", "device"}, {"timer", "device"}};
    for (const auto& [key, value] : j.items()) {
      const std::string text = value.is_string() ? value.get<std::string>() : value.dump();
      const auto d = kDefaults.find(key);
      if (d != kDefaults.end() && d->second == text) continue;
      s += " " + key + "=" + text;
    }
  } else if (variants != "{}") {
    s += " variants=" + variants;
  }
  return s;
}

std::string normalise_variants(const std::string& text) {
  // nlohmann::json keeps object keys in a std::map, so dump() sorts them.
  const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? text : j.dump();
}

SideSpec parse_side(const std::string& arg) {
  std::error_code ec;
  if (std::filesystem::exists(arg, ec)) return {arg, std::nullopt};
  const auto colon = arg.rfind(':');
  if (colon != std::string::npos && colon > 0 && colon + 1 < arg.size() && arg.size() - colon <= 19) {
    const std::string id = arg.substr(colon + 1);
    if (std::all_of(id.begin(), id.end(), [](unsigned char c) { return std::isdigit(c); }))
      return {arg.substr(0, colon), std::stoll(id)};
  }
  return {arg, std::nullopt};
}

namespace {

void require_llmbench_tables(Db& db, const std::string& what, const std::string& path) {
  auto st = db.prepare(
      "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN "
      "('run', 'bench_case', 'bench_sample', 'bench_step')");
  st.step();
  if (st.column_int(0) != 4)
    throw BadInput(what + " '" + path +
                   "' is not an llmbench result database (expected the tables run, bench_case, "
                   "bench_sample and bench_step)");
}

RunRow read_run(Db& db, const SideSpec& spec, const std::string& what) {
  std::int64_t id = 0;
  if (spec.run_id) {
    id = *spec.run_id;
  } else {
    auto latest = db.prepare("SELECT MAX(id) FROM run");
    if (!latest.step() || latest.column_is_null(0))
      throw BadInput(what + " '" + spec.path + "' has no runs");
    id = latest.column_int(0);
  }
  const std::optional<RunInfo> info = read_run_info(db, id);
  if (!info) {
    auto ids = db.prepare("SELECT group_concat(id, ', ') FROM (SELECT id FROM run ORDER BY id)");
    ids.step();
    throw BadInput(what + " '" + spec.path + "' has no run " + std::to_string(id) + " (runs: " +
                   ids.column_text(0) + ")");
  }
  RunRow r;
  r.id = id;
  r.started_at = info->started_at;
  r.command_line = info->command_line;
  r.llmbench_version = info->version;
  r.git_commit = info->git_commit;
  r.build_type = info->build_type;
  r.host = info->host;
  r.cpu = info->cpu;
  r.gpu = info->gpu;
  r.driver = info->driver;
  r.threads = info->threads;
  r.peak_bandwidth_gbps = info->peaks.bandwidth_gbps;
  r.peak_tflops = info->peaks.tflops;
  r.peak_source = info->peaks.source;
  return r;
}

}  // namespace

LoadedRun load_run(const SideSpec& spec, const std::string& what) {
  std::unique_ptr<Db> db;
  try {
    db = open_query_db(spec.path);
  } catch (const BadInput& e) {
    throw BadInput(what + ": " + e.what());
  }
  require_llmbench_tables(*db, what, spec.path);
  LoadedRun out;
  out.path = spec.path;
  out.run = read_run(*db, spec, what);

  // The run's cases, and those of the other shards of its sweep when shards were merged
  // (run.run_group, schema version 5): a merged sweep compares as one run.
  auto has_group = db->prepare("SELECT 1 FROM pragma_table_info('run') WHERE name = 'run_group'");
  const std::string runs =
      has_group.step()
          ? "(SELECT id FROM run WHERE COALESCE(run_group, id) ="
            " (SELECT COALESCE(run_group, id) FROM run WHERE id = ?1))"
          : "(?1)";
  std::map<std::int64_t, std::size_t> index;  // case id -> position in out.cases
  auto cases = db->prepare(
      "SELECT id, model, dtype, backend, batch, prompt_len, max_new_tokens, threads, variants,"
      " status, error FROM bench_case WHERE run_id IN " + runs + " ORDER BY id");
  cases.bind(1, out.run.id);
  while (cases.step()) {
    CaseSamples c;
    c.case_id = cases.column_int(0);
    c.model = cases.column_text(1);
    c.dtype = cases.column_text(2);
    c.backend = cases.column_text(3);
    c.batch = int(cases.column_int(4));
    c.prompt_len = int(cases.column_int(5));
    c.max_new_tokens = int(cases.column_int(6));
    c.threads = int(cases.column_int(7));
    c.variants = normalise_variants(cases.column_text(8));
    c.status = cases.column_text(9);
    c.error = cases.column_text(10);
    if (c.max_new_tokens > 1) c.tpot_ms.emplace();
    index[c.case_id] = out.cases.size();
    out.cases.push_back(std::move(c));
  }

  // One row per measured repetition; TPOT is the mean of that repetition's decode steps.
  auto samples = db->prepare(
      "SELECT s.case_id, s.ttft_ns, s.e2e_ns,"
      " (SELECT avg(st.decode_ns) FROM bench_step st WHERE st.sample_id = s.id)"
      " FROM bench_sample s JOIN bench_case c ON c.id = s.case_id"
      " WHERE c.run_id IN " + runs + " ORDER BY s.case_id, s.rep");
  samples.bind(1, out.run.id);
  while (samples.step()) {
    CaseSamples& c = out.cases[index.at(samples.column_int(0))];
    const double ttft_ns = double(samples.column_int(1)), e2e_ns = double(samples.column_int(2));
    if (!(ttft_ns > 0) || !(e2e_ns > 0))
      throw BadInput(what + " '" + spec.path + "': case " + std::to_string(c.case_id) +
                     " has a repetition with a TTFT or e2e time that is not positive");
    c.ttft_ms.push_back(ttft_ns / 1e6);
    c.e2e_ms.push_back(e2e_ns / 1e6);
    c.throughput_tok_s.push_back(double(c.batch) * c.max_new_tokens / (e2e_ns / 1e9));
    if (c.tpot_ms && samples.column_type(3) != SQLITE_NULL)
      c.tpot_ms->push_back(samples.column_double(3) / 1e6);
  }
  return out;
}

}  // namespace llmbench
