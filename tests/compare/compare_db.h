// Hand-built result databases for the `llmbench compare` tests: the real schema (ResultStore
// creates it), a run row through ResultStore::begin_run, and cases, repetitions and decode
// steps inserted with plain SQL, so a test states exactly which samples each side holds.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "tools/store/run_info.h"
#include "tools/store/store.h"

namespace llmbench_test {

struct FakeCase {
  std::string model = "tiny", dtype = "fp32", backend = "cpu";
  int batch = 2, prompt_len = 16, max_new_tokens = 3, threads = 2;
  std::string variants = "{}";
  std::string status = "ok", error;
  std::string trace = "off";
  std::vector<std::int64_t> ttft_ns;                   // one per repetition
  std::vector<std::vector<std::int64_t>> decode_ns;    // per repetition, max_new_tokens - 1
};

inline llmbench::RunInfo fake_run_info(int threads = 2) {
  llmbench::RunInfo r;
  r.started_at = "2026-01-01T00:00:00Z";
  r.command_line = "llmbench run (test)";
  r.version = "0.1.0";
  r.git_commit = "abc123";
  r.build_type = "Release";
  r.host = "testhost";
  r.cpu = "Test CPU";
  r.threads = threads;
  r.peaks = {20, 0.2, "test"};
  return r;
}

// Adds one run with its cases to the database at `path` (created when missing); returns the
// run id.
inline std::int64_t add_fake_run(const std::filesystem::path& path, const llmbench::RunInfo& info,
                                 const std::vector<FakeCase>& cases) {
  llmbench::ResultStore store(path.string());
  llmbench::Db& db = store.db();
  const std::int64_t run_id = store.begin_run(info);
  for (const FakeCase& c : cases) {
    db.prepare("INSERT INTO bench_case (run_id, model, dtype, backend, batch, prompt_len,"
               " max_new_tokens, warmup, repeat, threads, seed, distinct_prompts, variants,"
               " status, error, finished_at, trace) VALUES (?,?,?,?,?,?,?,1,?,?,0,0,?,?,?,'x',?)")
        .bind(1, run_id).bind(2, c.model).bind(3, c.dtype).bind(4, c.backend).bind(5, c.batch)
        .bind(6, c.prompt_len).bind(7, c.max_new_tokens).bind(8, int(c.ttft_ns.size()))
        .bind(9, c.threads).bind(10, c.variants).bind(11, c.status).bind(12, c.error)
        .bind(13, c.trace).run();
    const std::int64_t case_id = db.last_insert_id();
    for (std::size_t r = 0; r < c.ttft_ns.size(); ++r) {
      std::int64_t e2e = c.ttft_ns[r];
      if (r < c.decode_ns.size())
        for (auto d : c.decode_ns[r]) e2e += d;
      db.prepare("INSERT INTO bench_sample (case_id, rep, ttft_ns, e2e_ns) VALUES (?,?,?,?)")
          .bind(1, case_id).bind(2, int(r)).bind(3, c.ttft_ns[r]).bind(4, e2e).run();
      const std::int64_t sample_id = db.last_insert_id();
      if (r < c.decode_ns.size())
        for (std::size_t s = 0; s < c.decode_ns[r].size(); ++s)
          db.prepare("INSERT INTO bench_step (sample_id, step, kv_len, decode_ns, bytes)"
                     " VALUES (?,?,?,?,0)")
              .bind(1, sample_id).bind(2, int(s + 1)).bind(3, c.prompt_len + int(s) + 1)
              .bind(4, c.decode_ns[r][s]).run();
    }
  }
  return run_id;
}

// A case with n repetitions: TTFT = ttft_ms x (1 + small deterministic jitter) and every
// decode step = tpot_ms x (same jitter), max_new_tokens - 1 steps.
inline FakeCase timed_case(double ttft_ms, double tpot_ms, int n = 8, FakeCase c = FakeCase{}) {
  static const double kJitter[] = {0.000, 0.004, -0.003, 0.006, -0.005, 0.002, -0.001, 0.003,
                                   -0.004, 0.005, -0.002, 0.001};
  c.ttft_ns.clear();
  c.decode_ns.clear();
  for (int r = 0; r < n; ++r) {
    const double j = 1.0 + kJitter[r % 12];
    c.ttft_ns.push_back(std::int64_t(ttft_ms * 1e6 * j));
    c.decode_ns.emplace_back(std::size_t(std::max(0, c.max_new_tokens - 1)),
                             std::int64_t(tpot_ms * 1e6 * j));
  }
  return c;
}

}  // namespace llmbench_test
