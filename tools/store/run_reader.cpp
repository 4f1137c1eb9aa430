// Reading one run's samples read-only (see run_reader.h).
#include "tools/store/run_reader.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cctype>
#include <filesystem>
#include <map>

#include "kernels/common/error.h"
#include "engine/checkpoint/json_input.h"
#include "tools/store/run_info.h"
#include "tools/store/schema.h"
#include "tools/store/variants_json.h"

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
  if (!display.empty()) return display;
  std::string s = model + " " + dtype + " " + backend + " b" + std::to_string(batch) + " p" +
                  std::to_string(prompt_len) + " n" + std::to_string(max_new_tokens);
  if (with_threads) s += " t" + std::to_string(threads);
  // Only what differs from the engine's defaults, as every output names variants.
  const std::string v = variants_label(variants);
  if (v != "default" && v != "{}") s += " " + v;
  return s;
}

std::string normalise_variants(const std::string& text) {
  // nlohmann::json keeps object keys in a std::map, so dump() sorts them.
  const auto j = parse_json(text).value;
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

RunInfo read_run(Db& db, const SideSpec& spec, const std::string& what) {
  std::int64_t id = 0;
  if (spec.run_id) {
    id = *spec.run_id;
  } else {
    auto latest = db.prepare("SELECT MAX(id) FROM run");
    if (!latest.step() || latest.column_is_null(0))
      throw BadInput(what + " '" + spec.path + "' has no runs");
    id = latest.column_int(0);
  }
  std::optional<RunInfo> info = read_run_info(db, id);
  if (!info) {
    auto ids = db.prepare("SELECT group_concat(id, ', ') FROM (SELECT id FROM run ORDER BY id)");
    ids.step();
    throw BadInput(what + " '" + spec.path + "' has no run " + std::to_string(id) + " (runs: " +
                   ids.column_text(0) + ")");
  }
  return *info;
}

// Opens `path` read-only; a failure names `what` ("BASE", "CAND", "DB").
std::unique_ptr<Db> open_side(const std::string& path, const std::string& what) {
  try {
    return open_read_only(path);
  } catch (const BadInput& e) {
    throw BadInput(what + ": " + e.what());
  }
}

}  // namespace

static LoadedRun read_bench_run_unchecked(const SideSpec& spec, const std::string& what) {
  std::unique_ptr<Db> db = open_side(spec.path, what);
  require_llmbench_tables(*db, what, spec.path);
  LoadedRun out;
  out.path = spec.path;
  out.run = read_run(*db, spec, what);

  // The run's cases, and those of the other shards of its sweep when shards were merged
  // (run.run_group, schema version 5): a merged sweep compares as one run.
  const std::string runs =
      db->has_column("run", "run_group")
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
    // Variants are JSON this database wrote; anything else (a corrupt or hostile file, nested
    // a million levels deep) is refused here, before anything recurses over it.
    const std::string variants = cases.column_text(8);
    if (!variants.empty()) {
      auto parsed = parse_json(variants);
      if (!parsed.ok())
        throw BadInput(what + " '" + spec.path + "': bench_case " + std::to_string(c.case_id) +
                       " has variants that are not valid JSON (" + parsed.error + ")");
      c.variants = parsed.value.dump();
    }
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

namespace {

std::int64_t count_rows(Db& db, const std::string& table) {
  if (!db.has_table(table)) return 0;
  auto q = db.prepare("SELECT COUNT(*) FROM " + table);
  q.step();
  return q.column_int(0);
}

}  // namespace

bool serving_only(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  std::unique_ptr<Db> db;
  try {
    db = open_read_only(path);
  } catch (const BadInput&) {
    return false;
  }
  return count_rows(*db, "load_run") > 0 && count_rows(*db, "run") == 0;
}

static LoadedRun read_serving_run_unchecked(const SideSpec& spec, const std::string& what) {
  std::unique_ptr<Db> db = open_side(spec.path, what);
  if (!db->has_table("load_run"))
    throw BadInput(what + " '" + spec.path + "' has no serving runs (no load_run table: it was "
                   "written before `llmbench load` existed)");
  LoadedRun out;
  out.path = spec.path;
  std::int64_t id = 0;
  if (spec.run_id) {
    id = *spec.run_id;
  } else {
    auto latest = db->prepare("SELECT MAX(id) FROM load_run");
    if (!latest.step() || latest.column_is_null(0))
      throw BadInput(what + " '" + spec.path + "' has no serving runs (llmbench load)");
    id = latest.column_int(0);
  }
  std::optional<RunInfo> run = read_load_run_info(*db, id);
  if (!run) {
    auto ids = db->prepare("SELECT group_concat(id, ', ') FROM (SELECT id FROM load_run ORDER BY id)");
    ids.step();
    throw BadInput(what + " '" + spec.path + "' has no load run " + std::to_string(id) +
                   " (load runs: " + ids.column_text(0) + ")");
  }
  out.run = *run;
  auto labels = db->prepare("SELECT label, endpoint FROM load_run WHERE id = ?");
  labels.bind(1, id);
  labels.step();
  out.run.peaks.source = "serving run '" + labels.column_text(0) + "'";
  const std::string endpoint = labels.column_text(1);

  std::map<std::int64_t, std::size_t> index;  // level id -> position in out.cases
  auto levels = db->prepare(
      "SELECT id, level, concurrency, request_rate, burstiness, input_len, output_len, ok,"
      " (SELECT error FROM load_request q WHERE q.level_id = l.id AND q.status = 'error'"
      "  ORDER BY request_index LIMIT 1)"
      " FROM load_level l WHERE load_run_id = ? ORDER BY level_index");
  levels.bind(1, id);
  while (levels.step()) {
    CaseSamples c;
    c.case_id = levels.column_int(0);
    c.display = "load " + levels.column_text(1);
    c.model = "serving";
    c.dtype = endpoint;
    c.backend = "http";
    c.batch = levels.column_is_null(2) ? 0 : int(levels.column_int(2));
    if (!levels.column_is_null(3)) {
      nlohmann::json v;
      const double rate = levels.column_double(3);
      v["request_rate"] = std::isinf(rate) ? nlohmann::json("inf") : nlohmann::json(rate);
      v["burstiness"] = levels.column_double(4);
      c.variants = v.dump();
    }
    c.prompt_len = int(levels.column_int(5));
    c.max_new_tokens = int(levels.column_int(6));
    c.status = levels.column_int(7) > 0 ? "ok" : "error";
    c.error = levels.column_text(8);
    c.tpot_ms.emplace();
    index[c.case_id] = out.cases.size();
    out.cases.push_back(std::move(c));
  }
  auto samples = db->prepare(
      "SELECT q.level_id, q.ttft_ns, q.tpot_ns, q.e2el_ns, q.output_tokens FROM load_request q"
      " JOIN load_level l ON l.id = q.level_id"
      " WHERE l.load_run_id = ? AND q.status = 'ok' ORDER BY q.level_id, q.request_index");
  samples.bind(1, id);
  while (samples.step()) {
    CaseSamples& c = out.cases[index.at(samples.column_int(0))];
    const double e2el_ns = double(samples.column_int(3));
    c.ttft_ms.push_back(double(samples.column_int(1)) / 1e6);
    if (samples.column_type(2) != SQLITE_NULL) c.tpot_ms->push_back(samples.column_double(2) / 1e6);
    c.e2e_ms.push_back(e2el_ns / 1e6);
    if (e2el_ns > 0) c.throughput_tok_s.push_back(double(samples.column_int(4)) / (e2el_ns / 1e9));
  }
  return out;
}

namespace {

// Runs a reader; an SQLite failure on the way (a corrupt page, a file that is not a database
// after all, a missing column) is the file's fault: one line naming it, exit 2.
template <class Read>
LoadedRun read_checked(const SideSpec& spec, const std::string& what, Read read) {
  try {
    return read(spec, what);
  } catch (const BadInput&) {
    throw;
  } catch (const Error& e) {
    std::string why = e.what();
    if (why.size() > 160) why = why.substr(0, 157) + "...";
    throw BadInput(what + " '" + spec.path + "': cannot be read as an llmbench database (" + why +
                   ")");
  }
}

}  // namespace

LoadedRun read_bench_run(const SideSpec& spec, const std::string& what) {
  return read_checked(spec, what, read_bench_run_unchecked);
}

LoadedRun read_serving_run(const SideSpec& spec, const std::string& what) {
  return read_checked(spec, what, read_serving_run_unchecked);
}

}  // namespace llmbench
