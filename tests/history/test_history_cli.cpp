// `llmbench history add|check` end to end, and `compare --run --rounds auto` (the adaptive gate)
// with --history on real tiny runs: an A/A gate decides "same" and appends its points; a planted
// slowdown (LLMBENCH_PLANTED_SLOWDOWN_PCT, engine/model/cpu_backend.cpp) is decided "slower"
// within 10 rounds.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/cli/llmbench_process.h"
#include "tools/store/sqlite_db.h"

using namespace llmbench_test;

namespace {

// 40 points; from commit 36 on, 10% higher (a regression for the default direction).
std::string step_csv() {
  std::string s = "series,commit,time,value\n";
  const double noise[] = {0.3, -0.5, 0.1, 0.8, -0.2, -0.9, 0.4, 0.0, -0.4, 0.6};
  for (int i = 0; i < 40; ++i)
    s += "tpot,c" + std::to_string(100 + i) + ",2026-01-01T00:" + std::to_string(10 + i) + ":00Z," +
         std::to_string(100 + noise[i % 10] + (i >= 36 ? 10 : 0)) + "\n";
  return s;
}

int count(const fs::path& db, const std::string& sql) {
  llmbench::Db d(db.string(), llmbench::Db::Mode::kReadOnly);
  auto st = d.prepare(sql);
  st.step();
  return int(st.column_int(0));
}

// The tiny case the gate tests sweep: a few milliseconds a repetition, 5 repetitions.
fs::path tiny_profile(const fs::path& d) {
  const fs::path p = d / "tiny.toml";
  write_file(p, "model = \"tiny\"\nbackend = \"cpu\"\nbatch = 4\nprompt-len = 64\n"
                "max-new-tokens = 16\nwarmup = 1\nrepeat = 5\nthreads = 1\ntrace = \"off\"\n");
  return p;
}

const char* kPeaks = " --sweep-arg=--peak-bw-gbps --sweep-arg=10 --sweep-arg=--peak-tflops "
                     "--sweep-arg=1";

}  // namespace

TEST(HistoryCli, AddCsvThenCheckFindsTheRecentRegression) {
  const fs::path d = scratch_dir();
  for (const char* f : {"h.db", "h.db-wal", "h.db-shm"}) fs::remove(d / f);
  write_file(d / "s.csv", step_csv());
  const std::string h = (d / "h.db").string();
  Result r = run_llmbench("history add " + h + " " + (d / "s.csv").string(), d / "add");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("40 point(s) added"), std::string::npos) << r.err;
  r = run_llmbench("history add " + h + " " + (d / "s.csv").string(), d / "again");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("0 point(s) added, 40 already there"), std::string::npos) << r.err;
  EXPECT_EQ(count(d / "h.db", "SELECT count(*) FROM history_point"), 40);

  r = run_llmbench("history check " + h + " --format json", d / "check");
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;  // the regression lies in the newest 5 commits
  const auto doc = nlohmann::json::parse(r.out);
  ASSERT_TRUE(doc.is_array());
  ASSERT_EQ(doc.size(), 1u) << r.out;
  EXPECT_EQ(doc[0]["series"], "csv / tpot");
  EXPECT_EQ(doc[0]["commit"], "c136");
  EXPECT_EQ(doc[0]["previous_commit"], "c135");
  EXPECT_NEAR(doc[0]["ratio"].get<double>(), 1.1, 0.01);
  EXPECT_LE(doc[0]["p_value"].get<double>(), 0.01);
  for (const char* k : {"before", "after"}) EXPECT_TRUE(doc[0][k].is_number()) << k;
  EXPECT_EQ(doc[0]["regression"], true);
  EXPECT_EQ(doc[0]["recent"], true);

  // Four commits back: older than the newest 3, reported, but the check passes. Higher-is-better: an
  // improvement.
  EXPECT_EQ(run_llmbench("history check " + h + " --recent 3", d / "c3").exit_code, 0);
  r = run_llmbench("history check " + h + " --higher-is-better --format md", d / "hib");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("| csv / tpot |  | c135..c136 |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("improvement"), std::string::npos) << r.out;
  r = run_llmbench("history check " + h, d / "table");
  EXPECT_NE(r.out.find("c135..c136"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("REGRESSION (recent)"), std::string::npos) << r.out;
}

TEST(HistoryCli, BadInputIsOneLineAndExitTwo) {
  const fs::path d = scratch_dir();
  write_file(d / "bad.csv", "series,commit,time,value\ntpot,c1,2026-01-01,fast\n");
  struct Case {
    std::string args, message;
  };
  const Case cases[] = {
      {"history add " + (d / "h.db").string() + " " + (d / "bad.csv").string(), "line 2: value 'fast'"},
      {"history add " + (d / "h.db").string() + " " + (d / "missing.db").string(), "does not exist"},
      {"history check " + (d / "nope.db").string(), "does not exist"},
      {"history check " + (d / "h.db").string() + " --recent -1", "--recent"},
      {"history check " + (d / "h.db").string() + " --max-p 0", "--max-p"},
      {"history check " + (d / "h.db").string() + " --min-size 1", "--min-size"},
      {"history check " + (d / "h.db").string() + " --format xml", "--format"},
      {"history", "subcommand"},
  };
  int i = 0;
  for (const Case& c : cases) {
    const Result r = run_llmbench(c.args, d / ("case" + std::to_string(i++)));
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c.args << "\n" << r.err;
  }
}

// A/A with a margin the machine's noise cannot reach: decided "same" before the budget, with
// the rounds used reported; --history appends the candidate's points with the verdict; `history
// add` of a side database adds its runs, of the gate database nothing (that gate is stored).
TEST(HistoryCli, AdaptiveGateDecidesSameAndAppendsToHistory) {
  const fs::path d = scratch_dir();
  for (const char* f : {"g.db", "g.base.db", "g.cand.db", "g.db.log", "h.db"}) fs::remove(d / f);
  const std::string h = (d / "h.db").string();
  const Result r = run_llmbench(std::string("compare --run " LLMBENCH_BIN " " LLMBENCH_BIN
                                            " --config ") + tiny_profile(d).string() +
                                " --seed 3 --db " + (d / "g.db").string() + " --threshold 100 "
                                "--format json --history " + h + " --commit abc123 --branch main" +
                                kPeaks);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const auto doc = nlohmann::json::parse(r.out);
  const int rounds = doc["settings"]["rounds"];
  EXPECT_GE(rounds, 5);  // the first look
  EXPECT_LT(rounds, 30);  // a 100% margin: decided at the first looks even on a loaded machine
  EXPECT_NE(doc["settings"]["stopping"].get<std::string>().find("all 3 metric results decided"),
            std::string::npos) << doc["settings"]["stopping"];
  for (const char* m : {"ttft", "tpot", "e2e"}) {
    EXPECT_EQ(doc["cases"][0]["metrics"][m]["verdict"], "same") << m;
    EXPECT_LE(doc["cases"][0]["metrics"][m]["decided_at_round"].get<int>(), rounds) << m;
  }
  EXPECT_NE(r.err.find("info: rounds auto: all 3 metric results decided after"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("info: 3 point(s) appended to the history"), std::string::npos) << r.err;
  EXPECT_EQ(count(d / "g.db", "SELECT rounds FROM gate"), rounds);
  EXPECT_EQ(count(d / "h.db", "SELECT count(*) FROM history_point WHERE commit_sha = 'abc123'"
                              " AND branch = 'main' AND source = 'gate'"), 3);
  EXPECT_EQ(count(d / "h.db", "SELECT count(*) FROM history_point WHERE verdict = 'same'"), 3);
  EXPECT_EQ(count(d / "h.db", "SELECT count(*) FROM history_point WHERE noise_pct > 0"), 3);
  EXPECT_EQ(count(d / "h.db", "SELECT count(*) FROM history_series WHERE suite = 'tiny'"
                              " AND cpu_isa != '' AND threads = 1"), 3);
  // The side databases' runs, imported: one point per run, case and metric (all four: a run
  // point is not limited to --metric as the gate's are); ttft, tpot and e2e share the gate's series.
  const Result add = run_llmbench("history add " + h + " " + (d / "g.cand.db").string(), d / "add");
  ASSERT_EQ(add.exit_code, 0) << add.err;
  EXPECT_EQ(count(d / "h.db", "SELECT count(*) FROM history_point WHERE source = 'run'"), 4 * rounds);
  // The gate database itself: its gate, read back from the side databases, is the one
  // --history stored already (the same source): nothing added.
  const Result gate = run_llmbench("history add " + h + " " + (d / "g.db").string(), d / "addg");
  ASSERT_EQ(gate.exit_code, 0) << gate.err;
  EXPECT_NE(gate.err.find("read " + (d / "g.db").string() + ": 3 point(s)"), std::string::npos)
      << gate.err;
  EXPECT_NE(gate.err.find("0 point(s) added, 3 already there"), std::string::npos) << gate.err;
}

// A planted slowdown on the tiny preset (matmuls busy-wait as long again as they take: the
// case's e2e about doubles) is decided "slower" within 10 rounds: exit 1. The 20%
// (busy-wait 30%) was decided in 5 and 10 rounds when the A/A noise floor of these 3 ms cases
// was ~10%; on 2026-11-28 it was 19-46% between processes and 20% went undecided in 4 of 5 gates, so the
// test plants more (the 20% figures are measured in docs/ci.md, not asserted). A gate that
// ran out of rounds (exit 3) gets up to two more attempts with other A/B orders; a wrong verdict
// (same or faster) fails at once, and a gate that cannot decide fails all three.
TEST(HistoryCli, AdaptiveGateDecidesAPlantedSlowdownWithinTenRounds) {
  const fs::path d = scratch_dir();
  const fs::path slow = d / "slow.sh";
  write_file(slow, "#!/bin/sh\nLLMBENCH_PLANTED_SLOWDOWN_PCT=100 exec " LLMBENCH_BIN " \"$@\"\n");
  fs::permissions(slow, fs::perms::owner_all);
  std::string tries;
  for (int attempt = 0; attempt < 3; ++attempt) {
    for (const char* f : {"g.db", "g.base.db", "g.cand.db", "g.db.log"}) fs::remove(d / f);
    const Result r = run_llmbench(std::string("compare --run " LLMBENCH_BIN " ") + slow.string() +
                                  " --config " + tiny_profile(d).string() + " --seed " +
                                  std::to_string(5 + attempt) + " --max-rounds 10"
                                  " --metric e2e --db " + (d / "g.db").string() + " --format json" +
                                  kPeaks);
    tries += "attempt " + std::to_string(attempt) + ": exit " + std::to_string(r.exit_code) + "\n";
    if (r.exit_code == 3) continue;  // undecided in 10 rounds: the machine's noise, try again
    EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
    const auto doc = nlohmann::json::parse(r.out);
    const auto& e2e = doc["cases"][0]["metrics"]["e2e"];
    EXPECT_EQ(e2e["verdict"], "slower") << r.out;
    EXPECT_LE(doc["settings"]["rounds"].get<int>(), 10);
    std::printf("planted slowdown: e2e ratio %.3f, decided slower after %d rounds (attempt %d)\n",
                e2e["ratio"].get<double>(), doc["settings"]["rounds"].get<int>(), attempt + 1);
    return;
  }
  ADD_FAILURE() << "the gate did not decide a planted slowdown within 10 rounds in three attempts:\n"
                << tries;
}

// `run --history` appends the run it stored: one point per metric, the commit from --commit,
// else from GITHUB_SHA (set for the second run), on one series per metric.
TEST(HistoryCli, RunAppendsItsPointsToTheHistory) {
  const fs::path d = scratch_dir();
  for (const char* f : {"r.db", "h.db"}) fs::remove(d / f);
  const std::string args = "run --model tiny --batch 1 --prompt-len 8 --max-new-tokens 3 --repeat 3"
                           " --threads 1 --trace off --peak-bw-gbps 10 --peak-tflops 1 --format csv"
                           " --db " + (d / "r.db").string() + " --history " + (d / "h.db").string();
  Result r = run_llmbench(args + " --commit aaa111", d / "one");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("info: 4 point(s) appended to the history"), std::string::npos) << r.err;
  ::setenv("GITHUB_SHA", "bbb222", 1);
  r = run_llmbench(args, d / "two");
  ::unsetenv("GITHUB_SHA");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count(d / "h.db", "SELECT count(*) FROM history_series WHERE suite = 'run'"), 4);
  EXPECT_EQ(count(d / "h.db", "SELECT count(*) FROM history_point WHERE commit_sha = 'aaa111'"), 4);
  EXPECT_EQ(count(d / "h.db", "SELECT count(*) FROM history_point WHERE commit_sha = 'bbb222'"), 4);
  EXPECT_EQ(count(d / "h.db", "SELECT count(*) FROM history_point WHERE ci_low <= value"
                              " AND value <= ci_high AND source = 'run'"), 8);
}

// `load --history` appends the load run it stored: one point per metric of its one level, on
// series of suite "load".
TEST(HistoryCli, LoadAppendsItsPointsToTheHistory) {
  const fs::path d = scratch_dir();
  for (const char* f : {"l.db", "h.db"}) fs::remove(d / f);
  const Result r = run_llmbench(std::string("load --server-cmd '") + LLMBENCH_BIN +
                                " serve --model tiny --port {port}' --concurrency 1"
                                " --num-requests 4 --input-len 16 --output-len 8 --ignore-eos --quiet"
                                " --format csv --db " + (d / "l.db").string() + " --history " +
                                (d / "h.db").string() + " --commit ccc333",
                                d / "load");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("info: 4 point(s) appended to the history"), std::string::npos) << r.err;
  EXPECT_EQ(count(d / "h.db", "SELECT count(*) FROM history_point p JOIN history_series s"
                              " ON s.id = p.series_id WHERE s.suite = 'load' AND p.source = 'load'"
                              " AND p.commit_sha = 'ccc333'"), 4);
}

TEST(HistoryCli, HelpEndsWithExamples) {
  for (const char* cmd : {"history", "bisect"})
    EXPECT_NE(run_llmbench(std::string(cmd) + " --help").out.find("Examples:\n  llmbench"),
              std::string::npos) << cmd;
  // The adaptive gate's flags are where compare --help lists them.
  const std::string help = run_llmbench("compare --help").out;
  for (const char* want : {"--rounds", "auto", "--max-rounds", "--history"})
    EXPECT_NE(help.find(want), std::string::npos) << want;
}
