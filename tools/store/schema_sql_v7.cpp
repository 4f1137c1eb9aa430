// The schema's history from version 7 on (versions 1 to 6: schema_sql.cpp): load's file
// workloads (7), per-dtype peaks (8), load's SLO search and server metrics (9), the serving
// and gate tables with the device-query views joining the one schema (10), prefix caching (11),
// history over commits (12), request ids, saturation and steady state (13), a served request's
// steps and ops (14), energy per phase (15). A released script
// never changes: a new table or column goes into a new version's script.
#include "tools/store/schema.h"

namespace llmbench {

namespace {

// Version 7: file workloads of `llmbench load` (docs/serving.md "Datasets"): what a run read and
// how its lengths are known, and each request's session and turn (a single-turn request is its
// own session, turn 0), so TTFT can be read against the turn (query load_ttft_by_turn).
constexpr const char* kSchemaV7 = R"sql(
ALTER TABLE load_run ADD COLUMN dataset_name TEXT NOT NULL DEFAULT 'random';  -- random | sharegpt | jsonl | mooncake
ALTER TABLE load_run ADD COLUMN dataset_path TEXT;          -- NULL for random
ALTER TABLE load_run ADD COLUMN tokenizer TEXT;             -- --tokenizer, NULL when none
ALTER TABLE load_run ADD COLUMN lengths TEXT;               -- where prompt/output lengths came from
ALTER TABLE load_run ADD COLUMN use_server_responses INTEGER NOT NULL DEFAULT 0;  -- 1: history = server replies
ALTER TABLE load_run ADD COLUMN think_time_ms REAL NOT NULL DEFAULT 0;
ALTER TABLE load_run ADD COLUMN time_scale REAL NOT NULL DEFAULT 1;     -- trace levels
ALTER TABLE load_run ADD COLUMN hash_block_size INTEGER;    -- trace levels, NULL otherwise
ALTER TABLE load_request ADD COLUMN session_index INTEGER;  -- 0-based session in the level
ALTER TABLE load_request ADD COLUMN turn_index INTEGER;     -- 0-based turn in its session
)sql";

// Version 8: every dtype's GEMM peak on the run row (a stored MFU of any dtype can be
// recomputed: MFU = prefill_tflops / the case dtype's peak), and the read roof probed beside
// each case (bench_case's read_gbps_before/_after, mbu_peak_gbps, mfu_peak_tflops, roof_check,
// added from the field list after this script). NULL: not measured (older runs; int8/int4 on
// CUDA).
constexpr const char* kSchemaV8 = R"sql(
ALTER TABLE run ADD COLUMN peak_fp32_tflops REAL;  -- GEMM peaks per dtype, 1e12 FLOP/s
ALTER TABLE run ADD COLUMN peak_bf16_tflops REAL;
ALTER TABLE run ADD COLUMN peak_fp16_tflops REAL;
ALTER TABLE run ADD COLUMN peak_int8_tflops REAL;
ALTER TABLE run ADD COLUMN peak_int4_tflops REAL;
)sql";

// Version 9: the SLO search and server metrics of `llmbench load` (docs/schema.md). A load run
// says which sweep placed its levels ('list': the flags' product; 'slo': the SLO frontier
// search) and, for the search, its target and result; each level its role in the search.
// Server metrics scraped during a level are counter tracks (Perfetto's shape) tied to it by
// track.load_level_id, with the family's Prometheus type; the level keeps its scrape counts.
constexpr const char* kSchemaV9 = R"sql(
ALTER TABLE load_run ADD COLUMN sweep TEXT NOT NULL DEFAULT 'list';  -- list | slo
ALTER TABLE load_run ADD COLUMN goodput_target REAL;      -- slo: share of good requests asked
ALTER TABLE load_run ADD COLUMN slo_frontier_rate REAL;   -- slo: highest rate meeting it (NULL: none)
ALTER TABLE load_run ADD COLUMN server_metrics_url TEXT;  -- --server-metrics, NULL when off
ALTER TABLE load_level ADD COLUMN sweep_role TEXT;        -- slo: throughput | probe; NULL for list
ALTER TABLE load_level ADD COLUMN good_fraction REAL;     -- with --goodput: good / requests
ALTER TABLE load_level ADD COLUMN metrics_url TEXT;
ALTER TABLE load_level ADD COLUMN metrics_scrapes INTEGER;          -- answered with HTTP 200
ALTER TABLE load_level ADD COLUMN metrics_failed_scrapes INTEGER;   -- no answer or not 200
ALTER TABLE load_level ADD COLUMN metrics_rejected_lines INTEGER;   -- malformed lines refused
ALTER TABLE load_level ADD COLUMN metrics_first_problem TEXT;
ALTER TABLE track ADD COLUMN load_level_id INTEGER REFERENCES load_level(id);
ALTER TABLE track ADD COLUMN metric_type TEXT;  -- server metrics: counter | gauge | histogram | ...
CREATE INDEX IF NOT EXISTS track_load_level ON track(load_level_id) WHERE load_level_id IS NOT NULL;
)sql";

// Version 10: one schema for every llmbench database (docs/schema.md). The tables of
// `llmbench serve --db` (serve_*) and of the interleaved gate `llmbench compare --run`
// (gate_*) join the schema (both used to create their own tables outside the version), and
// two views give the device queries their common start: track_scope says which trace each
// track belongs to and whether it is the default trace (the latest import, or in a database
// without imports the latest traced case); device_op lists the device work of every trace
// (imported kernels, copies and sets; every op of an llmbench trace) with the host slice
// that launched it.
constexpr const char* kSchemaV10 = R"sql(
CREATE TABLE IF NOT EXISTS serve_session (
  id                     INTEGER PRIMARY KEY,
  started_unix_ns        INTEGER NOT NULL,  -- wall clock at the server's origin
  command_line           TEXT,
  model                  TEXT,
  dtype                  TEXT,
  backend                TEXT,
  device                 TEXT,
  max_num_seqs           INTEGER,
  max_num_batched_tokens INTEGER,
  chunked_prefill        INTEGER,           -- 1 on, 0 off
  kv_block_size          INTEGER,
  kv_blocks              INTEGER
);
CREATE TABLE IF NOT EXISTS serve_step (
  session_id      INTEGER NOT NULL REFERENCES serve_session(id),
  step            INTEGER NOT NULL,         -- 1, 2, ... within the session
  start_ns        INTEGER NOT NULL,         -- since the server's origin
  dur_ns          INTEGER NOT NULL,         -- the whole step: scheduling + forward + bookkeeping
  forward_ns      INTEGER NOT NULL,         -- the forward pass alone
  prefill_tokens  INTEGER NOT NULL,         -- prompt rows (whole prompts and chunks)
  decode_rows     INTEGER NOT NULL,
  seqs            INTEGER NOT NULL,         -- sequences with rows in the step
  running         INTEGER NOT NULL,         -- after the step
  waiting         INTEGER NOT NULL,         -- after the step
  kv_blocks_used  INTEGER NOT NULL,         -- after the step
  PRIMARY KEY (session_id, step)
);
CREATE TABLE IF NOT EXISTS serve_request (
  session_id          INTEGER NOT NULL REFERENCES serve_session(id),
  request_id          INTEGER NOT NULL,
  prompt_tokens       INTEGER NOT NULL,
  completion_tokens   INTEGER NOT NULL,
  finish_reason       TEXT NOT NULL,        -- length | stop | abort
  arrival_ns          INTEGER,              -- queued by the engine (NULL: never reached it)
  first_scheduled_ns  INTEGER,              -- start of the first step with its rows
  first_token_ns      INTEGER,              -- end of the step that produced its first token
  finished_ns         INTEGER,
  PRIMARY KEY (session_id, request_id)
);
CREATE TABLE IF NOT EXISTS gate (
  id                    INTEGER PRIMARY KEY,
  started_at            TEXT NOT NULL,      -- UTC ISO 8601
  base_bin              TEXT NOT NULL,
  cand_bin              TEXT NOT NULL,
  profile               TEXT NOT NULL,
  rounds                INTEGER NOT NULL,
  order_seed            INTEGER NOT NULL,
  base_db               TEXT NOT NULL,      -- the base side's own result database
  cand_db               TEXT NOT NULL,
  wall_s                REAL                -- the whole gate; NULL until it finished
);
CREATE TABLE IF NOT EXISTS gate_round (
  gate_id               INTEGER NOT NULL REFERENCES gate(id),
  round                 INTEGER NOT NULL,   -- 1-based
  side                  TEXT NOT NULL,      -- base | cand
  position              INTEGER NOT NULL,   -- 0: ran first in its round
  exit_code             INTEGER NOT NULL,
  wall_s                REAL NOT NULL,
  run_id                INTEGER             -- run.id in the side's database; NULL: none written
);
CREATE TABLE IF NOT EXISTS gate_sample (
  gate_id               INTEGER NOT NULL REFERENCES gate(id),
  round                 INTEGER NOT NULL,
  side                  TEXT NOT NULL,
  case_label            TEXT NOT NULL,
  case_id               INTEGER NOT NULL,   -- bench_case.id in the side's database
  metric                TEXT NOT NULL,      -- ttft_ms | tpot_ms | e2e_ms | throughput_tok_s
  rep                   INTEGER NOT NULL,
  value                 REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS gate_result (
  gate_id               INTEGER NOT NULL REFERENCES gate(id),
  case_label            TEXT NOT NULL,
  metric                TEXT NOT NULL,      -- '-' for a case that was not compared
  rounds                INTEGER NOT NULL,
  ratio                 REAL,
  ci_low                REAL,
  ci_high               REAL,
  p_value               REAL,
  verdict               TEXT NOT NULL,
  aa_ratio              REAL,
  aa_noise_pct          REAL
);
CREATE INDEX IF NOT EXISTS gate_sample_gate ON gate_sample(gate_id, round);
CREATE VIEW IF NOT EXISTS track_scope AS
  SELECT t.id, t.name, t.type, t.import_id, t.case_id, t.device_id, t.stream_id,
         t.case_id IS NOT NULL AS own,
         COALESCE(CASE WHEN EXISTS (SELECT 1 FROM import)
                       THEN t.import_id = (SELECT MAX(id) FROM import)
                       ELSE t.case_id = (SELECT MAX(case_id) FROM track) END, 0) AS latest
  FROM track AS t;
CREATE VIEW IF NOT EXISTS device_op AS
  SELECT s.id, s.ts, s.dur, s.track_id, s.name, s.category, s.bytes, t.import_id, t.case_id,
         t.latest,
         CASE WHEN t.own THEN s.id
              ELSE (SELECT MIN(f.slice_out) FROM flow AS f WHERE f.slice_in = s.id) END AS launch_id
  FROM slice AS s JOIN track_scope AS t ON t.id = s.track_id
  WHERE (NOT t.own AND lower(COALESCE(s.category, ''))
                       IN ('kernel', 'gpu_memcpy', 'gpu_memset', 'memcpy', 'memset'))
     OR (t.own AND s.category IS NOT 'range');
)sql";

// Version 11: prefix caching in `serve --db` (NULL in rows stored before it).
constexpr const char* kSchemaV11 = R"sql(
ALTER TABLE serve_session ADD COLUMN prefix_caching INTEGER;  -- 1 on, 0 off
ALTER TABLE serve_step ADD COLUMN cached_tokens INTEGER;      -- prompt tokens of the requests
                                                              -- admitted in it found cached
ALTER TABLE serve_request ADD COLUMN cached_tokens INTEGER;   -- its prompt tokens found cached
)sql";

// Version 12: history over commits (docs/ci.md, "History"). One history_series per (suite,
// case, metric, machine fingerprint: CPU model, ISA path, threads, GPU, driver), so a series
// never mixes machines; one history_point per measurement of a commit, from a run, a load run,
// a gate (`compare --run`) or a CSV row. The run row records the kernels' ISA path, part of the
// fingerprint. `llmbench bisect` keeps each bisection and its steps (bisect, bisect_step), so an
// interrupted one resumes where it stopped.
constexpr const char* kSchemaV12 = R"sql(
ALTER TABLE run ADD COLUMN cpu_isa TEXT;  -- avx512-bf16 | avx512 | avx2 | portable; NULL before v12
CREATE TABLE IF NOT EXISTS history_series (
  id                    INTEGER PRIMARY KEY,
  suite                 TEXT NOT NULL,      -- profile name (file stem) or suite; '' none
  case_label            TEXT NOT NULL,      -- the case as compare labels it; CSV: the series name
  metric                TEXT NOT NULL,      -- ttft_ms | tpot_ms | e2e_ms | throughput_tok_s; CSV: ''
  cpu                   TEXT NOT NULL,
  cpu_isa               TEXT NOT NULL,      -- '' unknown
  threads               INTEGER NOT NULL,   -- 0 unknown
  gpu                   TEXT NOT NULL,      -- '' none
  driver                TEXT NOT NULL,
  higher_is_better      INTEGER,            -- 1 | 0; NULL unknown (CSV: `history check` decides)
  UNIQUE (suite, case_label, metric, cpu, cpu_isa, threads, gpu, driver)
);
CREATE TABLE IF NOT EXISTS history_point (
  id                    INTEGER PRIMARY KEY,
  series_id             INTEGER NOT NULL REFERENCES history_series(id),
  commit_sha            TEXT NOT NULL,
  branch                TEXT NOT NULL,      -- '' unknown
  time                  TEXT NOT NULL,      -- ISO 8601: commit time as given, else when measured
  value                 REAL NOT NULL,      -- the metric's median (a gate: the candidate's)
  ci_low                REAL,               -- its interval, NULL when none
  ci_high               REAL,
  noise_pct             REAL,               -- the A/A noise floor of the gate that measured it
  verdict               TEXT,               -- that gate's verdict against its base; NULL: no gate
  source                TEXT NOT NULL,      -- run | load | gate | csv
  source_ref            TEXT NOT NULL,      -- what it came from: 'DB:run 3', 'DB:gate 1', 'F.csv:12'
  added_at              TEXT NOT NULL       -- UTC ISO 8601
);
CREATE UNIQUE INDEX IF NOT EXISTS history_point_source ON history_point(series_id, source_ref);
CREATE INDEX IF NOT EXISTS history_point_series ON history_point(series_id, time);
CREATE TABLE IF NOT EXISTS bisect (
  id                    INTEGER PRIMARY KEY,
  started_at            TEXT NOT NULL,      -- UTC ISO 8601
  good                  TEXT NOT NULL,      -- full commit ids
  bad                   TEXT NOT NULL,
  build_cmd             TEXT NOT NULL,
  profile               TEXT NOT NULL,
  metrics               TEXT NOT NULL,      -- the --metric list
  status                TEXT NOT NULL,      -- running | found | none | undecided
  first_bad             TEXT,               -- status found: the first slow commit
  finished_at           TEXT
);
CREATE TABLE IF NOT EXISTS bisect_step (
  bisect_id             INTEGER NOT NULL REFERENCES bisect(id),
  step                  INTEGER NOT NULL,   -- 1-based, in the order tested
  commit_sha            TEXT NOT NULL,
  gate_id               INTEGER,            -- gate.id of the comparison with the good build
  verdict               TEXT NOT NULL,      -- bad | good | undecided
  rounds                INTEGER NOT NULL,
  evidence              TEXT NOT NULL       -- JSON: per case and metric, verdict, ratio, interval
);
)sql";


// Version 13: a request's path from the client to the server (docs/serving.md "Request ids"):
// the X-Request-Id `load` sent and the one `serve` recorded join a load database to a serve
// database; the saturation guard's verdict on a rate level and the steady-state window of each
// level; whether load streamed; what a bisect looks for.
constexpr const char* kSchemaV13 = R"sql(
ALTER TABLE load_request ADD COLUMN x_request_id TEXT;    -- the X-Request-Id header sent
ALTER TABLE serve_request ADD COLUMN x_request_id TEXT;   -- the X-Request-Id given, else serve's own
ALTER TABLE load_run ADD COLUMN stream INTEGER NOT NULL DEFAULT 1;  -- 0: --no-stream
ALTER TABLE load_level ADD COLUMN over_capacity INTEGER;  -- rate levels: 1 the guard fired, 0 not; NULL unchecked
ALTER TABLE load_level ADD COLUMN saturation_ns INTEGER;  -- since the level's origin, when it fired
ALTER TABLE load_level ADD COLUMN stopped_early INTEGER NOT NULL DEFAULT 0;  -- 1: --stop-on-saturation ended it
ALTER TABLE load_level ADD COLUMN steady_start_ns INTEGER;  -- the steady-state window, since the origin
ALTER TABLE load_level ADD COLUMN steady_end_ns INTEGER;
ALTER TABLE bisect ADD COLUMN find TEXT NOT NULL DEFAULT 'slower';  -- slower | faster (--find)
CREATE INDEX IF NOT EXISTS load_request_x_request_id ON load_request(x_request_id) WHERE x_request_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS serve_request_x_request_id ON serve_request(x_request_id) WHERE x_request_id IS NOT NULL;
)sql";

// Version 14: `serve --trace steps|ops` (docs/serving.md, "Tracing a server"): which requests
// each engine step held and in which role (serve_step_request), and the session's trace: its
// level and the track whose events are its engine steps (event.step = serve_step.step) and,
// with ops, the ops inside them, timed as `run` times them.
constexpr const char* kSchemaV14 = R"sql(
ALTER TABLE serve_session ADD COLUMN trace TEXT;        -- off | steps | ops; NULL before v14
ALTER TABLE serve_session ADD COLUMN track_id INTEGER;  -- track of its steps' events; NULL: untraced
CREATE TABLE IF NOT EXISTS serve_step_request (
  session_id      INTEGER NOT NULL REFERENCES serve_session(id),
  step            INTEGER NOT NULL,         -- serve_step.step
  request_id      INTEGER NOT NULL,         -- serve_request.request_id
  role            TEXT NOT NULL,            -- prefill (a chunk of its prompt) | decode (one row)
  tokens          INTEGER NOT NULL,         -- its rows in the step
  PRIMARY KEY (session_id, step, request_id)
);
CREATE INDEX IF NOT EXISTS serve_step_request_request ON serve_step_request(session_id, request_id);
CREATE INDEX IF NOT EXISTS event_track_step ON event(track_id, step);
)sql";

// Version 15: energy per phase (docs/metrics.md, "Energy per phase"). bench_case's energy
// columns (prefill_j_per_token ... energy_check) are added from the field list after this
// script, as version 8's were; the serve session keeps its engine steps' energy (serve --backend
// cuda with NVML; NULL otherwise, energy_note saying why).
constexpr const char* kSchemaV15 = R"sql(
ALTER TABLE serve_session ADD COLUMN energy_j REAL;              -- board energy over busy step spans, J
ALTER TABLE serve_session ADD COLUMN energy_ms REAL;             -- those spans' summed time, ms
ALTER TABLE serve_session ADD COLUMN energy_output_tokens INTEGER;  -- tokens generated in them
ALTER TABLE serve_session ADD COLUMN j_per_output_token REAL;    -- energy_j / energy_output_tokens
ALTER TABLE serve_session ADD COLUMN energy_w REAL;              -- energy_j / energy_ms, W
ALTER TABLE serve_session ADD COLUMN energy_update_ms REAL;      -- the counter's update interval, ms
ALTER TABLE serve_session ADD COLUMN idle_w REAL;                -- the board idle at start, W
ALTER TABLE serve_session ADD COLUMN power_limit_w REAL;         -- the enforced power limit, W
ALTER TABLE serve_session ADD COLUMN energy_note TEXT;           -- ok, the check's findings, or why NULL
)sql";


// Version 16: the kernels of llmbench's own CUDA traces (--timer cupti; docs/schema.md, "Kernels
// of llmbench's own traces"). Each kernel, memcpy and memset CUPTI reported is an event on a
// GPU track of the case (track.type 'gpu', its device and stream), a child of the op that
// launched it (parent_id). device_op lists those instead of the ops for a case that has them,
// with the op as the launch, so the device queries read llmbench's trace as an imported one;
// a case without a GPU track (the CPU backend, event pairs) still lists its ops.
constexpr const char* kSchemaV16 = R"sql(
DROP VIEW IF EXISTS device_op;
CREATE VIEW IF NOT EXISTS device_op AS
  SELECT s.id, s.ts, s.dur, s.track_id, s.name, s.category, s.bytes, t.import_id, t.case_id,
         t.latest,
         CASE WHEN t.own AND t.type = 'gpu' THEN s.parent_id
              WHEN t.own THEN s.id
              ELSE (SELECT MIN(f.slice_out) FROM flow AS f WHERE f.slice_in = s.id) END AS launch_id
  FROM slice AS s JOIN track_scope AS t ON t.id = s.track_id
  WHERE (NOT t.own AND lower(COALESCE(s.category, ''))
                       IN ('kernel', 'gpu_memcpy', 'gpu_memset', 'memcpy', 'memset'))
     OR (t.own AND t.type = 'gpu')
     OR (t.own AND s.category IS NOT 'range'
         AND NOT EXISTS (SELECT 1 FROM track AS g WHERE g.case_id = t.case_id AND g.type = 'gpu'));
CREATE INDEX IF NOT EXISTS track_case_type ON track(case_id, type);
)sql";

// Version 17: the CPU kernels a serving session ran (issue 45): `serve` on the CPU backend
// installs the measured decode dispatch as `run` does and stores its description, as
// run.cpu_isa; NULL on other backends and in sessions stored before version 17.
constexpr const char* kSchemaV17 = R"sql(
ALTER TABLE serve_session ADD COLUMN cpu_isa TEXT;  -- avx512-bf16 | avx512 | avx2 | portable [+ decode classes off it]
)sql";

// Version 18: how a case's decode steps ran with --cuda-graphs on (issue 44): bench_case's
// cuda_graph_steps, cuda_graph_eager_steps, cuda_graph_traced_steps, cuda_graph_note and
// trace_unmatched_graph_nodes are added from the field list after this script, as version
// 15's were; NULL in the cases stored before, and in cases run with graphs off.
constexpr const char* kSchemaV18 = R"sql(
SELECT 1;  -- the columns come from the field list (schema.cpp)
)sql";

// Version 19: the element type of serve's KV pool (--kv-cache-dtype, issue 44): fp32 or fp16;
// NULL in sessions stored before. (A case's is in its variants JSON, which needs no column.)
constexpr const char* kSchemaV19 = R"sql(
ALTER TABLE serve_session ADD COLUMN kv_cache_dtype TEXT;  -- fp32 | fp16; NULL before v19
)sql";

}  // namespace

const char* schema_step_sql_from_v7(int version) {
  switch (version) {
    case 7: return kSchemaV7;
    case 8: return kSchemaV8;
    case 9: return kSchemaV9;
    case 10: return kSchemaV10;
    case 11: return kSchemaV11;
    case 12: return kSchemaV12;
    case 13: return kSchemaV13;
    case 14: return kSchemaV14;
    case 15: return kSchemaV15;
    case 16: return kSchemaV16;
    case 17: return kSchemaV17;
    case 18: return kSchemaV18;
    case 19: return kSchemaV19;
  }
  return nullptr;
}

}  // namespace llmbench
