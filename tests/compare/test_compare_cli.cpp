// `llmbench compare` and `llmbench export gbench` end to end on hand-built databases
// (tests/compare/compare_db.h): exit codes (0 same, 1 a regression, 2 bad input with one
// `error:` line), formats, environment lines on stderr, unmatched cases, the Google Benchmark
// JSON fields. Real runs are in test_compare_real_runs.cpp.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <nlohmann/json.hpp>

#include "tests/cli/llmbench_process.h"
#include "tests/compare/compare_db.h"

using namespace llmbench_test;

namespace {

// Two databases in the test's scratch directory: base (10 ms TTFT) and a candidate whose
// TTFT is `ttft_ms`, 8 repetitions each; the candidate's run row gets `cand_info`.
std::pair<fs::path, fs::path> two_dbs(double ttft_ms, llmbench::RunInfo cand_info = fake_run_info()) {
  const fs::path d = scratch_dir();
  const fs::path b = d / "base.db", c = d / "cand.db";
  fs::remove(b);
  fs::remove(c);
  add_fake_run(b, fake_run_info(), {timed_case(10, 2)});
  add_fake_run(c, cand_info, {timed_case(ttft_ms, 2)});
  return {b, c};
}

int count_lines(const std::string& s) { return int(std::count(s.begin(), s.end(), '\n')); }

}  // namespace

// One run per side is no valid test (issue 40): exit 3 whatever the verdicts, and no verdict
// says "same"; --threshold-gate asks for the threshold-only gate by name.
TEST(CompareCli, OneRunPerSideIsNoValidTestAndExitsThree) {
  const auto [b, c] = two_dbs(10);
  const Result r = run_llmbench("compare " + b.string() + " " + c.string());
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(r.out.rfind("llmbench compare: no valid test (one run per side): 0 slower beyond "
                        "threshold, 0 faster beyond threshold, 3 same or unknown (", 0), 0u)
      << r.out;
  EXPECT_NE(r.out.find("tiny fp32 cpu b2 p16 n3 t2  ttft_ms"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("same or unknown"), std::string::npos) << r.out;
  // The only stderr line says why, with the exit code and the advice for engine runs.
  EXPECT_EQ(r.err.rfind("warning: one run per side", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("exit code 3"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--run BASE_BIN CAND_BIN"), std::string::npos) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  // The warning once on stdout too (the table's own stream), never twice.
  const auto w = r.out.find("warning: one run per side");
  ASSERT_NE(w, std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("warning: one run per side", w + 1), std::string::npos) << r.out;
  EXPECT_EQ(run_llmbench("compare " + b.string() + " " + c.string() + " --threshold-gate")
                .exit_code, 0);
  EXPECT_EQ(run_llmbench("compare " + b.string() + " " + c.string() + " --allow-inconclusive")
                .exit_code, 0);
}

TEST(CompareCli, ThresholdGateExitsOneAndMarkdownIsAPullRequestComment) {
  const auto [b, c] = two_dbs(11);
  const std::string gate = " --threshold-gate";
  const Result r = run_llmbench("compare " + b.string() + " " + c.string() + " --format md" + gate);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out.rfind("**llmbench compare: no valid test (one run per side): 2 slower beyond "
                        "threshold, 0 faster beyond threshold, 1 same or unknown**\n", 0), 0u)
      << r.out;
  EXPECT_NE(r.out.find("| ttft_ms | 8 | 8 |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| slower beyond threshold |"), std::string::npos) << r.out;
  // Without the gate asked for by name: the same verdicts, exit 3 (no valid test).
  EXPECT_EQ(run_llmbench("compare " + b.string() + " " + c.string()).exit_code, 3);
  // A higher threshold absorbs the 10%: exit 0.
  EXPECT_EQ(run_llmbench("compare " + b.string() + " " + c.string() + " --threshold 12" + gate)
                .exit_code, 0);
  // Only TPOT (unchanged): exit 0.
  EXPECT_EQ(run_llmbench("compare " + b.string() + " " + c.string() + " --metric tpot" + gate)
                .exit_code, 0);
  // The candidate as base: an improvement, exit 0.
  const Result back = run_llmbench("compare " + c.string() + " " + b.string() + gate);
  EXPECT_EQ(back.exit_code, 0);
  EXPECT_EQ(back.out.rfind("llmbench compare: no valid test (one run per side): 0 slower beyond "
                           "threshold, 2 faster beyond threshold, 1 same or unknown", 0), 0u)
      << back.out;
}

TEST(CompareCli, JsonAndCsv) {
  const auto [b, c] = two_dbs(11);
  const Result j = run_llmbench("compare " + b.string() + ":1 " + c.string() +
                                " --format json --metric all");
  EXPECT_EQ(j.exit_code, 3) << j.err;
  const auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["summary"]["valid_test"], false);
  EXPECT_EQ(doc["summary"]["regressions"], 0);
  EXPECT_EQ(doc["summary"]["slower_beyond_threshold"], 3);  // ttft, e2e, throughput
  EXPECT_EQ(doc["cases"][0]["metrics"]["throughput"]["verdict"], "slower beyond threshold");
  EXPECT_EQ(doc["cases"][0]["metrics"]["throughput"]["unit"], "tok/s");
  EXPECT_EQ(doc["base"]["db"], b.string());
  const Result csv = run_llmbench("compare " + b.string() + " " + c.string() + " --format csv");
  EXPECT_EQ(csv.exit_code, 3);
  EXPECT_EQ(count_lines(csv.out), 4) << csv.out;  // header + ttft, tpot, e2e
  EXPECT_EQ(csv.out.rfind("case,metric,n_base,", 0), 0u) << csv.out;
}

TEST(CompareCli, EnvironmentDifferencesGoToStderrOneLineEach) {
  auto info = fake_run_info();
  info.build_type = "Debug";
  info.git_commit = "fff000";
  const auto [b, c] = two_dbs(10, info);
  const Result r = run_llmbench("compare " + b.string() + " " + c.string());
  EXPECT_EQ(r.exit_code, 3);
  // After the one-run-per-side warning (its own test below), one line per difference.
  const auto first = r.err.find('\n');
  ASSERT_NE(first, std::string::npos) << r.err;
  EXPECT_EQ(r.err.rfind("warning: one run per side", 0), 0u) << r.err;
  EXPECT_EQ(r.err.substr(first + 1),
            "warning: build_type differs: base 'Release', candidate 'Debug'\n"
            "info: git_commit differs: base 'abc123', candidate 'fff000'\n");
}

TEST(CompareCli, UnmatchedCasesAreListed) {
  const fs::path d = scratch_dir();
  const fs::path b = d / "b.db", c = d / "c.db";
  fs::remove(b);
  fs::remove(c);
  FakeCase other;
  other.batch = 8;
  add_fake_run(b, fake_run_info(), {timed_case(10, 2), timed_case(10, 2, 8, other)});
  add_fake_run(c, fake_run_info(), {timed_case(10, 2)});
  const Result r = run_llmbench("compare " + b.string() + " " + c.string());
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("1 only in base"), std::string::npos) << r.out;
  const auto row = r.out.find("tiny fp32 cpu b8 p16 n3 t2");
  ASSERT_NE(row, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("only in base", row), std::string::npos) << r.out;
}

struct CompareBadInput {
  const char* args;  // $B and $C stand for a good base and candidate database
  const char* must_mention;
};

void PrintTo(const CompareBadInput& c, std::ostream* os) { *os << c.args; }

class CompareCliBadInput : public testing::TestWithParam<CompareBadInput> {};

TEST_P(CompareCliBadInput, ExitsTwoWithOneLine) {
  const auto [b, c] = two_dbs(10);
  const fs::path d = scratch_dir();
  fs::remove(d / "other.db");
  {
    llmbench::Db other((d / "other.db").string(), llmbench::Db::Mode::kCreate);
    other.exec("CREATE TABLE t (x)");
  }
  write_file(d / "notes.txt", "not a database at all, only text that is long enough to check\n");
  std::string args = GetParam().args;
  for (auto [key, value] : {std::pair<std::string, std::string>{"$B", b.string()},
                            {"$C", c.string()},
                            {"$D", d.string()}})
    for (std::size_t at; (at = args.find(key)) != std::string::npos;) args.replace(at, 2, value);
  const std::string before = slurp(b);
  const Result r = run_llmbench(args);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(GetParam().must_mention), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_EQ(slurp(b), before);
}

INSTANTIATE_TEST_SUITE_P(
    Compare, CompareCliBadInput,
    testing::Values(
        CompareBadInput{"compare $D/missing.db $C", "missing.db' does not exist"},
        CompareBadInput{"compare $B $D/missing.db", "CAND"},
        CompareBadInput{"compare $B $D/other.db", "not an llmbench result database"},
        CompareBadInput{"compare $D/notes.txt $C", "notes.txt"},
        CompareBadInput{"compare $B:99 $C", "has no run 99"},
        CompareBadInput{"compare $B $C --metric latency", "--metric"},
        CompareBadInput{"compare $B $C --metric ttft,,e2e", "--metric"},
        CompareBadInput{"compare $B $C --alpha 0", "--alpha"},
        CompareBadInput{"compare $B $C --alpha 1", "--alpha"},
        CompareBadInput{"compare $B $C --alpha 1.5", "--alpha"},
        CompareBadInput{"compare $B $C --alpha abc", "--alpha"},
        CompareBadInput{"compare $B $C --threshold -1", "--threshold"},
        CompareBadInput{"compare $B $C --format xml", "--format"},
        CompareBadInput{"compare $B", "cand"},
        CompareBadInput{"export gbench $B", "--output"},
        CompareBadInput{"export gbench $B --run 99 -o $D/x.json", "has no run 99"},
        CompareBadInput{"export gbench $B --metric throughput -o $D/x.json", "--metric"},
        CompareBadInput{"export gbench $B --metric foo -o $D/x.json", "--metric"},
        CompareBadInput{"export gbench $D/missing.db -o $D/x.json", "does not exist"},
        CompareBadInput{"export gbench $B -o $D/no/such/dir/x.json", "-o"},
        CompareBadInput{"export", "subcommand"}),
    [](const testing::TestParamInfo<CompareBadInput>& info) {
      std::string name;
      for (const char* p = info.param.args; *p; ++p)
        name += std::isalnum(static_cast<unsigned char>(*p)) ? *p : '_';
      return name + "_" + std::to_string(info.index);
    });

TEST(ExportGbenchCli, WritesOneIterationRowPerRepetitionWithGoogleBenchmarksFields) {
  const fs::path d = scratch_dir();
  const fs::path db = d / "g.db", out = d / "g.json";
  fs::remove(db);
  fs::remove(out);
  FakeCase n1, failed;
  n1.max_new_tokens = 1;
  failed.status = "error";
  failed.batch = 64;
  add_fake_run(db, fake_run_info(), {timed_case(10, 2, 5), timed_case(7, 0, 4, n1), failed});
  const std::string before = slurp(db);
  const Result r = run_llmbench("export gbench " + db.string() + " -o " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(slurp(db), before);
  const auto j = nlohmann::json::parse(slurp(out));
  for (const char* key : {"date", "host_name", "executable", "library_build_type"})
    EXPECT_TRUE(j["context"].contains(key)) << key;
  // Machine facts llmbench does not measure are left out, not guessed.
  for (const char* key : {"num_cpus", "mhz_per_cpu", "cpu_scaling_enabled", "caches", "load_avg"})
    EXPECT_FALSE(j["context"].contains(key)) << key;
  EXPECT_TRUE(j["context"]["llmbench"].contains("threads"));
  EXPECT_EQ(j["context"]["library_build_type"], "release");
  // 5 reps x (ttft, tpot, e2e) + 4 reps x (ttft, e2e): TPOT of the n1 case and the failed
  // case have no rows.
  const auto& rows = j["benchmarks"];
  ASSERT_EQ(rows.size(), 5u * 3 + 4u * 2);
  std::set<std::string> names;
  for (const auto& row : rows) {
    for (const char* key : {"name", "family_index", "per_family_instance_index", "run_name",
                            "run_type", "repetitions", "repetition_index", "threads",
                            "iterations", "real_time", "cpu_time", "time_unit"})
      EXPECT_TRUE(row.contains(key)) << key;
    EXPECT_EQ(row["run_type"], "iteration");
    EXPECT_EQ(row["time_unit"], "ms");
    EXPECT_EQ(row["iterations"], 1);
    EXPECT_EQ(row["real_time"], row["cpu_time"]);
    EXPECT_EQ(row["name"], row["run_name"]);
    names.insert(row["name"]);
  }
  EXPECT_EQ(names.size(), 5u);
  EXPECT_EQ(rows[0]["name"], "tiny/fp32/cpu/b2/p16/n3/t2/ttft");
  EXPECT_EQ(rows[0]["repetitions"], 5);
  EXPECT_EQ(rows[4]["repetition_index"], 4);
  EXPECT_NEAR(rows[0]["real_time"].get<double>(), 10.0, 1e-9);
  EXPECT_EQ(rows[5]["name"], "tiny/fp32/cpu/b2/p16/n3/t2/tpot");
  EXPECT_NEAR(rows[5]["real_time"].get<double>(), 2.0, 1e-9);
  EXPECT_EQ(rows[5]["family_index"], 1);
  EXPECT_EQ(rows[15]["name"], "tiny/fp32/cpu/b2/p16/n1/t2/ttft");

  // --metric e2e only, to stdout.
  const Result e2e = run_llmbench("export gbench " + db.string() + " --run 1 --metric e2e -o -");
  ASSERT_EQ(e2e.exit_code, 0) << e2e.err;
  EXPECT_EQ(nlohmann::json::parse(e2e.out)["benchmarks"].size(), 9u);
}

// ---- compare --run: the interleaved mode end to end, with this llmbench as both sides ----

namespace {

// A profile of seconds: tiny, one case with decode steps, 3 repetitions per round.
fs::path tiny_profile(const fs::path& d) {
  const fs::path p = d / "gate.toml";
  write_file(p, "model = \"tiny\"\nbackend = \"cpu\"\nbatch = 1\nprompt-len = 8\n"
                "max-new-tokens = 3\nwarmup = 1\nrepeat = 3\nthreads = 1\ntrace = \"off\"\n");
  return p;
}

// The peaks given, so no roofline is measured inside the test.
const char* kPeaks = " --sweep-arg=--peak-bw-gbps --sweep-arg=10 --sweep-arg=--peak-tflops "
                     "--sweep-arg=1";

}  // namespace

TEST(CompareCliRun, InterleavedRoundsRecordEverythingAndDecideOnRounds) {
  const fs::path d = scratch_dir();
  for (const char* f : {"gate.db", "gate.base.db", "gate.cand.db", "gate.db.log"}) fs::remove(d / f);
  // A threshold no timing noise reaches: the verdict must be "same", exit 0.
  const Result r = run_llmbench(std::string("compare --run " LLMBENCH_BIN " " LLMBENCH_BIN
                                            " --config ") +
                                tiny_profile(d).string() + " --rounds 6 --seed 7 --db " +
                                (d / "gate.db").string() + " --threshold 1000 --format json" +
                                kPeaks);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["mode"], "interleaved");
  EXPECT_EQ(doc["settings"]["rounds"], 6);
  EXPECT_EQ(doc["settings"]["rounds_complete"], 6);
  EXPECT_EQ(doc["settings"]["order_seed"], 7);
  ASSERT_EQ(doc["rounds"].size(), 12u);
  for (const auto& round : doc["rounds"]) EXPECT_EQ(round["exit_code"], 0);
  ASSERT_EQ(doc["cases"].size(), 1u);
  EXPECT_EQ(doc["cases"][0]["case"].get<std::string>().rfind("tiny fp32 cpu b1 p8 n3 t1", 0), 0u);
  for (const char* m : {"ttft", "tpot", "e2e"}) {
    const auto& x = doc["cases"][0]["metrics"][m];
    EXPECT_EQ(x["verdict"], "same") << m;
    EXPECT_EQ(x["rounds"], 6) << m;
    EXPECT_EQ(x["aa_pairs"], 6) << m;  // 3 adjacent pairs per side
    EXPECT_TRUE(x["p_value"].is_number()) << m;
  }
  EXPECT_TRUE(doc["noise_floor_pct"].is_number());
  EXPECT_NE(r.err.find("noise floor"), std::string::npos) << r.err;

  // The gate database: 12 runs by round and side, every repetition's samples, the verdicts;
  // each side's database has its 6 runs.
  llmbench::Db gate((d / "gate.db").string(), llmbench::Db::Mode::kReadOnly);
  auto count = [&](llmbench::Db& db, const std::string& sql) {
    auto st = db.prepare(sql);
    st.step();
    return st.column_int(0);
  };
  EXPECT_EQ(count(gate, "SELECT count(*) FROM gate_round"), 12);
  EXPECT_EQ(count(gate, "SELECT count(DISTINCT round) FROM gate_round WHERE position = 0"), 6);
  // 6 rounds x 2 sides x 3 repetitions x 4 metrics (ttft, tpot, e2e, throughput)
  EXPECT_EQ(count(gate, "SELECT count(*) FROM gate_sample"), 6 * 2 * 3 * 4);
  EXPECT_EQ(count(gate, "SELECT count(*) FROM gate_result WHERE verdict = 'same'"), 3);
  llmbench::Db base((d / "gate.base.db").string(), llmbench::Db::Mode::kReadOnly);
  EXPECT_EQ(count(base, "SELECT count(*) FROM run"), 6);

  // The same seed gives the same A/B order.
  const Result again = run_llmbench(std::string("compare --run " LLMBENCH_BIN " " LLMBENCH_BIN
                                                " --config ") +
                                    tiny_profile(d).string() + " --rounds 6 --seed 7 --db " +
                                    (d / "again.db").string() + " --threshold 1000 --format json" +
                                    kPeaks);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const auto doc2 = nlohmann::json::parse(again.out);
  for (std::size_t i = 0; i < 12; ++i)
    EXPECT_EQ(doc2["rounds"][i]["side"], doc["rounds"][i]["side"]) << i;
}

// A gate with too few rounds to reach p < alpha cannot pass: exit 3 and a warning line (the
// issue: `--rounds 5` said "too few samples" everywhere and exited 0). Without --db its files
// go to a new directory under $TMPDIR, never the current directory.
TEST(CompareCliRun, TooFewRoundsIsInconclusiveAndLeavesNothingInTheCurrentDirectory) {
  const fs::path d = scratch_dir() / "inconclusive";
  fs::remove_all(d);
  const fs::path cwd = d / "cwd", tmp = d / "tmp";
  fs::create_directories(cwd);
  fs::create_directories(tmp);
  const std::string profile = tiny_profile(d).string();
  const fs::path was = fs::current_path();
  ::setenv("TMPDIR", tmp.c_str(), 1);
  fs::current_path(cwd);
  const Result r = run_llmbench(std::string("compare --run " LLMBENCH_BIN " " LLMBENCH_BIN
                                            " --config ") + profile +
                                " --rounds 3 --seed 5 --threshold 1000 --format md" + kPeaks,
                                d / "io");
  const Result allowed = run_llmbench(std::string("compare --run " LLMBENCH_BIN " " LLMBENCH_BIN
                                                  " --config ") + profile +
                                      " --rounds 3 --seed 5 --allow-inconclusive --format json" +
                                      kPeaks, d / "io2");
  fs::current_path(was);
  ::unsetenv("TMPDIR");

  EXPECT_EQ(r.exit_code, 3) << r.err << r.out;
  EXPECT_NE(r.err.find("warning: inconclusive: 3 of 3 metric results had too few rounds"),
            std::string::npos) << r.err;
  EXPECT_NE(r.out.find("**warning:** inconclusive"), std::string::npos) << r.out;
  EXPECT_EQ(allowed.exit_code, 0) << allowed.err;
  EXPECT_NE(allowed.err.find("warning: inconclusive"), std::string::npos) << allowed.err;
  EXPECT_EQ(nlohmann::json::parse(allowed.out)["summary"]["inconclusive"], true);

  EXPECT_TRUE(fs::is_empty(cwd)) << fs::directory_iterator(cwd)->path();
  int dirs = 0;
  for (const auto& e : fs::directory_iterator(tmp)) {
    ++dirs;
    EXPECT_EQ(e.path().filename().string().rfind("llmbench-gate.", 0), 0u) << e.path();
    for (const char* f : {"gate.db", "gate.base.db", "gate.cand.db", "gate.db.log"})
      EXPECT_TRUE(fs::exists(e.path() / f)) << e.path() / f;
  }
  EXPECT_EQ(dirs, 2);
  EXPECT_NE(r.err.find("info: the gate's databases and log go to " + tmp.string()),
            std::string::npos) << r.err;
}

TEST(CompareCliRun, FailingCandidateAndBadArguments) {
  const fs::path d = scratch_dir();
  const fs::path broken = d / "broken.sh";
  write_file(broken, "#!/bin/sh\nexit 3\n");
  fs::permissions(broken, fs::perms::owner_all);
  const std::string profile = tiny_profile(d).string();
  const Result r = run_llmbench(std::string("compare --run " LLMBENCH_BIN " ") + broken.string() +
                                " --config " + profile + " --rounds 2 --db " +
                                (d / "g.db").string() + kPeaks);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("exit code 3"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no round completed"), std::string::npos) << r.err;

  EXPECT_EQ(run_llmbench("compare --run /no/such/llmbench " LLMBENCH_BIN " --config " + profile)
                .exit_code, 2);
  const Result no_config = run_llmbench("compare --run " LLMBENCH_BIN " " LLMBENCH_BIN);
  EXPECT_EQ(no_config.exit_code, 2);
  EXPECT_NE(no_config.err.find("--config"), std::string::npos) << no_config.err;
}

TEST(CompareCli, TwoDatabasesWarnThatOneRunPerSideHasNoValidPValue) {
  const auto [b, c] = two_dbs(11);
  const Result r = run_llmbench("compare " + b.string() + " " + c.string() + " --format json");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("warning: one run per side"), std::string::npos) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["settings"]["verdict_rule"], "one run per side: no valid test; a change only "
                                             "where the whole interval is beyond the threshold");
  // The old rule on request: no warning.
  const Result old = run_llmbench("compare " + b.string() + " " + c.string() +
                                  " --repetitions-independent");
  EXPECT_EQ(old.exit_code, 1);
  EXPECT_EQ(old.err.find("one run per side"), std::string::npos) << old.err;
}

TEST(CompareCli, SeveralRunsPerSideMakeTheRunTheUnit) {
  const fs::path d = scratch_dir();
  const fs::path b = d / "base.db", c = d / "cand.db";
  fs::remove(b);
  fs::remove(c);
  // Four runs per side; the candidate's are 10% slower. Each run contributes one sample (its
  // median), so the test is 4 runs against 4: the smallest p, 2 / C(8, 4) = 0.0286.
  for (double t : {10.0, 10.1, 9.9, 10.05}) {
    add_fake_run(b, fake_run_info(), {timed_case(t, 2)});
    add_fake_run(c, fake_run_info(), {timed_case(t * 1.1, 2)});
  }
  const Result r = run_llmbench("compare " + b.string() + ":all " + c.string() + ":all --format json");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("info: runs as the unit: 4 base and 4 candidate runs"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("one run per side"), std::string::npos) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["settings"]["verdict_rule"], "p < alpha and threshold (one sample per run)");
  const auto& ttft = doc["cases"][0]["metrics"]["ttft"];
  EXPECT_EQ(ttft["n_base"], 4);
  EXPECT_EQ(ttft["n_candidate"], 4);
  EXPECT_NEAR(ttft["p_value"].get<double>(), 2.0 / 70.0, 1e-12);
  EXPECT_EQ(ttft["verdict"], "slower");
  // Three runs against three cannot reach p < 0.05: too few samples, so the comparison is
  // inconclusive (exit 3 with a warning), unless --allow-inconclusive.
  const Result three = run_llmbench("compare " + b.string() + ":1,2,3 " + c.string() + ":1,2,3");
  EXPECT_EQ(three.exit_code, 3) << three.err;
  EXPECT_NE(three.out.find("too few samples"), std::string::npos) << three.out;
  EXPECT_NE(three.err.find("warning: inconclusive: 3 of 3 metric results had too few samples"),
            std::string::npos) << three.err;
  const Result allowed = run_llmbench("compare " + b.string() + ":1,2,3 " + c.string() +
                                      ":1,2,3 --allow-inconclusive --format json");
  EXPECT_EQ(allowed.exit_code, 0) << allowed.err;
  EXPECT_NE(allowed.err.find("warning: inconclusive"), std::string::npos) << allowed.err;
  const auto allowed_doc = nlohmann::json::parse(allowed.out);
  EXPECT_EQ(allowed_doc["summary"]["inconclusive"], true);
  EXPECT_EQ(allowed_doc["warnings"][0].get<std::string>().rfind("inconclusive: ", 0), 0u);
  EXPECT_EQ(run_llmbench("compare " + b.string() + ":1,x " + c.string()).exit_code, 2);
  EXPECT_EQ(run_llmbench("compare " + b.string() + ":1,9 " + c.string()).exit_code, 2);
}
