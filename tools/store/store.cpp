// Result store schema and writer (see store.h and docs/schema.md).
#include "tools/store/store.h"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include "kernels/common/error.h"
#include "tools/store/case_key.h"
#include "tools/store/event_writer.h"
#include "tools/store/result_fields.h"
#include "tools/store/variants_json.h"

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

// Per-sequence rows of a flat [batch, len] array; a ragged case's rows have their own lengths.
std::string rows_json(const std::vector<std::int32_t>& flat, int batch,
                      const std::vector<int>& lens) {
  nlohmann::json j = nlohmann::json::array();
  if (!lens.empty()) {
    std::size_t at = 0;
    for (int n : lens) {
      j.push_back(std::vector<std::int32_t>(flat.begin() + std::ptrdiff_t(at),
                                            flat.begin() + std::ptrdiff_t(at + std::size_t(n))));
      at += std::size_t(n);
    }
    return j.dump();
  }
  const std::size_t per = batch > 0 ? flat.size() / std::size_t(batch) : 0;
  for (int b = 0; b < batch; ++b)
    j.push_back(std::vector<std::int32_t>(flat.begin() + b * per, flat.begin() + (b + 1) * per));
  return j.dump();
}

}  // namespace

namespace {

// Tables llmbench creates. A database at user_version 0 that already holds one of them
// belongs to another program: it is refused before anything is written to it.
constexpr const char* kOwnTables[] = {"run", "bench_case", "bench_sample", "bench_step",
                                      "process", "thread", "track", "event", "arg", "flow",
                                      "import", "counter", "load_run", "load_level",
                                      "load_request", "load_chunk"};

// Version 5: one name per metric, with its statistic and unit (tools/store/result_fields.h):
// the medians are renamed, and every bench_case column of the field list that is missing is
// added (ttft_ms_p10, ttft_ms_mean, tpot_ms_p10, e2e_ms_p90, ...). Future fields need only a
// field-list entry and a new version that runs add_missing_result_columns again.
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
// added from the field list). NULL: not measured (older runs; int8/int4 on CUDA).
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

void add_missing_result_columns(Db& db) {
  std::set<std::string> have;
  auto cols = db.prepare("SELECT name FROM pragma_table_info('bench_case')");
  while (cols.step()) have.insert(cols.column_text(0));
  for (const ResultField& f : result_fields()) {
    if (!(f.outputs & kDb) || have.count(std::string(f.name))) continue;
    db.exec("ALTER TABLE bench_case ADD COLUMN " + std::string(f.name) + " " +
            std::string(sql_type(f.type)));
  }
}

std::optional<double> gemm_peak(const Peaks& p, DType d) {
  const auto it = p.gemm_tflops.find(d);
  return it == p.gemm_tflops.end() ? std::nullopt : std::optional<double>(it->second);
}

}  // namespace

void create_schema_version(Db& db, int version) {
  LLMBENCH_CHECK(version >= 1 && version <= kSchemaVersion, "no such schema version");
  transaction(db, [&] {
    db.exec(kSchemaV1);
    if (version >= 2) db.exec(kSchemaV2);
    if (version >= 3) db.exec(kSchemaV3);
    if (version >= 4) db.exec(kSchemaV4);
    if (version >= 5) {
      db.exec(kSchemaV5);
      add_missing_result_columns(db);
    }
    if (version >= 6) db.exec(kSchemaV6);
    if (version >= 7) db.exec(kSchemaV7);
    if (version >= 8) {
      db.exec(kSchemaV8);
      add_missing_result_columns(db);
    }
    if (version >= 9) db.exec(kSchemaV9);
    db.exec("PRAGMA user_version = " + std::to_string(version));
  });
}

ResultStore::ResultStore(const std::string& path) : setup_lock_(path), db_(path, /*create=*/true) {
  // Of two llmbench processes opening a new database together, one creates the schema and sets
  // WAL while the other waits on the set-up lock (setup_lock.h), then finds it done. Schema
  // creation and migration are also one exclusive transaction (BEGIN IMMEDIATE waits on the
  // busy timeout for a concurrent writer), and the version is read again inside it. Nothing is
  // written before the database is recognised as llmbench's (or empty).
  const auto foreign = [&](int version) {
    if (version != 0) return false;
    for (const char* t : kOwnTables)
      if (db_.prepare("SELECT 1 FROM sqlite_master WHERE name = '" + std::string(t) + "'").step())
        return true;
    return false;
  };
  int version = db_.user_version();
  if (version > kSchemaVersion)
    throw BadInput("database '" + path + "' has schema version " + std::to_string(version) +
                   "; this llmbench understands up to " + std::to_string(kSchemaVersion));
  if (foreign(version))
    throw BadInput("database '" + path + "' is not an llmbench database (it has tables named "
                   "like llmbench's but schema version 0); use another --db");
  if (version < kSchemaVersion) {
    transaction(db_, [&] {
      version = db_.user_version();
      if (foreign(version))
        throw BadInput("database '" + path + "' is not an llmbench database; use another --db");
      // Migrations, oldest first.
      if (version < 1) db_.exec(kSchemaV1);
      if (version < 2) db_.exec(kSchemaV2);
      if (version < 3) db_.exec(kSchemaV3);
      if (version < 4) db_.exec(kSchemaV4);
      if (version < 5) {
        db_.exec(kSchemaV5);
        add_missing_result_columns(db_);
      }
      if (version < 6) db_.exec(kSchemaV6);
      if (version < 7) db_.exec(kSchemaV7);
      if (version < 8) {
        db_.exec(kSchemaV8);
        add_missing_result_columns(db_);
      }
      if (version < 9) db_.exec(kSchemaV9);
      db_.exec("PRAGMA user_version = " + std::to_string(kSchemaVersion));
    });
  }
  // WAL is set after the schema: a foreign or newer database is never switched. journal_mode
  // is persistent, so only the first opener changes it; the others see "wal" already.
  db_.exec("PRAGMA journal_mode=WAL");
  db_.exec("PRAGMA synchronous=NORMAL");
  db_.exec("PRAGMA foreign_keys=ON");
  setup_lock_.release();
}

std::int64_t ResultStore::begin_run(const RunInfo& r) {
  std::int64_t id = 0;
  transaction(db_, [&] {
    db_.prepare(
           "INSERT INTO run (started_at, command_line, llmbench_version, git_commit, build_type,"
           " host, cpu, gpu, driver, threads, peak_bandwidth_gbps, peak_tflops, peak_source,"
           " status, plan_key, n_cases, profile, shard, sweep_key, peak_fp32_tflops,"
           " peak_bf16_tflops, peak_fp16_tflops, peak_int8_tflops, peak_int4_tflops)"
           " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,'running',?,?,?,?,?,?,?,?,?,?)")
        .bind(1, r.started_at).bind(2, r.command_line).bind(3, r.version)
        .bind(4, r.git_commit).bind(5, r.build_type).bind(6, r.host).bind(7, r.cpu)
        .bind(8, r.gpu).bind(9, r.driver).bind(10, r.threads)
        .bind(11, r.peaks.bandwidth_gbps).bind(12, r.peaks.tflops).bind(13, r.peaks.source)
        .bind(14, r.plan_key).bind(15, r.n_cases).bind(16, r.profile).bind(17, r.shard)
        .bind(18, r.sweep_key)
        .bind(19, gemm_peak(r.peaks, DType::kFp32)).bind(20, gemm_peak(r.peaks, DType::kBf16))
        .bind(21, gemm_peak(r.peaks, DType::kFp16)).bind(22, gemm_peak(r.peaks, DType::kInt8))
        .bind(23, gemm_peak(r.peaks, DType::kInt4))
        .run();
    id = db_.last_insert_id();
    // The trace's process and (host) thread: Perfetto's model, one process per run.
    db_.prepare("INSERT INTO process (pid, name, run_id) VALUES (?, ?, ?)")
        .bind(1, std::int64_t(getpid())).bind(2, "llmbench run " + std::to_string(id)).bind(3, id)
        .run();
    const std::int64_t upid = db_.last_insert_id();
    db_.prepare("INSERT INTO thread (tid, name, upid) VALUES (?, 'llmbench', ?)")
        .bind(1, std::int64_t(gettid())).bind(2, upid).run();
  });
  return id;
}

void ResultStore::finish_run(std::int64_t run_id, const std::string& status) {
  db_.prepare("UPDATE run SET status = ?, finished_at = ? WHERE id = ?")
      .bind(1, status).bind(2, utc_now_iso8601()).bind(3, run_id).run();
}

void ResultStore::set_run_status(std::int64_t run_id, const std::string& status) {
  db_.prepare("UPDATE run SET status = ?, finished_at = NULL WHERE id = ?")
      .bind(1, status).bind(2, run_id).run();
}

Peaks ResultStore::run_peaks(std::int64_t run_id) { return run_info(run_id).peaks; }

RunInfo ResultStore::run_info(std::int64_t run_id) {
  auto r = read_run_info(db_, run_id);
  if (!r) throw Error("run " + std::to_string(run_id) + " is not in the database");
  return *r;
}

std::optional<std::int64_t> ResultStore::find_run(const std::string& plan_key) {
  auto q = db_.prepare("SELECT id FROM run WHERE plan_key = ? ORDER BY id DESC LIMIT 1");
  q.bind(1, plan_key);
  if (!q.step()) return std::nullopt;
  return q.column_int(0);
}

std::set<std::string> ResultStore::stored_case_keys(std::int64_t run_id) {
  std::set<std::string> keys;
  auto q = db_.prepare("SELECT case_key FROM bench_case WHERE run_id = ? AND case_key IS NOT NULL");
  q.bind(1, run_id);
  while (q.step()) keys.insert(q.column_text(0));
  return keys;
}

std::int64_t ResultStore::add_case(std::int64_t run_id, const CaseResult& c, int case_index) {
  const CaseSpec& s = c.spec;
  const bool ok = c.status == "ok";
  std::int64_t case_id = 0;
  transaction(db_, [&] {
    // Columns: the run, the field list's database fields (values by name, never by position),
    // then what only the store knows.
    std::string cols = "run_id", marks = "?";
    std::vector<FieldValue> values;
    for (const ResultField& f : result_fields()) {
      if (!(f.outputs & kDb)) continue;
      cols += ", " + std::string(f.name);
      marks += ",?";
      values.push_back(field_value(f, c, FieldSink::kDb));
    }
    cols += ", prompt_ids, generated_ids, finished_at, case_index, case_key";
    marks += ",?,?,?,?,?";
    auto ins = db_.prepare("INSERT INTO bench_case (" + cols + ") VALUES (" + marks + ")");
    int i = 1;
    ins.bind(i++, run_id);
    for (const FieldValue& v : values) {
      if (const auto* x = std::get_if<std::int64_t>(&v)) ins.bind(i, *x);
      else if (const auto* d = std::get_if<double>(&v)) ins.bind(i, *d);
      else if (const auto* t = std::get_if<std::string>(&v)) ins.bind(i, *t);
      else ins.bind_null(i);
      ++i;
    }
    if (ok) {
      ins.bind(i, rows_json(c.prompt_ids, s.batch, c.prompt_lens));
      ins.bind(i + 1, nlohmann::json(c.generated).dump());
    } else {
      ins.bind_null(i).bind_null(i + 1);
    }
    ins.bind(i + 2, utc_now_iso8601());
    if (case_index >= 0) ins.bind(i + 3, case_index); else ins.bind_null(i + 3);
    ins.bind(i + 4, case_key(s));
    ins.run();
    case_id = db_.last_insert_id();
    if (!c.trace.empty()) write_trace(run_id, case_id, c);

    auto sample = db_.prepare(
        "INSERT INTO bench_sample (case_id, rep, ttft_ns, e2e_ns) VALUES (?,?,?,?)");
    auto step = db_.prepare(
        "INSERT INTO bench_step (sample_id, step, kv_len, decode_ns, bytes) VALUES (?,?,?,?,?)");
    // Positions each sequence attends in decode step k (1-based): prompt_len + k; in a ragged
    // case the mean, rounded, over the sequences the step advanced.
    auto kv_len = [&](int k) -> std::int64_t {
      if (c.prompt_lens.empty()) return s.prompt_len + k;
      std::int64_t sum = 0, rows = 0;
      for (std::size_t q = 0; q < c.prompt_lens.size() && q < c.generated.size(); ++q)
        if (int(c.generated[q].size()) > k) {
          sum += c.prompt_lens[q] + k;
          ++rows;
        }
      return rows > 0 ? (sum + rows / 2) / rows : 0;
    };
    for (std::size_t i = 0; i < c.samples.size(); ++i) {
      const RepSample& r = c.samples[i];
      sample.bind(1, case_id).bind(2, int(i)).bind(3, r.ttft_ns).bind(4, r.e2e_ns()).run();
      const std::int64_t sample_id = db_.last_insert_id();
      for (std::size_t k = 0; k < r.decode_ns.size(); ++k)
        step.bind(1, sample_id).bind(2, int(k + 1)).bind(3, kv_len(int(k) + 1))
            .bind(4, r.decode_ns[k]).bind(5, c.cost.decode_bytes[k]).run();
    }
  });
  return case_id;
}

void ResultStore::write_trace(std::int64_t run_id, std::int64_t case_id, const CaseResult& c) {
  auto who = db_.prepare(
      "SELECT t.utid, p.upid FROM thread t JOIN process p USING (upid) WHERE p.run_id = ?");
  who.bind(1, run_id);
  if (!who.step()) throw Error("trace: run " + std::to_string(run_id) + " has no process row");
  const std::int64_t utid = who.column_int(0), upid = who.column_int(1);
  db_.prepare("INSERT INTO track (name, type, utid, upid, case_id) VALUES (?, 'thread', ?, ?, ?)")
      .bind(1, c.spec.label() + " (" + c.spec.backend + ")").bind(2, utid).bind(3, upid)
      .bind(4, case_id).run();
  const std::int64_t track_id = db_.last_insert_id();

  EventWriter events(db_);
  // Records come in begin order, so a parent's event id is known before its children's.
  std::vector<std::int64_t> ids(c.trace.size());
  for (std::size_t i = 0; i < c.trace.size(); ++i) {
    const OpRecord& r = c.trace[i];
    EventRow row;
    row.ts = r.start_ns;
    row.dur = r.dur_ns;
    row.track_id = track_id;
    row.category = std::string(category_name(r.category));
    row.name = std::string(r.name);
    row.depth = r.depth;
    if (r.parent >= 0) row.parent_id = ids[std::size_t(r.parent)];
    row.case_id = case_id;
    row.rep = 0;
    row.phase = std::string(phase_name(r.phase));
    row.step = r.step;
    if (r.layer >= 0) row.layer = r.layer;
    if (r.category != OpCategory::kRange) {
      row.flops = r.flops;
      row.bytes = r.bytes;
    }
    row.enqueue_ts = r.enqueue_ns;
    ids[i] = events.write(row);
  }
}

}  // namespace llmbench
