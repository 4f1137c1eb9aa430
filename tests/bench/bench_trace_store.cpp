// Trace-store throughput: writes >= 1M events through the real writer (ResultStore::add_case,
// one transaction per case, prepared statements, WAL) and times the Perfetto-style window
// query on the result. Not a test (ctest does not run it); the numbers go in docs/schema.md.
//   build/tests/bench_trace_store [DB] [EVENTS]     (default /tmp/llmbench-store-bench.db, 1e6)
#include <fmt/core.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "engine/bench/bench_case.h"
#include "tools/store/sqlite_db.h"
#include "tools/store/store.h"

namespace {

using Clock = std::chrono::steady_clock;
using llmbench::OpCategory;
using llmbench::OpRecord;
using llmbench::Phase;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// A synthetic traced case shaped like the engine's: steps x (step range, 22 layer ranges of
// 15 ops each, 8 non-layer ops), back to back in time from `t0_ns`.
llmbench::CaseResult synthetic_case(int steps, std::int64_t& t_ns) {
  llmbench::CaseResult c;
  c.spec.model = "synthetic";
  c.spec.max_new_tokens = steps;
  static const char* kOps[] = {"attn_norm", "qkv_proj", "rope_q", "rope_k", "kv_write_k",
                               "kv_write_v", "attention", "o_proj", "attn_residual",
                               "ffn_norm", "gate_up_proj", "swiglu", "down_proj",
                               "ffn_residual", "extra"};
  auto add = [&](const char* name, OpCategory cat, int depth, int parent, int layer, int step,
                 std::int64_t dur) {
    OpRecord r;
    r.name = name;
    r.category = cat;
    r.depth = depth;
    r.parent = parent;
    r.layer = layer;
    r.step = step;
    r.phase = step == 0 ? Phase::kPrefill : Phase::kDecode;
    r.start_ns = t_ns;
    r.dur_ns = dur;
    c.trace.push_back(r);
    return int(c.trace.size()) - 1;
  };
  for (int s = 0; s < steps; ++s) {
    const int step = add(s == 0 ? "prefill" : "decode_step", OpCategory::kRange, 0, -1, -1, s,
                         22 * 15 * 1000 + 8 * 1000);
    for (int l = 0; l < 22; ++l) {
      const int layer = add("layer", OpCategory::kRange, 1, step, l, s, 15 * 1000);
      for (const char* op : kOps) {
        add(op, OpCategory::kGemm, 2, layer, l, s, 900);
        t_ns += 1000;
      }
    }
    for (int i = 0; i < 8; ++i) {
      add("lm_head", OpCategory::kGemm, 1, step, -1, s, 900);
      t_ns += 1000;
    }
  }
  c.metrics.repetitions = 1;
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "/tmp/llmbench-store-bench.db";
  const std::int64_t target = argc > 2 ? std::stoll(argv[2]) : 1'000'000;
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);

  llmbench::ResultStore store(path);
  llmbench::RunInfo info = llmbench::current_run_info();
  info.command_line = "bench_trace_store";
  const std::int64_t run_id = store.begin_run(info);

  std::int64_t events = 0, t_ns = 0;
  int cases = 0;
  double insert_s = 0;
  while (events < target) {
    const llmbench::CaseResult c = synthetic_case(/*steps=*/64, t_ns);  // 64 x 339 events
    const auto t0 = Clock::now();
    store.add_case(run_id, c);
    insert_s += seconds_since(t0);
    events += std::int64_t(c.trace.size());
    ++cases;
  }
  fmt::print("inserted {} events in {} cases (one transaction each) in {:.2f} s: {:.0f} rows/s\n",
             events, cases, insert_s, double(events) / insert_s);

  // The window query of the trace issue, as a user would type it into the sqlite3 shell.
  const char* first_window = R"sql(
    WITH win AS (SELECT ts AS t0, ts + dur AS t1 FROM slice
                 WHERE name = 'decode_step' ORDER BY ts LIMIT 1)
    SELECT name, COUNT(*) AS n, SUM(dur)/1e6 AS total_ms, AVG(dur)/1e3 AS avg_us
    FROM slice, win WHERE ts >= win.t0 AND ts < win.t1
    GROUP BY name ORDER BY total_ms DESC)sql";
  // The same over a window in the middle of the database (no help from ORDER BY ts LIMIT 1).
  const char* mid_window = R"sql(
    WITH win AS (SELECT ts AS t0, ts + dur AS t1 FROM slice
                 WHERE name = 'decode_step' ORDER BY ts LIMIT 1 OFFSET 1500)
    SELECT name, COUNT(*) AS n, SUM(dur)/1e6 AS total_ms, AVG(dur)/1e3 AS avg_us
    FROM slice, win WHERE ts >= win.t0 AND ts < win.t1
    GROUP BY name ORDER BY total_ms DESC)sql";
  llmbench::Db db(path, false);
  for (const auto& [label, sql] : {std::pair{"first decode_step window", first_window},
                                   std::pair{"decode_step window #1500", mid_window}}) {
    double best = 1e9;
    int rows = 0;
    for (int i = 0; i < 5; ++i) {
      const auto t0 = Clock::now();
      auto q = db.prepare(sql);
      rows = 0;
      while (q.step()) ++rows;
      best = std::min(best, seconds_since(t0));
    }
    fmt::print("{}: {} rows in {:.2f} ms (best of 5)\n", label, rows, best * 1e3);
  }
  return 0;
}
