// `llmbench bisect` end to end on a scratch git repository made here: its commits change a
// planted slowdown (the file `slowdown`, read by a two-line build script that writes a wrapper
// of this llmbench with LLMBENCH_PLANTED_SLOWDOWN_PCT set), so bisect must name exactly the
// commit that raised it; a range without it ends "no regression in range"; running the first
// bisect again resumes from its stored steps without a new gate. The slowdown is planted large
// (matmuls take 21 times as long: several times the case's time) and the threshold wide (200%),
// because this test checks the bisection, not the gate's power: a good commit must be decided
// "same" within --max-rounds even when other jobs load this 2-core machine (per-round log ratios
// with a standard deviation of 0.4 were seen here under a load average of 6).
#include <gtest/gtest.h>

#include "tests/cli/llmbench_process.h"
#include "tools/store/sqlite_db.h"

using namespace llmbench_test;

namespace {

int sh(const std::string& cmd) {
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string git_out(const fs::path& repo, const std::string& args) {
  const fs::path out = repo.parent_path() / "git.out";
  sh("git -C " + repo.string() + " " + args + " > " + out.string());
  std::string s = slurp(out);
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

// Six commits: c0..c2 without the slowdown, c3 (the culprit) to c5 with it; with `speedup`
// the other way round (c3 removes it).
fs::path make_repo(const fs::path& d, bool speedup = false) {
  const fs::path repo = d / (speedup ? "fast_repo" : "repo");
  fs::remove_all(repo);
  fs::create_directories(repo);
  write_file(repo / "build.sh",
             "#!/bin/sh\n# build.sh OUT: 'builds' llmbench with this commit's planted slowdown\n"
             "printf '#!/bin/sh\\nLLMBENCH_PLANTED_SLOWDOWN_PCT=%s exec " LLMBENCH_BIN
             " \"$@\"\\n' \"$(cat slowdown)\" > \"$1\" && chmod +x \"$1\"\n");
  const std::string git = "git -C " + repo.string() + " -c user.name=t -c user.email=t@example.com ";
  EXPECT_EQ(sh(git + "init -q -b main"), 0);
  for (int i = 0; i < 6; ++i) {
    write_file(repo / "slowdown", (i >= 3) != speedup ? "2000\n" : "0\n");
    write_file(repo / "notes.txt", "commit " + std::to_string(i) + "\n");
    EXPECT_EQ(sh(git + "add -A && " + git + "commit -q -m 'c" + std::to_string(i) +
                 (i == 3 ? (speedup ? ": the fast one" : ": the slow one") : "") + "'"),
              0);
  }
  return repo;
}

std::string tiny_profile(const fs::path& d) {
  const fs::path p = d / "tiny.toml";
  write_file(p, "model = \"tiny\"\nbackend = \"cpu\"\nbatch = 1\nprompt-len = 16\n"
                "max-new-tokens = 4\nwarmup = 1\nrepeat = 3\nthreads = 1\ntrace = \"off\"\n");
  return p.string();
}

int count(const fs::path& db, const std::string& sql) {
  llmbench::Db d(db.string(), llmbench::Db::Mode::kReadOnly);
  auto st = d.prepare(sql);
  st.step();
  return int(st.column_int(0));
}

}  // namespace

TEST(BisectCli, NamesExactlyTheSlowCommitAndResumes) {
  const fs::path d = scratch_dir();
  const fs::path repo = make_repo(d);
  const std::string c0 = git_out(repo, "rev-parse HEAD~5"), c2 = git_out(repo, "rev-parse HEAD~3"),
                    c3 = git_out(repo, "rev-parse HEAD~2"), c5 = git_out(repo, "rev-parse HEAD");
  const fs::path work = d / "work";
  fs::remove_all(work);
  const std::string common = " --build 'sh build.sh {out}' --config " + tiny_profile(d) +
                             " --metric e2e --threshold 200 --max-rounds 12 --work " +
                             work.string() +
                             " --sweep-arg=--peak-bw-gbps --sweep-arg=10 --sweep-arg=--peak-tflops"
                             " --sweep-arg=1";
  const fs::path was = fs::current_path();
  fs::current_path(repo);
  const Result r = run_llmbench("bisect --good " + c0 + " --bad " + c5 + common, d / "first");
  const Result again = run_llmbench("bisect --good " + c0 + " --bad main" + common, d / "again");
  const Result none = run_llmbench("bisect --good " + c0 + " --bad " + c2 + common, d / "none");
  const Result bad_rev = run_llmbench("bisect --good nosuchrev --bad " + c5 + common, d / "bad");
  const Result reversed = run_llmbench("bisect --good " + c5 + " --bad " + c0 + common, d / "rev");
  fs::current_path(was);

  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("first bad commit: " + c3 + " c3: the slow one"), std::string::npos) << r.out;
  // The bad end, then c2 (good) and c3 (bad): three steps, each with its evidence.
  EXPECT_NE(r.out.find("step 1: " + c5.substr(0, 7) + " bad"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("step 2: " + c2.substr(0, 7) + " good"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("step 3: " + c3.substr(0, 7) + " bad"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("e2e_ms   slower"), std::string::npos) << r.out;
  std::printf("%s", r.out.c_str());
  const fs::path db = work / "bisect.db";
  EXPECT_EQ(count(db, "SELECT count(*) FROM bisect_step WHERE bisect_id = 1"), 3);
  EXPECT_EQ(count(db, "SELECT count(*) FROM bisect WHERE status = 'found' AND first_bad = '" + c3 + "'"), 1);
  EXPECT_EQ(count(db, "SELECT count(DISTINCT gate_id) FROM bisect_step WHERE bisect_id = 1"), 3);
  // Builds are cached by commit: c0, c2, c3, c5.
  int builds = 0;
  for (const auto& e : fs::directory_iterator(work / "builds")) builds += fs::exists(e.path() / "llmbench");
  EXPECT_EQ(builds, 4);

  // Again (the same range by another name): every step comes from the database, no new gate.
  ASSERT_EQ(again.exit_code, 0) << again.err << again.out;
  EXPECT_NE(again.out.find("first bad commit: " + c3), std::string::npos) << again.out;
  EXPECT_NE(again.err.find("resuming bisect 1"), std::string::npos) << again.err;
  EXPECT_EQ(again.err.find("info: building"), std::string::npos) << again.err;
  EXPECT_NE(again.out.find("(decided before) step 1: " + c5.substr(0, 7)), std::string::npos) << again.out;
  EXPECT_NE(again.out.find("(decided before) step 3: " + c3.substr(0, 7)), std::string::npos) << again.out;

  ASSERT_EQ(none.exit_code, 0) << none.err << none.out;
  EXPECT_NE(none.out.find("no regression in range " + c0.substr(0, 7) + ".." + c2.substr(0, 7)),
            std::string::npos) << none.out;
  // Four gates in all: three of the first bisect (none when it ran again), one of this range.
  EXPECT_EQ(count(db, "SELECT count(*) FROM gate"), 4);

  EXPECT_EQ(bad_rev.exit_code, 2);
  EXPECT_NE(bad_rev.err.find("--good: 'nosuchrev' is not a commit"), std::string::npos) << bad_rev.err;
  EXPECT_EQ(reversed.exit_code, 2);
  EXPECT_NE(reversed.err.find("is not an ancestor"), std::string::npos) << reversed.err;
}

// --find faster: the same bisection for the commit that made the case faster (git bisect's
// old/new terms), stored with find = 'faster'.
TEST(BisectCli, FindFasterNamesTheCommitThatMadeItFaster) {
  const fs::path d = scratch_dir();
  const fs::path repo = make_repo(d, /*speedup=*/true);
  const std::string c0 = git_out(repo, "rev-parse HEAD~5"), c3 = git_out(repo, "rev-parse HEAD~2"),
                    c5 = git_out(repo, "rev-parse HEAD");
  const fs::path work = d / "work_fast";
  fs::remove_all(work);
  const std::string common = " --find faster --build 'sh build.sh {out}' --config " +
                             tiny_profile(d) + " --metric e2e --threshold 200 --max-rounds 12 --work " +
                             work.string() +
                             " --sweep-arg=--peak-bw-gbps --sweep-arg=10 --sweep-arg=--peak-tflops"
                             " --sweep-arg=1";
  const fs::path was = fs::current_path();
  fs::current_path(repo);
  const Result r = run_llmbench("bisect --good " + c0 + " --bad " + c5 + common, d / "fast");
  const Result bad_find = run_llmbench("bisect --good " + c0 + " --bad " + c5 + common +
                                       " --find sideways", d / "sideways");
  fs::current_path(was);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("first faster commit: " + c3 + " c3: the fast one"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("step 1: " + c5.substr(0, 7) + " new"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("e2e_ms   faster"), std::string::npos) << r.out;
  EXPECT_EQ(count(work / "bisect.db", "SELECT count(*) FROM bisect WHERE find = 'faster' AND "
                                      "status = 'found' AND first_bad = '" + c3 + "'"), 1);
  EXPECT_EQ(bad_find.exit_code, 2);
  EXPECT_NE(bad_find.err.find("--find"), std::string::npos) << bad_find.err;
}
