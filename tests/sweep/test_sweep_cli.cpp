// `llmbench sweep` / `run --config` end to end: bad profiles run nothing, progress lines,
// failing cases, real interruptions (SIGKILL and SIGINT of a child sweep) followed by
// --resume, shards merged back into the whole plan, and the SLO report.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "tests/cli/llmbench_process.h"

namespace {

using namespace llmbench_test;

// Runs one SQL query returning a single integer or text (read-only; "" if it fails).
std::string sql(const fs::path& db, const std::string& query) {
  sqlite3* h = nullptr;
  std::string out;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(h, 2000);
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(h, query.c_str(), -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
      out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
  }
  sqlite3_close(h);
  return out;
}

int count(const fs::path& db, const std::string& query) {
  const std::string v = sql(db, query);
  return v.empty() ? -1 : std::stoi(v);
}

// Given peaks: no test measures the roofline (seconds each).
#define kPeaksToml "peak-bw-gbps = 20\npeak-tflops = 0.2\n"
const std::string kPeaks = " --peak-bw-gbps 20 --peak-tflops 0.2 ";

// A sweep slow enough to interrupt: 6 cases of about a second each.
const char* kSlowProfile =
    "description = \"interruptible\"\nmodel = \"tiny\"\nbackend = \"cpu\"\n"
    "batch = [1, 2, 3, 4, 5, 6]\nprompt-len = 128\nmax-new-tokens = 120\nrepeat = 12\n"
    "warmup = 0\ntrace = \"ops\"\nthreads = 1\n" kPeaksToml;

// Starts `llmbench <args>` in the background; returns its pid.
pid_t spawn(const std::string& args, const fs::path& dir) {
  const std::string cmd = "exec env LLMBENCH_CACHE_DIR=" + (dir / "cache").string() + " " +
                          LLMBENCH_BIN " " + args + " > " + (dir / "out").string() + " 2> " +
                          (dir / "err").string();
  const pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

// Waits until the database holds at least `cases` cases (or 60 s pass).
bool wait_for_cases(const fs::path& db, int cases) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    if (fs::exists(db) && count(db, "SELECT COUNT(*) FROM bench_case") >= cases) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

int wait_exit(pid_t pid, int* signal_out = nullptr) {
  int status = 0;
  waitpid(pid, &status, 0);
  if (signal_out) *signal_out = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(SweepCli, BadProfileRunsNothingAndNamesFileLineKey) {
  const fs::path dir = scratch_dir();
  write_file(dir / "bad.toml", "model = \"tiny\"\nbatch = [1, 4]\nrepeats = 3\n");
  const Result r = run_llmbench("sweep " + (dir / "bad.toml").string() + " --db " +
                                (dir / "x.db").string(), dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.find("error: " + (dir / "bad.toml").string() + ":3: key 'repeats': unknown key"), 0u)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(fs::exists(dir / "x.db"));
}

TEST(SweepCli, ListShowsEveryBundledProfileAndAMissingProfileIsBadInput) {
  const fs::path dir = scratch_dir();
  const Result list = run_llmbench("sweep --list", dir);
  ASSERT_EQ(list.exit_code, 0) << list.err;
  for (const char* name : {"quick", "decode-scaling", "prefill-scaling", "batch16-single-token",
                           "ci-smoke", "slo"})
    EXPECT_NE(list.out.find(std::string("\n") + name + " "), std::string::npos) << name;
  const Result none = run_llmbench("sweep", dir);
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_EQ(none.err, "error: sweep: expected a PROFILE (a .toml file or a bundled name; "
                      "`llmbench sweep --list` shows them)\n");
}

TEST(SweepCli, ProgressOneLinePerCaseWhenNotATerminalAndQuietSilencesIt) {
  const fs::path dir = scratch_dir();
  fs::remove(dir / "p.db");
  write_file(dir / "p.toml", "model = \"tiny\"\nbatch = [1, 2]\nprompt-len = 8\n"
                             "max-new-tokens = 2\nrepeat = 1\nwarmup = 0\n" kPeaksToml);
  const Result r = run_llmbench("sweep " + (dir / "p.toml").string() + " --db " +
                                (dir / "p.db").string() + " --format csv", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("[1/2] tiny fp32 cpu b1 p8 n2: TTFT "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(elapsed 0:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("[2/2] tiny fp32 cpu b2 p8 n2: TTFT "), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\r'), std::string::npos);  // no in-place redraw outside a terminal
  EXPECT_EQ(count(dir / "p.db", "SELECT COUNT(*) FROM bench_case"), 2);

  const Result q = run_llmbench("run --config " + (dir / "p.toml").string() + " --db " +
                                (dir / "p.db").string() + " --quiet --format csv", dir);
  ASSERT_EQ(q.exit_code, 0);
  EXPECT_EQ(q.err, "");
}

TEST(SweepCli, FailingCaseIsRecordedAndTheSweepGoesOn) {
  const fs::path dir = scratch_dir();
  fs::remove(dir / "f.db");
  // The middle case needs hundreds of GiB for its activations: it fails, the others run.
  const Result r = run_llmbench("run --model tiny --batch 1,1048576,2 --prompt-len 200 "
                                "--max-new-tokens 2 --repeat 1 --warmup 0 --format csv" + kPeaks + "--db " +
                                (dir / "f.db").string(), dir);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(count(dir / "f.db", "SELECT COUNT(*) FROM bench_case WHERE status = 'ok'"), 2);
  EXPECT_NE(sql(dir / "f.db", "SELECT error FROM bench_case WHERE status = 'error'")
                .find("not enough host memory"),
            std::string::npos);
  EXPECT_EQ(sql(dir / "f.db", "SELECT status FROM run"), "complete");
}

TEST(SweepCli, SigkillMidSweepLeavesAnIntactDatabaseAndResumeFinishes) {
  const fs::path dir = scratch_dir();
  fs::remove(dir / "k.db");
  write_file(dir / "slow.toml", kSlowProfile);
  const std::string args = "sweep " + (dir / "slow.toml").string() + " --db " + (dir / "k.db").string();
  const pid_t pid = spawn(args, dir);
  ASSERT_TRUE(wait_for_cases(dir / "k.db", 2)) << slurp(dir / "err");
  kill(pid, SIGKILL);
  int sig = 0;
  wait_exit(pid, &sig);
  EXPECT_EQ(sig, SIGKILL);

  EXPECT_EQ(sql(dir / "k.db", "PRAGMA integrity_check"), "ok");
  const int stored = count(dir / "k.db", "SELECT COUNT(*) FROM bench_case");
  EXPECT_GE(stored, 2);
  EXPECT_LT(stored, 6);
  EXPECT_EQ(sql(dir / "k.db", "SELECT status FROM run"), "running");
  // Every stored case is whole: its samples and its trace are there.
  EXPECT_EQ(count(dir / "k.db", "SELECT COUNT(*) FROM bench_case c WHERE (SELECT COUNT(*) FROM "
                                "bench_sample s WHERE s.case_id = c.id) <> 12"), 0);
  EXPECT_EQ(count(dir / "k.db", "SELECT COUNT(*) FROM bench_case c WHERE NOT EXISTS (SELECT 1 "
                                "FROM event e WHERE e.case_id = c.id)"), 0);

  const Result r = run_llmbench(args + " --resume --format csv", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("resuming run 1 in "), std::string::npos) << r.err;
  EXPECT_EQ(count(dir / "k.db", "SELECT COUNT(*) FROM run"), 1);
  EXPECT_EQ(count(dir / "k.db", "SELECT COUNT(*) FROM bench_case"), 6);
  EXPECT_EQ(count(dir / "k.db", "SELECT COUNT(DISTINCT case_index) FROM bench_case"), 6);
  EXPECT_EQ(sql(dir / "k.db", "SELECT status FROM run"), "complete");
  // Only the cases that were missing ran again.
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1 + 6 - stored) << r.out;
  EXPECT_EQ(sql(dir / "k.db", "PRAGMA integrity_check"), "ok");
}

TEST(SweepCli, SigintStopsCleanlyWithExit130AndResumeFinishes) {
  const fs::path dir = scratch_dir();
  fs::remove(dir / "i.db");
  write_file(dir / "slow.toml", kSlowProfile);
  const std::string args = "run --config " + (dir / "slow.toml").string() + " --db " +
                           (dir / "i.db").string() + " --format csv";
  const pid_t pid = spawn(args, dir);
  ASSERT_TRUE(wait_for_cases(dir / "i.db", 1)) << slurp(dir / "err");
  kill(pid, SIGINT);
  EXPECT_EQ(wait_exit(pid), 130) << slurp(dir / "err");
  const std::string err = slurp(dir / "err");
  EXPECT_NE(err.find("interrupted: run 1 in "), std::string::npos) << err;
  EXPECT_NE(err.find("rerun with --resume to continue"), std::string::npos) << err;
  EXPECT_EQ(sql(dir / "i.db", "SELECT status FROM run"), "interrupted");
  EXPECT_EQ(sql(dir / "i.db", "PRAGMA integrity_check"), "ok");
  const int stored = count(dir / "i.db", "SELECT COUNT(*) FROM bench_case");
  EXPECT_GE(stored, 1);
  EXPECT_LT(stored, 6);
  // The results of the finished cases are still printed (csv: a header and one row each).
  const std::string out = slurp(dir / "out");
  EXPECT_EQ(int(std::count(out.begin(), out.end(), '\n')), 1 + stored) << out;

  const Result r = run_llmbench(args + " --resume", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count(dir / "i.db", "SELECT COUNT(*) FROM bench_case"), 6);
  EXPECT_EQ(count(dir / "i.db", "SELECT COUNT(DISTINCT case_key) FROM bench_case"), 6);
  EXPECT_EQ(sql(dir / "i.db", "SELECT status FROM run"), "complete");
  // A second resume has nothing left to do.
  const Result again = run_llmbench(args + " --resume", dir);
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_NE(again.err.find("nothing to resume"), std::string::npos) << again.err;
  EXPECT_EQ(count(dir / "i.db", "SELECT COUNT(*) FROM bench_case"), 6);
}

TEST(SweepCli, ShardsMergeBackIntoTheWholePlan) {
  const fs::path dir = scratch_dir();
  for (const char* f : {"s1.db", "s2.db", "s3.db", "all.db"}) fs::remove(dir / f);
  const std::string base = "run --model tiny --batch 1,2,3 --prompt-len 8,16 --max-new-tokens 2 "
                           "--repeat 1 --warmup 0 --quiet --format csv" + kPeaks;
  for (int k = 1; k <= 3; ++k) {
    const Result r = run_llmbench(base + " --shard " + std::to_string(k) + "/3 --db " +
                                  (dir / ("s" + std::to_string(k) + ".db")).string(), dir);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(count(dir / ("s" + std::to_string(k) + ".db"), "SELECT COUNT(*) FROM bench_case"), 2);
  }
  int events = 0;
  for (int k = 1; k <= 3; ++k)
    events += count(dir / ("s" + std::to_string(k) + ".db"), "SELECT COUNT(*) FROM event");
  const Result m = run_llmbench("merge " + (dir / "s1.db").string() + " " + (dir / "s2.db").string() +
                                " " + (dir / "s3.db").string() + " -o " + (dir / "all.db").string(), dir);
  ASSERT_EQ(m.exit_code, 0) << m.err;
  const fs::path all = dir / "all.db";
  EXPECT_EQ(count(all, "SELECT COUNT(*) FROM run"), 3);
  EXPECT_EQ(count(all, "SELECT COUNT(*) FROM bench_case"), 6);
  EXPECT_EQ(count(all, "SELECT COUNT(DISTINCT case_index) FROM bench_case"), 6);
  EXPECT_EQ(count(all, "SELECT MAX(case_index) FROM bench_case"), 5);
  EXPECT_EQ(count(all, "SELECT COUNT(*) FROM event"), events);
  // References still point within their own run.
  EXPECT_EQ(count(all, "SELECT COUNT(*) FROM event e JOIN bench_case c ON c.id = e.case_id "
                       "JOIN track t ON t.id = e.track_id WHERE t.case_id <> c.id"), 0);
  EXPECT_EQ(count(all, "SELECT COUNT(*) FROM event c JOIN event p ON p.id = c.parent_id "
                       "WHERE p.case_id <> c.case_id"), 0);
  EXPECT_EQ(count(all, "SELECT COUNT(*) FROM bench_sample s LEFT JOIN bench_case c ON "
                       "c.id = s.case_id WHERE c.id IS NULL"), 0);
  EXPECT_EQ(sql(all, "PRAGMA foreign_key_check"), "");
  EXPECT_EQ(sql(all, "PRAGMA integrity_check"), "ok");
  // The bundled queries work on the merged database.
  const Result q = run_llmbench("query " + all.string() + " case_summary --format csv", dir);
  EXPECT_EQ(q.exit_code, 0) << q.err;
}

TEST(SweepCli, MergeKeepsImportedTracesApartFromRuns) {
  const fs::path dir = scratch_dir();
  for (const char* f : {"a.db", "b.db", "all.db"}) fs::remove(dir / f);
  const std::string trace = std::string(LLMBENCH_FIXTURES) + "/torch_1_13_cpu_trace.json";
  ASSERT_EQ(run_llmbench("import chrome " + trace + " --db " + (dir / "a.db").string(), dir)
                .exit_code, 0);
  ASSERT_EQ(run_llmbench("run --model tiny --prompt-len 8 --max-new-tokens 2 --repeat 1 "
                         "--warmup 0 --quiet" + kPeaks + "--db " + (dir / "b.db").string(), dir)
                .exit_code, 0);
  ASSERT_EQ(run_llmbench("import chrome " + trace + " --db " + (dir / "b.db").string(), dir)
                .exit_code, 0);
  const int events = count(dir / "a.db", "SELECT COUNT(*) FROM event") +
                     count(dir / "b.db", "SELECT COUNT(*) FROM event");
  const Result m = run_llmbench("merge " + (dir / "a.db").string() + " " +
                                (dir / "b.db").string() + " -o " + (dir / "all.db").string(), dir);
  ASSERT_EQ(m.exit_code, 0) << m.err;
  const fs::path all = dir / "all.db";
  EXPECT_EQ(count(all, "SELECT COUNT(*) FROM import"), 2);
  EXPECT_EQ(count(all, "SELECT COUNT(*) FROM event"), events);
  // Each import's tracks and processes point at their own import row, and no event of an
  // import is attached to a case.
  EXPECT_EQ(count(all, "SELECT COUNT(DISTINCT import_id) FROM track WHERE import_id IS NOT NULL"), 2);
  EXPECT_EQ(count(all, "SELECT COUNT(*) FROM track t JOIN process p ON p.upid = t.upid "
                       "WHERE t.import_id IS NOT NULL AND p.import_id IS NOT t.import_id"), 0);
  EXPECT_EQ(count(all, "SELECT COUNT(*) FROM event e JOIN track t ON t.id = e.track_id "
                       "WHERE t.import_id IS NOT NULL AND e.case_id IS NOT NULL"), 0);
  EXPECT_EQ(sql(all, "PRAGMA foreign_key_check"), "");
  EXPECT_EQ(sql(all, "PRAGMA integrity_check"), "ok");
}

TEST(SweepCli, MergeRefusesOtherSchemaVersionsAndLeavesTheOutputUnchanged) {
  const fs::path dir = scratch_dir();
  for (const char* f : {"a.db", "old.db", "out.db", "junk.db"}) fs::remove(dir / f);
  ASSERT_EQ(run_llmbench("run --model tiny --prompt-len 8 --max-new-tokens 1 --repeat 1 "
                         "--warmup 0 --quiet" + kPeaks + "--db " + (dir / "a.db").string(), dir).exit_code, 0);
  ASSERT_EQ(std::system(("sqlite3 " + (dir / "old.db").string() +
                         " 'CREATE TABLE run (id INTEGER PRIMARY KEY); PRAGMA user_version = 2'")
                            .c_str()), 0);
  const Result r = run_llmbench("merge " + (dir / "a.db").string() + " " + (dir / "old.db").string() +
                                " -o " + (dir / "out.db").string(), dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("old.db' has schema version 2; this llmbench merges version "),
            std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "out.db"));

  write_file(dir / "junk.db", "this is not a database");
  const Result j = run_llmbench("merge " + (dir / "junk.db").string() + " -o " +
                                (dir / "out.db").string(), dir);
  EXPECT_EQ(j.exit_code, 2) << j.err;
  EXPECT_EQ(std::count(j.err.begin(), j.err.end(), '\n'), 1) << j.err;

  const Result self = run_llmbench("merge " + (dir / "a.db").string() + " -o " +
                                   (dir / "a.db").string(), dir);
  EXPECT_EQ(self.exit_code, 2);
  EXPECT_EQ(count(dir / "a.db", "SELECT COUNT(*) FROM bench_case"), 1);
}

TEST(SweepCli, SloReportNamesTheLargestBatchWithinTheLimits) {
  const fs::path dir = scratch_dir();
  const std::string base = "run --model tiny --batch 1,2,4 --prompt-len 16 --max-new-tokens 3 "
                           "--repeat 3 --warmup 0 --trace off --quiet" + kPeaks + "--db " +
                           (dir / "slo.db").string();
  const Result loose = run_llmbench(base + " --slo-ttft-p99-ms 60000 --slo-tpot-p99-ms 60000 "
                                    "--format json", dir);
  ASSERT_EQ(loose.exit_code, 0) << loose.err;
  const auto doc = nlohmann::json::parse(loose.out);
  ASSERT_EQ(doc["slo"].size(), 1u);
  EXPECT_EQ(doc["slo"][0]["max_batch"], 4);
  EXPECT_EQ(doc["slo"][0]["batches_tested"], nlohmann::json({1, 2, 4}));
  // The reported p99s are the case's own.
  EXPECT_EQ(doc["slo"][0]["ttft_ms_p99"], doc["cases"][2]["ttft_ms_p99"]);

  const Result tight = run_llmbench(base + " --slo-ttft-p99-ms 0.000001 --format csv", dir);
  ASSERT_EQ(tight.exit_code, 0) << tight.err;
  EXPECT_NE(tight.out.find("max_batch"), std::string::npos) << tight.out;
  EXPECT_NE(tight.out.find(",none,"), std::string::npos) << tight.out;
}

}  // namespace
