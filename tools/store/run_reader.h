// Reads one run of a result database, read-only, as per-repetition samples: the run row (its
// environment, RunInfo) and every case with its configuration, status and, per measured
// repetition, TTFT, TPOT (the mean of that repetition's decode steps), e2e and throughput; or
// one `llmbench load` run as such cases, one per level. Used by `llmbench compare` (one side
// each), its gate, the report's compare view and `llmbench export gbench`. Never writes to the
// file. Not here: matching cases and verdicts (tools/compare).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tools/store/run_info.h"

namespace llmbench {

// The per-repetition metrics a case's samples hold.
enum class Metric { kTtft, kTpot, kE2e, kThroughput };

struct CaseSamples {
  std::int64_t case_id = 0;
  std::string model, dtype, backend;
  int batch = 0, prompt_len = 0, max_new_tokens = 0, threads = 0;
  std::string variants = "{}";  // normalised: parsed and dumped with sorted keys
  std::string status, error;     // status "ok" or "error"
  // One value per measured repetition, in repetition order.
  std::vector<double> ttft_ms, e2e_ms, throughput_tok_s;
  std::optional<std::vector<double>> tpot_ms;  // nullopt when max_new_tokens == 1
  // Serving levels (read_serving_run): the label to show instead of the engine case's.
  std::string display;

  bool ok() const { return status == "ok"; }
  // The samples of `m`; nullopt when the metric does not apply (TPOT without decode steps).
  std::optional<std::vector<double>> samples(Metric m) const;
  // "small fp32 cpu b16 p128 n1 t2" plus " qkv=permute" for each variant; without the
  // " t2" when `with_threads` is false.
  std::string label(bool with_threads = true) const;
};

// One side of a comparison: DB or DB:RUN_ID.
struct SideSpec {
  std::string path;
  std::optional<std::int64_t> run_id;  // nullopt: the latest run
};

// "x.db" or "x.db:3". A path that exists as written is always the whole path (so a file name
// containing ':' still works); otherwise a trailing ":<digits>" is the run id.
SideSpec parse_side(const std::string& arg);

struct LoadedRun {
  std::string path;
  RunInfo run;
  std::vector<CaseSamples> cases;  // in insertion (case id) order
};

// Opens spec.path read-only and loads the run. Throws BadInput naming `what` ("BASE",
// "CAND", "DB") when the file is missing, not SQLite, not an llmbench result database, has no
// runs, or has no run with the requested id.
LoadedRun read_bench_run(const SideSpec& spec, const std::string& what);

// Opens spec.path read-only and loads one `llmbench load` run (spec.run_id is a
// load_run id, default the latest) as cases: one per level, one sample per ok request (TTFT,
// TPOT with 2+ output tokens, E2EL as e2e, and that request's output tokens / E2EL as
// throughput). Levels match by concurrency or rate and burstiness, endpoint and lengths, not
// by server or model name, so two servers compare level by level. Throws BadInput like
// read_bench_run.
LoadedRun read_serving_run(const SideSpec& spec, const std::string& what);

// Whether the database at `path` holds serving runs (load_run rows) and no engine runs: what
// `llmbench compare` compares as serving runs without --serving.
bool serving_only(const std::string& path);

// Normalises a variants JSON text: a JSON value is dumped with sorted keys and no spaces;
// text that is not JSON is returned unchanged.
std::string normalise_variants(const std::string& text);

}  // namespace llmbench
