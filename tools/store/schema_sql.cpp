// The schema's history, versions 1 to 6: one SQL script per schema version, each taking a
// database of the version before to this one (tools/store/schema.h runs them); versions 7 on
// are in schema_sql_v7.cpp. A released script never changes: a new table or column goes into
// a new version's script.
#include "tools/store/schema.h"

namespace llmbench {

namespace {


// Version 1: results (run, bench_case, bench_sample, bench_step).
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE IF NOT EXISTS run (
  id                    INTEGER PRIMARY KEY,
  started_at            TEXT NOT NULL,      -- UTC ISO 8601
  command_line          TEXT NOT NULL,
  llmbench_version      TEXT NOT NULL,
  git_commit            TEXT NOT NULL,
  build_type            TEXT NOT NULL,
  host                  TEXT NOT NULL,
  cpu                   TEXT NOT NULL,
  gpu                   TEXT NOT NULL,      -- '' without a GPU backend
  driver                TEXT NOT NULL,
  threads               INTEGER NOT NULL,
  peak_bandwidth_gbps   REAL NOT NULL,      -- the MBU denominator, GB/s
  peak_tflops           REAL NOT NULL,      -- the MFU denominator, 1e12 FLOP/s
  peak_source           TEXT NOT NULL       -- where the peaks came from
);
CREATE TABLE IF NOT EXISTS bench_case (
  id                    INTEGER PRIMARY KEY,
  run_id                INTEGER NOT NULL REFERENCES run(id),
  model                 TEXT NOT NULL,
  dtype                 TEXT NOT NULL,
  backend               TEXT NOT NULL,
  batch                 INTEGER NOT NULL,
  prompt_len            INTEGER NOT NULL,
  max_new_tokens        INTEGER NOT NULL,
  warmup                INTEGER NOT NULL,
  repeat                INTEGER NOT NULL,
  threads               INTEGER NOT NULL,
  seed                  INTEGER NOT NULL,
  distinct_prompts      INTEGER NOT NULL,
  variants              TEXT NOT NULL,      -- JSON object of engine variants
  status                TEXT NOT NULL,      -- 'ok' or 'error'
  error                 TEXT,
  ttft_ms               REAL,               -- median over repetitions
  ttft_ms_p90           REAL,
  tpot_ms_mean          REAL,               -- NULL when max_new_tokens = 1
  tpot_ms_p50           REAL,
  tpot_ms_p90           REAL,
  tpot_ms_p99           REAL,
  e2e_ms                REAL,               -- median over repetitions
  prefill_tok_s         REAL,
  decode_tok_s          REAL,
  throughput_tok_s      REAL,
  prefill_tflops        REAL,
  decode_gbps           REAL,
  mfu                   REAL,
  mbu                   REAL,
  prefill_flops         INTEGER,
  weight_bytes          INTEGER,
  kv_cache_bytes        INTEGER,
  prompt_ids            TEXT,               -- JSON [[...] per sequence]
  generated_ids         TEXT,               -- JSON [[...] per sequence]
  finished_at           TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS bench_sample (
  id                    INTEGER PRIMARY KEY,
  case_id               INTEGER NOT NULL REFERENCES bench_case(id),
  rep                   INTEGER NOT NULL,   -- 0-based measured repetition
  ttft_ns               INTEGER NOT NULL,
  e2e_ns                INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS bench_step (
  sample_id             INTEGER NOT NULL REFERENCES bench_sample(id),
  step                  INTEGER NOT NULL,   -- 1-based decode step
  kv_len                INTEGER NOT NULL,   -- positions attended in this step
  decode_ns             INTEGER NOT NULL,
  bytes                 INTEGER NOT NULL,   -- analytic bytes read (weights + KV cache)
  PRIMARY KEY (sample_id, step)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS bench_case_run ON bench_case(run_id);
CREATE INDEX IF NOT EXISTS bench_sample_case ON bench_sample(case_id);
)sql";

// Version 2: the trace tables and Perfetto-shaped views (docs/schema.md). `event` holds every
// interval (ranges and ops); ts and dur are integer ns since the run's origin.
constexpr const char* kSchemaV2 = R"sql(
ALTER TABLE bench_case ADD COLUMN trace TEXT NOT NULL DEFAULT 'off';  -- off | steps | ops
ALTER TABLE bench_case ADD COLUMN trace_overhead_ttft REAL;  -- traced TTFT / untraced median
ALTER TABLE bench_case ADD COLUMN trace_overhead_tpot REAL;  -- traced TPOT / untraced mean
CREATE TABLE IF NOT EXISTS process (
  upid                  INTEGER PRIMARY KEY,
  pid                   INTEGER,
  name                  TEXT,
  run_id                INTEGER REFERENCES run(id)
);
CREATE TABLE IF NOT EXISTS thread (
  utid                  INTEGER PRIMARY KEY,
  tid                   INTEGER,
  name                  TEXT,
  upid                  INTEGER REFERENCES process(upid)
);
CREATE TABLE IF NOT EXISTS track (
  id                    INTEGER PRIMARY KEY,
  name                  TEXT,
  type                  TEXT NOT NULL,      -- 'thread' (host), 'process', 'gpu' (device stream)
  utid                  INTEGER REFERENCES thread(utid),
  upid                  INTEGER REFERENCES process(upid),
  case_id               INTEGER REFERENCES bench_case(id)
);
CREATE TABLE IF NOT EXISTS event (
  id                    INTEGER PRIMARY KEY,
  ts                    INTEGER NOT NULL,   -- ns since the run's origin
  dur                   INTEGER NOT NULL,   -- ns
  track_id              INTEGER NOT NULL REFERENCES track(id),
  category              TEXT,               -- gemm attention norm elementwise copy transfer sample range
  name                  TEXT NOT NULL,
  depth                 INTEGER NOT NULL,   -- 0 for top-level ranges
  parent_id             INTEGER,            -- the enclosing event (NULL at depth 0)
  arg_set_id            INTEGER,
  case_id               INTEGER,
  rep                   INTEGER,            -- traced repetition, 0-based
  phase                 TEXT,               -- 'prefill' | 'decode'
  step                  INTEGER,            -- 0 prefill, 1.. decode steps
  layer                 INTEGER,            -- NULL outside decoder layers
  flops                 INTEGER,            -- analytic
  bytes                 INTEGER,            -- analytic, read + written
  enqueue_ts            INTEGER,            -- host time the op was issued, ns since origin
  correlation_id        INTEGER
);
CREATE TABLE IF NOT EXISTS arg (
  arg_set_id            INTEGER NOT NULL,
  flat_key              TEXT NOT NULL,
  key                   TEXT NOT NULL,
  int_value             INTEGER,
  string_value          TEXT,
  real_value            REAL,
  value_type            TEXT NOT NULL       -- 'int' | 'string' | 'real'
);
CREATE TABLE IF NOT EXISTS flow (
  id                    INTEGER PRIMARY KEY,
  slice_out             INTEGER NOT NULL REFERENCES event(id),
  slice_in              INTEGER NOT NULL REFERENCES event(id),
  arg_set_id            INTEGER
);
CREATE INDEX IF NOT EXISTS event_track_ts ON event(track_id, ts);
CREATE INDEX IF NOT EXISTS event_ts ON event(ts);
CREATE INDEX IF NOT EXISTS event_name_ts ON event(name, ts);
CREATE INDEX IF NOT EXISTS event_case ON event(case_id, phase, step);
CREATE INDEX IF NOT EXISTS event_parent ON event(parent_id);
CREATE INDEX IF NOT EXISTS arg_set ON arg(arg_set_id);
CREATE INDEX IF NOT EXISTS track_case ON track(case_id);
CREATE VIEW IF NOT EXISTS slice AS
  SELECT id, ts, dur, track_id, category, category AS cat, name, depth, parent_id, arg_set_id,
         case_id, rep, phase, step, layer, flops, bytes, enqueue_ts, correlation_id
  FROM event;
CREATE VIEW IF NOT EXISTS slices AS SELECT * FROM slice;
CREATE VIEW IF NOT EXISTS args AS
  SELECT arg_set_id, flat_key, key, int_value, string_value, real_value, value_type FROM arg;
CREATE VIEW IF NOT EXISTS thread_track AS
  SELECT id, name, type, utid FROM track WHERE type = 'thread';
CREATE VIEW IF NOT EXISTS process_track AS
  SELECT id, name, type, upid FROM track WHERE type = 'process';
CREATE VIEW IF NOT EXISTS trace_bounds AS
  SELECT COALESCE(MIN(ts), 0) AS start_ts, COALESCE(MAX(ts + dur), 0) AS end_ts FROM event;
)sql";

// Version 3: sweeps that survive interruption (docs/schema.md). A run records the plan it
// executes (plan_key: a hash of its cases' keys and shard) and its state, so `--resume`
// finds it again; each case records its place in the plan and its configuration key, so a
// resumed run skips what is stored. ttft_ms_p99 serves the SLO report.
constexpr const char* kSchemaV3 = R"sql(
ALTER TABLE run ADD COLUMN status TEXT NOT NULL DEFAULT 'complete';  -- running | complete | interrupted
ALTER TABLE run ADD COLUMN finished_at TEXT;            -- UTC ISO 8601; NULL while running
ALTER TABLE run ADD COLUMN plan_key TEXT;               -- hash of the case keys and the shard
ALTER TABLE run ADD COLUMN n_cases INTEGER;             -- cases in the plan (this shard)
ALTER TABLE run ADD COLUMN profile TEXT;                -- --config / sweep profile, '' if none
ALTER TABLE run ADD COLUMN shard TEXT;                  -- 'K/N', '' when not sharded
ALTER TABLE bench_case ADD COLUMN case_index INTEGER;   -- 0-based place in the unsharded plan
ALTER TABLE bench_case ADD COLUMN case_key TEXT;        -- the case's configuration (resume)
ALTER TABLE bench_case ADD COLUMN ttft_ms_p99 REAL;
CREATE INDEX IF NOT EXISTS bench_case_key ON bench_case(run_id, case_key);
)sql";

// Version 4: imported traces (docs/import.md). An `import` row per imported file; processes and
// tracks of an import point at it; GPU stream tracks say their device and stream; counter
// events (Chrome "C") get Perfetto's `counter` table. thread_track now lists every track that
// belongs to a thread (Chrome imports put GPU streams on threads, as trace processor does).
// Assumes only the version-2 schema.
constexpr const char* kSchemaV4 = R"sql(
CREATE TABLE IF NOT EXISTS import (
  id                    INTEGER PRIMARY KEY,
  format                TEXT NOT NULL,      -- 'nsys' | 'chrome'
  source_path           TEXT NOT NULL,      -- absolute path of the imported file
  source_bytes          INTEGER NOT NULL,
  source_version        TEXT,               -- nsys EXPORT_SCHEMA_VERSION; chrome schemaVersion or 'array'
  imported_at           TEXT NOT NULL,      -- UTC ISO 8601
  command_line          TEXT NOT NULL,
  processes             INTEGER NOT NULL,
  threads               INTEGER NOT NULL,
  tracks                INTEGER NOT NULL,
  events                INTEGER NOT NULL,
  flows                 INTEGER NOT NULL,
  counters              INTEGER NOT NULL,
  skipped               TEXT NOT NULL,      -- JSON object: reason -> input records left out
  notes                 TEXT NOT NULL,      -- JSON object: what was adjusted without loss -> count
  metadata              TEXT NOT NULL       -- JSON object: the source's own metadata
);
ALTER TABLE process ADD COLUMN import_id INTEGER REFERENCES import(id);
ALTER TABLE track ADD COLUMN import_id INTEGER REFERENCES import(id);
ALTER TABLE track ADD COLUMN device_id INTEGER;   -- GPU tracks: CUDA device
ALTER TABLE track ADD COLUMN stream_id INTEGER;   -- GPU tracks: CUDA stream
CREATE TABLE IF NOT EXISTS counter (
  id                    INTEGER PRIMARY KEY,
  ts                    INTEGER NOT NULL,   -- ns
  track_id              INTEGER NOT NULL REFERENCES track(id),
  value                 REAL NOT NULL,
  arg_set_id            INTEGER
);
CREATE INDEX IF NOT EXISTS counter_track_ts ON counter(track_id, ts);
CREATE INDEX IF NOT EXISTS track_import ON track(import_id);
CREATE INDEX IF NOT EXISTS event_correlation ON event(correlation_id)
  WHERE correlation_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS flow_in ON flow(slice_in);
CREATE INDEX IF NOT EXISTS flow_out ON flow(slice_out);
DROP VIEW IF EXISTS thread_track;
CREATE VIEW thread_track AS
  SELECT id, name, type, utid FROM track WHERE utid IS NOT NULL;
CREATE VIEW IF NOT EXISTS gpu_track AS
  SELECT id, name, type, upid, utid, device_id, stream_id FROM track WHERE type = 'gpu';
CREATE VIEW IF NOT EXISTS counter_track AS
  SELECT id, name, type, upid FROM track WHERE type = 'counter';
CREATE VIEW IF NOT EXISTS process_counter_track AS
  SELECT id, name, type, upid FROM track WHERE type = 'counter' AND upid IS NOT NULL;
CREATE VIEW IF NOT EXISTS counters AS SELECT * FROM counter;
)sql";

// Version 5: one name per metric, with its statistic and unit (tools/store/result_fields.h):
// the medians are renamed, and every bench_case column of the field list that is missing is
// added (ttft_ms_p10, ttft_ms_mean, tpot_ms_p10, e2e_ms_p90, ...; run_schema_step does that
// after this script). A later field needs only its field-list entry: every open adds the
// columns a database lacks (schema.h).
// Shards of one sweep share sweep_key (the plan key of the unsharded plan); `merge` gives the
// shards of one sweep one run_group (the smallest of their run ids), and queries and compare
// read a run group as one run. NULL run_group: the run is its own group.
constexpr const char* kSchemaV5 = R"sql(
ALTER TABLE bench_case RENAME COLUMN ttft_ms TO ttft_ms_p50;
ALTER TABLE bench_case RENAME COLUMN e2e_ms TO e2e_ms_p50;
ALTER TABLE run ADD COLUMN sweep_key TEXT;         -- plan key of the whole (unsharded) sweep
ALTER TABLE run ADD COLUMN run_group INTEGER;      -- merged shards: the group's first run id
)sql";

// Version 6: serving benchmarks (`llmbench load`, docs/schema.md "Serving benchmark tables"). One
// load_run per invocation, one load_level per level of its sweep (written with its requests and
// chunks in one transaction), one load_request per measured request, one load_chunk per
// streamed chunk that carried output. Times are integer ns since the level's origin
// (steady_clock at the level's start); load_level.started_unix_ns anchors them to the wall clock.
constexpr const char* kSchemaV6 = R"sql(
CREATE TABLE IF NOT EXISTS load_run (
  id                    INTEGER PRIMARY KEY,
  started_at            TEXT NOT NULL,      -- UTC ISO 8601
  finished_at           TEXT,               -- NULL while running
  status                TEXT NOT NULL,      -- running | complete | interrupted
  command_line          TEXT NOT NULL,
  llmbench_version      TEXT NOT NULL,
  git_commit            TEXT NOT NULL,
  build_type            TEXT NOT NULL,
  host                  TEXT NOT NULL,
  cpu                   TEXT NOT NULL,
  label                 TEXT NOT NULL,      -- --label (default: the model): the serving table's row
  url                   TEXT NOT NULL,      -- the endpoint requested
  endpoint              TEXT NOT NULL,      -- completions | chat
  model                 TEXT NOT NULL,
  server_cmd            TEXT NOT NULL,      -- --server-cmd as run, '' when none
  prompt_kind           TEXT NOT NULL,      -- token_ids | text
  mode                  TEXT NOT NULL,      -- concurrency | rate
  seed                  INTEGER NOT NULL,
  num_requests          INTEGER NOT NULL,   -- per level (a cap when duration_s is set)
  duration_s            REAL,               -- per-level time limit, NULL when none
  input_len_stddev      REAL NOT NULL,
  output_len_stddev     REAL NOT NULL,
  ignore_eos            INTEGER NOT NULL,   -- 1: requests asked for ignore_eos
  warmup_requests       INTEGER NOT NULL,   -- per level, not stored
  goodput               TEXT NOT NULL,      -- 'ttft:MS,tpot:MS,e2el:MS' as given, '' when none
  connect_timeout_s     REAL NOT NULL,
  first_byte_timeout_s  REAL NOT NULL,
  idle_timeout_s        REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS load_level (
  id                    INTEGER PRIMARY KEY,
  load_run_id           INTEGER NOT NULL REFERENCES load_run(id),
  level_index           INTEGER NOT NULL,   -- 0-based place in the sweep
  level                 TEXT NOT NULL,      -- 'c4 in128 out128', 'r8 b1 in128 out128'
  concurrency           INTEGER,            -- concurrency levels; NULL for rate levels
  request_rate          REAL,               -- rate levels, requests/s (Inf: all at once)
  burstiness            REAL,               -- rate levels: gamma shape (1: Poisson)
  max_in_flight         INTEGER,            -- rate levels: the cap, NULL when none
  input_len             INTEGER NOT NULL,   -- mean prompt tokens asked for
  output_len            INTEGER NOT NULL,   -- mean max_tokens asked for
  started_unix_ns       INTEGER NOT NULL,   -- wall clock at the level's origin
  duration_ns           INTEGER NOT NULL,   -- earliest send to latest end
  requests              INTEGER NOT NULL,
  ok                    INTEGER NOT NULL,
  failed                INTEGER NOT NULL,
  finished_at           TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS load_request (
  id                    INTEGER PRIMARY KEY,
  level_id              INTEGER NOT NULL REFERENCES load_level(id),
  request_index         INTEGER NOT NULL,   -- 0-based, in start order
  status                TEXT NOT NULL,      -- ok | error
  error                 TEXT,               -- why it failed
  http_status           INTEGER,            -- NULL: no response
  input_len             INTEGER NOT NULL,   -- prompt tokens sent (or aimed at, text prompts)
  max_tokens            INTEGER NOT NULL,
  prompt_tokens         INTEGER,            -- usage, when the server reported it
  completion_tokens     INTEGER,            -- usage, when the server reported it
  output_tokens         INTEGER NOT NULL,   -- completion_tokens, else the chunks' tokens
  chunks                INTEGER NOT NULL,   -- chunks that carried output
  finish_reason         TEXT,
  scheduled_ns          INTEGER,            -- rate levels: drawn arrival offset
  send_ns               INTEGER NOT NULL,
  first_byte_ns         INTEGER,
  first_token_ns        INTEGER,
  end_ns                INTEGER NOT NULL,
  ttft_ns               INTEGER,            -- first_token_ns - send_ns (ok requests)
  tpot_ns               REAL,               -- (e2el - ttft) / (output_tokens - 1)
  e2el_ns               INTEGER             -- end_ns - send_ns (ok requests)
);
CREATE TABLE IF NOT EXISTS load_chunk (
  request_id            INTEGER NOT NULL REFERENCES load_request(id),
  idx                   INTEGER NOT NULL,   -- 0-based among the request's output chunks
  arrival_ns            INTEGER NOT NULL,   -- since the level's origin
  itl_ns                INTEGER,            -- arrival - previous chunk's arrival; NULL for idx 0
  tokens                INTEGER NOT NULL,
  PRIMARY KEY (request_id, idx)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS load_level_run ON load_level(load_run_id);
CREATE INDEX IF NOT EXISTS load_request_level ON load_request(level_id);
)sql";

}  // namespace

const char* schema_step_sql(int version) {
  switch (version) {
    case 1: return kSchemaV1;
    case 2: return kSchemaV2;
    case 3: return kSchemaV3;
    case 4: return kSchemaV4;
    case 5: return kSchemaV5;
    case 6: return kSchemaV6;
  }
  return schema_step_sql_from_v7(version);
}

}  // namespace llmbench
