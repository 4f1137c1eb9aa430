// The one schema (tools/store/schema.h): every open brings a database to the current schema,
// adding the tables and columns it lacks whatever its version says; databases of `serve --db`
// and of the gate from before version 10 (their tables at version 0) migrate; a foreign or a
// newer database is refused; and a read-only open writes nothing beside the file, while still
// reading what a live writer has committed to its -wal file.
#include <gtest/gtest.h>

#include <filesystem>
#include <vector>
#include <set>
#include <string>

#include "kernels/common/error.h"
#include "tools/store/result_fields.h"
#include "tools/store/schema.h"
#include "tools/store/store.h"

namespace llmbench {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::path(LLMBENCH_TEST_SCRATCH) / "store" / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::set<std::string> files_in(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename());
  return out;
}

TEST(Schema, EveryOpenAddsWhatTheDatabaseLacks) {
  const fs::path db = fresh_dir("every_open") / "x.db";
  { ResultStore s(db.string()); }
  {
    // A database of the current version that lacks a column, a field-list column and a table.
    Db d(db.string(), Db::Mode::kReadWrite);
    d.exec("ALTER TABLE serve_request DROP COLUMN finished_ns");
    d.exec("ALTER TABLE bench_case DROP COLUMN tpot_ms_p99");
    d.exec("DROP TABLE gate_result");
    d.exec("DROP VIEW device_op");
    EXPECT_EQ(d.user_version(), kSchemaVersion);
    EXPECT_FALSE(d.has_column("serve_request", "finished_ns"));
  }
  ResultStore s(db.string());
  EXPECT_TRUE(s.db().has_column("serve_request", "finished_ns"));
  EXPECT_TRUE(s.db().has_column("bench_case", "tpot_ms_p99"));
  EXPECT_TRUE(s.db().has_table("gate_result"));
  EXPECT_TRUE(s.db().has_table("device_op"));
}

TEST(Schema, EveryVersionMigratesToTheSameTables) {
  const fs::path dir = fresh_dir("versions");
  std::vector<std::string> current;
  {
    ResultStore s((dir / "new.db").string());
    auto q = s.db().prepare("SELECT type || ' ' || name FROM sqlite_schema ORDER BY 1");
    while (q.step()) current.push_back(q.column_text(0));
  }
  for (int v = 1; v < kSchemaVersion; ++v) {
    SCOPED_TRACE("version " + std::to_string(v));
    const fs::path p = dir / ("v" + std::to_string(v) + ".db");
    {
      Db d(p.string(), Db::Mode::kCreate);
      create_schema_version(d, v);
    }
    ResultStore s(p.string());
    EXPECT_EQ(s.db().user_version(), kSchemaVersion);
    std::vector<std::string> got;
    auto q = s.db().prepare("SELECT type || ' ' || name FROM sqlite_schema ORDER BY 1");
    while (q.step()) got.push_back(q.column_text(0));
    EXPECT_EQ(got, current);
    for (const std::string& t : {"bench_case", "run", "serve_request", "load_request", "gate"})
      EXPECT_EQ(s.db().columns(t).size(),
                Db((dir / "new.db").string(), Db::Mode::kReadOnly).columns(t).size())
          << t;
  }
}

TEST(Schema, ServingAndGateDatabasesFromBeforeVersion9Migrate) {
  const fs::path dir = fresh_dir("old_serving");
  const fs::path db = dir / "serve.db";
  {
    // What `serve --db` wrote before version 10: its tables, user_version 0, and a row.
    Db d(db.string(), Db::Mode::kCreate);
    d.exec("CREATE TABLE serve_session (id INTEGER PRIMARY KEY, started_unix_ns INTEGER NOT NULL,"
           " command_line TEXT, model TEXT, dtype TEXT, backend TEXT, device TEXT,"
           " max_num_seqs INTEGER, max_num_batched_tokens INTEGER, chunked_prefill INTEGER,"
           " kv_block_size INTEGER, kv_blocks INTEGER);"
           "INSERT INTO serve_session (started_unix_ns, model) VALUES (1, 'tiny');");
  }
  ResultStore s(db.string());
  EXPECT_EQ(s.db().user_version(), kSchemaVersion);
  auto q = s.db().prepare("SELECT model FROM serve_session");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.column_text(0), "tiny");
  EXPECT_TRUE(s.db().has_table("run"));
  EXPECT_TRUE(s.db().has_table("gate_sample"));
}

// Version 15 (energy per phase): a version-14 database (its bench_case without the energy
// columns, which the field list would otherwise give every version from 5 on) gains bench_case's
// energy columns and serve_session's, NULL in the rows it had.
TEST(Schema, Version14GainsEnergyColumnsNullInOldRows) {
  const fs::path db = fresh_dir("v14_energy") / "v14.db";
  const char* kCaseColumns[] = {"prefill_j_per_token", "decode_j_per_token", "prefill_w",
                                "decode_w", "prefill_energy_j", "decode_energy_j",
                                "prefill_energy_ms", "decode_energy_ms", "energy_update_ms",
                                "idle_w", "power_limit_w", "energy_check"};
  {
    Db d(db.string(), Db::Mode::kCreate);
    create_schema_version(d, 14);
    for (const char* c : kCaseColumns)
      d.exec(std::string("ALTER TABLE bench_case DROP COLUMN ") + c);
    d.exec("INSERT INTO serve_session (started_unix_ns, model) VALUES (1, 'tiny')");
    EXPECT_FALSE(d.has_column("serve_session", "j_per_output_token"));
    EXPECT_EQ(d.user_version(), 14);
  }
  ResultStore s(db.string());
  EXPECT_EQ(s.db().user_version(), kSchemaVersion);
  for (const char* c : kCaseColumns) EXPECT_TRUE(s.db().has_column("bench_case", c)) << c;
  auto q = s.db().prepare("SELECT model, energy_j, j_per_output_token, energy_note FROM serve_session");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.column_text(0), "tiny");
  EXPECT_TRUE(q.column_is_null(1));
  EXPECT_TRUE(q.column_is_null(2));
  EXPECT_TRUE(q.column_is_null(3));
}

// Version 17 (the CPU kernels a serving session ran): a version-16 database's serve_session gains
// cpu_isa, NULL in the sessions it had.
TEST(Schema, Version16ServeSessionGainsCpuIsaNullInOldRows) {
  const fs::path db = fresh_dir("v16_cpu_isa") / "v16.db";
  {
    Db d(db.string(), Db::Mode::kCreate);
    create_schema_version(d, 16);
    d.exec("INSERT INTO serve_session (started_unix_ns, model) VALUES (1, 'tiny')");
    EXPECT_FALSE(d.has_column("serve_session", "cpu_isa"));
  }
  ResultStore s(db.string());
  EXPECT_EQ(s.db().user_version(), kSchemaVersion);
  auto q = s.db().prepare("SELECT model, cpu_isa FROM serve_session");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.column_text(0), "tiny");
  EXPECT_TRUE(q.column_is_null(1));
}

// Version 19 (the KV pool's element type, --kv-cache-dtype): a version-18 database's
// serve_session gains kv_cache_dtype, NULL in the sessions it had.
TEST(Schema, Version18ServeSessionGainsKvCacheDtypeNullInOldRows) {
  const fs::path db = fresh_dir("v18_kv_dtype") / "v18.db";
  {
    Db d(db.string(), Db::Mode::kCreate);
    create_schema_version(d, 18);
    d.exec("INSERT INTO serve_session (started_unix_ns, model) VALUES (1, 'tiny')");
    EXPECT_FALSE(d.has_column("serve_session", "kv_cache_dtype"));
  }
  ResultStore s(db.string());
  EXPECT_EQ(s.db().user_version(), kSchemaVersion);
  auto q = s.db().prepare("SELECT model, kv_cache_dtype FROM serve_session");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.column_text(0), "tiny");
  EXPECT_TRUE(q.column_is_null(1));
}

// Version 18 (how the decode steps ran with --cuda-graphs on): a version-17 database (its
// bench_case without the columns, which the field list would otherwise give every version from
// 5 on) gains them, NULL in the cases it had.
TEST(Schema, Version17GainsCudaGraphColumnsNullInOldRows) {
  const fs::path db = fresh_dir("v17_graphs") / "v17.db";
  const char* kColumns[] = {"cuda_graph_steps", "cuda_graph_eager_steps",
                            "cuda_graph_traced_steps", "cuda_graph_note",
                            "trace_unmatched_graph_nodes"};
  {
    Db d(db.string(), Db::Mode::kCreate);
    create_schema_version(d, 17);
    for (const char* c : kColumns) d.exec(std::string("ALTER TABLE bench_case DROP COLUMN ") + c);
    d.exec("PRAGMA foreign_keys=OFF");
    d.exec("INSERT INTO bench_case (run_id, model, dtype, backend, batch, prompt_len,"
           " max_new_tokens, warmup, repeat, threads, seed, distinct_prompts, variants, status,"
           " finished_at) VALUES (1, 'tiny', 'fp32', 'cuda', 1, 8, 4, 1, 2, 1, 0, 1,"
           " '{\"cuda_graphs\":\"on\"}', 'ok', '2026-11-28T00:00:00Z')");
    EXPECT_EQ(d.user_version(), 17);
  }
  ResultStore s(db.string());
  EXPECT_EQ(s.db().user_version(), kSchemaVersion);
  for (const char* c : kColumns) EXPECT_TRUE(s.db().has_column("bench_case", c)) << c;
  auto q = s.db().prepare("SELECT model, cuda_graph_steps, cuda_graph_eager_steps,"
                          " cuda_graph_traced_steps, cuda_graph_note, trace_unmatched_graph_nodes"
                          " FROM bench_case");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.column_text(0), "tiny");
  for (int i = 1; i <= 5; ++i) EXPECT_TRUE(q.column_is_null(i)) << i;
}

// The version-18 columns as the INSERT reads them from a case: NULL with graphs off; with them
// on the counts, the note when there is one, and the unmatched count only for traced replays.
TEST(Schema, CudaGraphColumnsAreNullWithGraphsOffAndTheCountsWithThemOn) {
  auto value = [](const CaseResult& r, const std::string& name) -> FieldValue {
    for (const ResultField& f : result_fields())
      if (f.name == name) return f.get(r, FieldSink::kDb);
    ADD_FAILURE() << name;
    return {};
  };
  const char* kColumns[] = {"cuda_graph_steps", "cuda_graph_eager_steps",
                            "cuda_graph_traced_steps", "cuda_graph_note",
                            "trace_unmatched_graph_nodes"};
  CaseResult off;
  for (const char* c : kColumns)
    EXPECT_TRUE(std::holds_alternative<std::monostate>(value(off, c))) << c;
  CaseResult on;
  on.graphs = {true, 12, 3, 4, ""};
  on.trace_device.unmatched_graph_nodes = 2;
  EXPECT_EQ(value(on, "cuda_graph_steps"), FieldValue(std::int64_t(12)));
  EXPECT_EQ(value(on, "cuda_graph_eager_steps"), FieldValue(std::int64_t(3)));
  EXPECT_EQ(value(on, "cuda_graph_traced_steps"), FieldValue(std::int64_t(4)));
  EXPECT_TRUE(std::holds_alternative<std::monostate>(value(on, "cuda_graph_note")));
  EXPECT_EQ(value(on, "trace_unmatched_graph_nodes"), FieldValue(std::int64_t(2)));
  CaseResult ragged;
  ragged.graphs = {true, 0, -1, 0, "cuda graphs: ragged cases run their steps eagerly"};
  EXPECT_TRUE(std::holds_alternative<std::monostate>(value(ragged, "cuda_graph_eager_steps")));
  EXPECT_TRUE(std::holds_alternative<std::monostate>(value(ragged, "trace_unmatched_graph_nodes")));
  EXPECT_EQ(value(ragged, "cuda_graph_note"), FieldValue(ragged.graphs.note));
}

// Version 16 (kernels of llmbench's own CUDA traces): a version-15 database's device_op is
// replaced by the one that lists a case's GPU-track kernels (with their op as the launch)
// instead of its ops, and still lists the ops of a case without a GPU track.
TEST(Schema, Version15DeviceOpReadsOwnKernelsWhereACaseHasThem) {
  const fs::path db = fresh_dir("v15_kernels") / "v15.db";
  {
    Db d(db.string(), Db::Mode::kCreate);
    create_schema_version(d, 15);
    EXPECT_EQ(d.user_version(), 15);
  }
  ResultStore s(db.string());
  EXPECT_EQ(s.db().user_version(), kSchemaVersion);
  Db& d = s.db();
  d.exec("PRAGMA foreign_keys=OFF");  // tracks and events without their run and cases
  // Case 1: a thread track with a range and an op; case 2 the same plus a GPU track whose
  // kernel is the op's child.
  d.exec("INSERT INTO track (id, name, type, case_id) VALUES (1, 'a', 'thread', 1),"
         " (2, 'b', 'thread', 2), (3, 'GPU 0 stream 7', 'gpu', 2)");
  d.exec("INSERT INTO event (id, ts, dur, track_id, category, name, depth, parent_id) VALUES"
         " (1, 0, 100, 1, 'range', 'decode_step', 0, NULL),"
         " (2, 10, 50, 1, 'gemm', 'qkv_proj', 1, 1),"
         " (3, 0, 100, 2, 'range', 'decode_step', 0, NULL),"
         " (4, 10, 50, 2, 'gemm', 'qkv_proj', 1, 3),"
         " (5, 12, 40, 3, 'kernel', 'gemv_half', 2, 4)");
  auto q = d.prepare("SELECT case_id, id, name, launch_id FROM device_op ORDER BY case_id, id");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.column_int(0), 1);
  EXPECT_EQ(q.column_text(2), "qkv_proj") << "a case without kernels lists its ops";
  EXPECT_EQ(q.column_int(3), 2) << "an op is its own launch";
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.column_int(0), 2);
  EXPECT_EQ(q.column_text(2), "gemv_half") << "a case with kernels lists them, not its ops";
  EXPECT_EQ(q.column_int(3), 4) << "a kernel's launch is its op";
  EXPECT_FALSE(q.step());
}

TEST(Schema, ForeignAndNewerDatabasesAreRefused) {
  const fs::path dir = fresh_dir("refused");
  {
    Db d((dir / "foreign.db").string(), Db::Mode::kCreate);
    d.exec("CREATE TABLE run (x INTEGER)");
  }
  EXPECT_THROW(ResultStore((dir / "foreign.db").string()), BadInput);
  {
    Db d((dir / "newer.db").string(), Db::Mode::kCreate);
    d.exec("PRAGMA user_version = " + std::to_string(kSchemaVersion + 1));
  }
  EXPECT_THROW(ResultStore((dir / "newer.db").string()), BadInput);
  EXPECT_THROW(open_read_only((dir / "newer.db").string()), BadInput);
}

TEST(Schema, ReadOnlyOpenWritesNothingBesideTheFile) {
  const fs::path dir = fresh_dir("read_only");
  const fs::path db = dir / "x.db";
  {
    ResultStore s(db.string());  // WAL; closing the last connection removes -wal and -shm
    s.db().exec("INSERT INTO gate (started_at, base_bin, cand_bin, profile, rounds, order_seed,"
                " base_db, cand_db) VALUES ('t', 'a', 'b', 'p', 1, 0, 'x', 'y')");
  }
  const std::set<std::string> before = files_in(dir);
  ASSERT_EQ(before, std::set<std::string>{"x.db"});
  {
    auto r = open_read_only(db.string());
    auto q = r->prepare("SELECT count(*) FROM gate");
    ASSERT_TRUE(q.step());
    EXPECT_EQ(q.column_int(0), 1);
    add_schema_stand_ins(*r);
    EXPECT_EQ(files_in(dir), before);
  }
  EXPECT_EQ(files_in(dir), before);
  // A writer with the database open: its committed rows are in the -wal file, and a reader
  // sees them.
  ResultStore writer(db.string());
  writer.db().exec("PRAGMA wal_autocheckpoint = 0");
  writer.db().exec("INSERT INTO gate (started_at, base_bin, cand_bin, profile, rounds,"
                   " order_seed, base_db, cand_db) VALUES ('t', 'a', 'b', 'p', 1, 0, 'x', 'y')");
  auto r = open_read_only(db.string());
  auto q = r->prepare("SELECT count(*) FROM gate");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.column_int(0), 2);
  EXPECT_THROW(r->exec("INSERT INTO gate (started_at, base_bin, cand_bin, profile, rounds,"
                       " order_seed, base_db, cand_db) VALUES ('t', 'a', 'b', 'p', 1, 0, 'x', 'y')"),
               Error);
}

TEST(Schema, StandInsGiveAnOlderDatabaseEveryTableEmpty) {
  const fs::path dir = fresh_dir("stand_ins");
  const fs::path db = dir / "v8.db";
  {
    Db d(db.string(), Db::Mode::kCreate);
    create_schema_version(d, 8);
  }
  auto r = open_read_only(db.string());
  EXPECT_FALSE(r->has_table("serve_step"));
  add_schema_stand_ins(*r);
  auto q = r->prepare("SELECT (SELECT count(*) FROM serve_step) + (SELECT count(*) FROM device_op)");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.column_int(0), 0);
  EXPECT_EQ(files_in(dir), std::set<std::string>{"v8.db"});
}

}  // namespace
}  // namespace llmbench
