// What `llmbench run` prints and stores, end to end through the binary: one field list behind
// every format and the database (names, csv precision and empty cells, jsonl lines that
// survive a kill, the run in json, n and spreads in the table), shards that merge back into
// one sweep, and the store under concurrent writers and foreign databases.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <algorithm>
#include <sstream>
#include <thread>

#include "tests/cli/llmbench_process.h"
#include "tools/store/result_fields.h"
#include "tools/store/sqlite_db.h"
#include "tools/store/store.h"

namespace llmbench {
namespace {

using llmbench_test::Result;
using llmbench_test::run_llmbench;
using llmbench_test::scratch_dir;
using llmbench_test::slurp;
namespace fs = std::filesystem;

const std::string kTiny =
    " --model tiny --prompt-len 8 --repeat 2 --warmup 0 --quiet --peak-bw-gbps 20"
    " --peak-tflops 0.2 ";

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string cell;
  while (std::getline(ss, cell, sep)) out.push_back(cell);
  if (!line.empty() && line.back() == sep) out.emplace_back();
  return out;
}

std::vector<std::string> lines(const std::string& text) {
  auto out = split(text, '\n');
  if (!out.empty() && out.back().empty()) out.pop_back();
  return out;
}

std::set<std::string> columns(const fs::path& db, const std::string& table) {
  Db d(db.string(), Db::Mode::kReadOnly);
  const std::vector<std::string> cols = d.columns(table);
  return {cols.begin(), cols.end()};
}

TEST(Outputs, EveryFormatAndTheDatabaseUseTheFieldListNames) {
  const fs::path dir = scratch_dir();
  const fs::path db = dir / "r.db";
  const Result csv = run_llmbench("run" + kTiny + "--max-new-tokens 1 --format csv --db " +
                                  db.string(), dir);
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  std::vector<std::string> want_csv, want_table, want_db;
  for (const ResultField& f : result_fields()) {
    if (f.outputs & kCsv) want_csv.emplace_back(f.name);
    if (f.outputs & kTable) want_table.emplace_back(f.name);
    if (f.outputs & kDb) want_db.emplace_back(f.name);
  }
  // csv: the schema version, run and commit first on every row, then the field list.
  std::vector<std::string> with_stamp = {"schema_version", "run_id", "git_commit"};
  with_stamp.insert(with_stamp.end(), want_csv.begin(), want_csv.end());
  EXPECT_EQ(split(lines(csv.out).at(0), ','), with_stamp);
  const Result table = run_llmbench("run" + kTiny + "--max-new-tokens 1 --db " + db.string(), dir);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  std::stringstream header(lines(table.out).at(0));
  std::vector<std::string> got;
  for (std::string w; header >> w;) got.push_back(w);
  EXPECT_EQ(got, want_table);
  const auto have = columns(db, "bench_case");
  for (const auto& name : want_db) EXPECT_TRUE(have.count(name)) << name;
  // Old names are gone everywhere.
  for (const char* old : {"ttft_ms", "e2e_ms", "trace_ttft_x", "tpot_p99_ms", "prompt", "gen"}) {
    EXPECT_FALSE(have.count(old)) << old;
    EXPECT_EQ(std::find(got.begin(), got.end(), old), got.end()) << old;
  }
}

TEST(Outputs, CsvHasFullPrecisionAndEmptyCellsForNotApplicable) {
  const fs::path dir = scratch_dir();
  const Result r = run_llmbench("run" + kTiny + "--max-new-tokens 1 --trace off --format csv "
                                "--db " + (dir / "r.db").string(), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = lines(r.out);
  ASSERT_EQ(rows.size(), 2u);
  const auto head = split(rows[0], ','), cells = split(rows[1], ',');
  ASSERT_EQ(head.size(), cells.size());
  auto at = [&](const std::string& name) {
    return cells[std::size_t(std::find(head.begin(), head.end(), name) - head.begin())];
  };
  for (const char* na : {"tpot_ms_mean", "tpot_ms_p99", "mbu", "decode_tok_s",
                         "trace_overhead_ttft", "trace_overhead_tpot"})
    EXPECT_EQ(at(na), "") << na;
  EXPECT_EQ(r.out.find("n/a"), std::string::npos);
  EXPECT_EQ(at("trace"), "off");  // the trace level is text; its overheads are empty above
  // Full precision: the median TTFT in ms of a tiny run has far more than 2 decimals.
  const std::string ttft = at("ttft_ms_p50");
  ASSERT_NE(ttft.find('.'), std::string::npos) << ttft;
  EXPECT_GT(ttft.size() - ttft.find('.') - 1, 2u) << ttft;
}

TEST(Outputs, JsonCarriesTheRun) {
  const fs::path dir = scratch_dir();
  for (const char* f : {"r.db", "r.db-wal", "r.db-shm"}) fs::remove(dir / f);
  const Result r = run_llmbench("run" + kTiny + "--max-new-tokens 2 --threads 1 --format json "
                                "--db " + (dir / "r.db").string(), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"id", "started_at", "command_line", "git_commit", "build_type", "host",
                          "cpu", "gpu", "threads"})
    EXPECT_TRUE(j["run"].contains(key)) << key;
  EXPECT_EQ(j["run"]["id"], 1);
  EXPECT_EQ(j["run"]["threads"], 1);
  EXPECT_NE(j["run"]["command_line"].get<std::string>().find("--format json"), std::string::npos);
  EXPECT_EQ(j["cases"][0]["n"], 2);
  EXPECT_GT(j["cases"][0]["ttft_ms_p50"].get<double>(), 0);
}

// Issue 40: the default table fits a 120-column terminal with no trailing blanks; the wide one
// (--format wide) adds n, the spreads, p99, e2e, variants and the rest.
TEST(Outputs, TableFits120ColumnsAndWideShowsSpreadsAndWarnsOnAThinP99) {
  const fs::path dir = scratch_dir();
  const Result t = run_llmbench("run" + kTiny + "--max-new-tokens 3 --db " +
                                (dir / "t.db").string(), dir / "t");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  std::istringstream lines(t.out);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_TRUE(line.empty() || line.back() != ' ') << "trailing blank: '" << line << "'";
    if (line.rfind("schema version", 0) == 0) break;  // the table ends with its stamp line
    EXPECT_LE(line.size(), 120u) << line;
  }
  EXPECT_EQ(t.out.find("ttft_ms_p10-p90"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("--format wide"), std::string::npos) << t.out;
  const Result r = run_llmbench("run" + kTiny + "--max-new-tokens 3 --format wide --db " +
                                (dir / "r.db").string(), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("ttft_ms_p10-p90"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tpot_ms_p10-p90"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("roof_check"), std::string::npos) << r.out;
  // 2 repetitions x 2 decode steps: a p99 over 4 samples.
  EXPECT_NE(r.out.find("warning: tpot_ms_p99 of 1 case(s) rests on as few as 4 decode steps"),
            std::string::npos) << r.out;
}

TEST(Outputs, JsonlWritesEachCaseAsItEndsSoAKilledSweepLeavesWholeLines) {
  const fs::path dir = scratch_dir();
  const fs::path out = dir / "cases.jsonl";
  fs::remove(dir / "r.db");
  fs::remove(out);  // a previous run's lines would end the wait below before this run wrote
  // Six tiny cases, then slower ones (the small preset), killed once the first lines are out.
  const std::string cmd = "LLMBENCH_CACHE_DIR=" + (dir / "cache").string() + " exec " LLMBENCH_BIN
                          " run --model tiny,small --batch 1,2,4 --prompt-len 8,128 "
                          "--max-new-tokens 2 --repeat 2 --quiet --peak-bw-gbps 20 "
                          "--peak-tflops 0.2 --format jsonl --db " + (dir / "r.db").string() +
                          " > " + out.string() + " 2> /dev/null";
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (lines(slurp(out)).size() < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the sweep ended before it was killed";
  const auto got = lines(slurp(out));
  ASSERT_GE(got.size(), 2u);
  ASSERT_LT(got.size(), 12u);
  for (const auto& line : got) {
    const auto j = nlohmann::json::parse(line);  // every line whole
    EXPECT_EQ(j["run_id"], 1);
    EXPECT_EQ(j["schema_version"], kSchemaVersion);
    EXPECT_FALSE(j["git_commit"].get<std::string>().empty());
    EXPECT_EQ(j["status"], "ok");
  }
}

// Every format names the schema version, the run and the commit: csv on every row (a row
// pasted elsewhere still says where it came from), json at the top, table and md under the
// table.
TEST(Outputs, EveryFormatNamesTheSchemaVersionRunAndCommit) {
  const fs::path dir = scratch_dir();
  const fs::path db = dir / "r.db";
  for (const char* f : {"r.db", "r.db-wal", "r.db-shm"}) fs::remove(dir / f);
  const std::string args = "run" + kTiny + "--batch 1,2 --max-new-tokens 1 --db " + db.string();
  const Result json = run_llmbench(args + " --format json", dir);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto j = nlohmann::ordered_json::parse(json.out);
  EXPECT_EQ(j.begin().key(), "schema_version");
  EXPECT_EQ(j["schema_version"], kSchemaVersion);
  const std::string commit = j["run"]["git_commit"];
  ASSERT_FALSE(commit.empty());
  const Result csv = run_llmbench(args + " --format csv", dir);
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  const auto rows = lines(csv.out);
  ASSERT_EQ(rows.size(), 3u);
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const auto cells = split(rows[i], ',');
    EXPECT_EQ(cells.at(0), std::to_string(kSchemaVersion));
    EXPECT_EQ(cells.at(1), "2");  // the second run of the database
    EXPECT_EQ(cells.at(2), commit);
  }
  for (const char* format : {"table", "md"}) {
    const Result t = run_llmbench(args + " --format " + format, dir);
    ASSERT_EQ(t.exit_code, 0) << t.err;
    EXPECT_NE(t.out.find("schema version " + std::to_string(kSchemaVersion) + ", run_id " +
                         (format == std::string("table") ? "3" : "4") + ", commit " + commit),
              std::string::npos) << t.out;
  }
}

// `--version` names the commit of the checkout it was built from, even after an incremental
// build that followed a new commit (CMake configures again when HEAD moves). Skipped where
// the sources are not a git checkout (a release tarball: the commit is "unknown").
TEST(Outputs, VersionNamesTheCheckoutsCommit) {
  std::string head;
  if (FILE* p = popen("git -C '" LLMBENCH_SOURCE_DIR "' rev-parse --short=12 HEAD 2>/dev/null", "r")) {
    char buf[64] = {};
    if (std::fgets(buf, sizeof buf, p)) head = buf;
    if (pclose(p) != 0) head.clear();
  }
  if (head.size() < 12) GTEST_SKIP() << "not a git checkout";
  head.resize(12);
  const Result v = run_llmbench("--version", scratch_dir());
  ASSERT_EQ(v.exit_code, 0) << v.err;
  EXPECT_NE(v.out.find("commit " + head), std::string::npos) << v.out << " (HEAD " << head << ")";
}

TEST(Outputs, MergedShardsReadAsOneSweep) {
  const fs::path dir = scratch_dir();
  for (const char* f : {"s1.db", "s2.db", "all.db", "whole.db"}) fs::remove(dir / f);
  const std::string sweep = "run --model tiny --batch 1,2,4 --prompt-len 16 --max-new-tokens 4 "
                            "--repeat 3 --warmup 0 --trace off --quiet --peak-bw-gbps 20 "
                            "--peak-tflops 0.2 ";
  for (int k = 1; k <= 2; ++k)
    ASSERT_EQ(run_llmbench(sweep + "--shard " + std::to_string(k) + "/2 --db " +
                               (dir / ("s" + std::to_string(k) + ".db")).string(), dir)
                  .exit_code, 0);
  ASSERT_EQ(run_llmbench("merge " + (dir / "s1.db").string() + " " + (dir / "s2.db").string() +
                             " -o " + (dir / "all.db").string() + " --quiet", dir).exit_code, 0);
  {
    Db d((dir / "all.db").string(), Db::Mode::kReadOnly);
    auto q = d.prepare("SELECT COUNT(DISTINCT sweep_key), COUNT(DISTINCT plan_key),"
                       " COUNT(DISTINCT run_group) FROM run");
    ASSERT_TRUE(q.step());
    EXPECT_EQ(q.column_int(0), 1);  // shards of one plan share its sweep key
    EXPECT_EQ(q.column_int(1), 2);  // and keep their own resume keys
    EXPECT_EQ(q.column_int(2), 1);  // one run group
  }
  const Result summary = run_llmbench("query " + (dir / "all.db").string() +
                                      " case_summary --format json", dir);
  ASSERT_EQ(summary.exit_code, 0) << summary.err;
  EXPECT_EQ(nlohmann::json::parse(summary.out).size(), 3u) << summary.out;
  ASSERT_EQ(run_llmbench(sweep + "--db " + (dir / "whole.db").string(), dir).exit_code, 0);
  const Result cmp = run_llmbench("compare " + (dir / "whole.db").string() + " " +
                                  (dir / "all.db").string() + " --threshold 1000 --format json",
                                  dir);
  ASSERT_NE(cmp.exit_code, 2) << cmp.err;
  const auto j = nlohmann::json::parse(cmp.out);
  EXPECT_EQ(j["cases"].size(), 3u) << cmp.out;
  EXPECT_EQ(cmp.out.find("only in"), std::string::npos) << cmp.out;
}

TEST(Outputs, PerCaseQueriesCarryTheWholeCaseKey) {
  const fs::path dir = scratch_dir();
  ASSERT_EQ(run_llmbench("run" + kTiny + "--max-new-tokens 2 --kv-cache prealloc,concat,paged "
                         "--trace off --db " + (dir / "r.db").string(), dir).exit_code, 0);
  for (const char* q : {"latency_stats", "case_summary"}) {
    const Result r = run_llmbench("query " + (dir / "r.db").string() + " " + q + " --format json",
                                  dir);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::set<std::string> keys;
    for (const auto& row : nlohmann::json::parse(r.out)) {
      for (const char* k : {"model", "dtype", "backend", "batch", "prompt_len", "max_new_tokens",
                            "variants"})
        EXPECT_TRUE(row.contains(k)) << q << " " << k;
      keys.insert(row.dump());
    }
    EXPECT_EQ(keys.size(), 3u) << q;
  }
}

// ---- the store under concurrent writers and foreign databases ----------------------------

TEST(Store, TwoRunsRacingOnANewDatabaseBothLand) {
  const fs::path dir = scratch_dir();
  const std::string run = "LLMBENCH_CACHE_DIR=" + (dir / "cache").string() + " " LLMBENCH_BIN
                          " run --model tiny --prompt-len 8 --max-new-tokens 2 --repeat 1 "
                          "--warmup 0 --trace off --quiet --peak-bw-gbps 20 --peak-tflops 0.2 "
                          "--format csv --db ";
  constexpr int kTrials = 12;
  for (int t = 0; t < kTrials; ++t) {
    const fs::path db = dir / ("race" + std::to_string(t) + ".db");
    for (const char* s : {"", "-wal", "-shm"}) fs::remove(db.string() + s);
    // The second starts 0..44 ms later, covering the windows where one creates the schema or
    // switches to WAL while the other opens, checks or writes (each broke runs before the
    // set-up lock, about 1 trial in 80 at 10-33 ms on a loaded machine).
    const std::string stagger = "sleep " + std::to_string(0.004 * t) + "; ";
    const std::string cmd = "(" + run + db.string() + " > /dev/null 2> " + (dir / "e1").string() +
                            "; echo $? > " + (dir / "c1").string() + ") & (" + stagger + run +
                            db.string() +
                            " > /dev/null 2> " + (dir / "e2").string() + "; echo $? > " +
                            (dir / "c2").string() + ") & wait";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    EXPECT_EQ(slurp(dir / "c1"), "0\n") << "trial " << t << ": " << slurp(dir / "e1");
    EXPECT_EQ(slurp(dir / "c2"), "0\n") << "trial " << t << ": " << slurp(dir / "e2");
    Db d(db.string(), Db::Mode::kReadOnly);
    EXPECT_EQ(d.user_version(), kSchemaVersion) << "trial " << t;
    auto q = d.prepare("SELECT (SELECT COUNT(*) FROM run), (SELECT COUNT(*) FROM bench_case)");
    ASSERT_TRUE(q.step());
    EXPECT_EQ(q.column_int(0), 2) << "trial " << t;
    EXPECT_EQ(q.column_int(1), 2) << "trial " << t;
  }
}

TEST(Store, AForeignDatabaseIsRefusedAndLeftByteIdentical) {
  const fs::path dir = scratch_dir();
  const fs::path db = dir / "foreign.db";
  for (const char* s : {"", "-wal", "-shm"}) fs::remove(db.string() + s);
  {
    Db d(db.string(), Db::Mode::kCreate);
    d.exec("CREATE TABLE run (x INTEGER); CREATE TABLE event (y TEXT);"
           " CREATE TABLE bench_case (z REAL); INSERT INTO run VALUES (1);");
  }
  const std::string before = slurp(db);
  const Result r = run_llmbench("run" + kTiny + "--max-new-tokens 1 --db " + db.string(), dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(lines(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find("is not an llmbench database"), std::string::npos) << r.err;
  const Result imp = run_llmbench("import chrome " LLMBENCH_FIXTURES "/torch_1_13_cpu_trace.json"
                                  " --db " + db.string(), dir);
  EXPECT_EQ(imp.exit_code, 2) << imp.err;
  EXPECT_EQ(slurp(db), before);
  EXPECT_FALSE(fs::exists(db.string() + "-wal"));
}

TEST(Store, AVersion4DatabaseMigratesAndKeepsItsResults) {
  const fs::path dir = scratch_dir();
  const fs::path db = dir / "v4.db";
  for (const char* s : {"", "-wal", "-shm"}) fs::remove(db.string() + s);
  {
    Db d(db.string(), Db::Mode::kCreate);
    create_schema_version(d, 4);
    d.exec("INSERT INTO run (id, started_at, command_line, llmbench_version, git_commit,"
           " build_type, host, cpu, gpu, driver, threads, peak_bandwidth_gbps, peak_tflops,"
           " peak_source) VALUES (1, 't', 'c', 'v', 'g', 'Release', 'h', 'cpu', '', '', 2, 20,"
           " 0.2, 'test')");
    d.exec("INSERT INTO bench_case (id, run_id, model, dtype, backend, batch, prompt_len,"
           " max_new_tokens, warmup, repeat, threads, seed, distinct_prompts, variants, status,"
           " ttft_ms, e2e_ms, finished_at) VALUES (1, 1, 'tiny', 'fp32', 'cpu', 1, 8, 1, 0, 1,"
           " 2, 0, 0, '{}', 'ok', 12.5, 13.5, 't')");
  }
  // A new run on the old database migrates it, then appends.
  const Result r = run_llmbench("run" + kTiny + "--max-new-tokens 1 --db " + db.string(), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Db d(db.string(), Db::Mode::kReadOnly);
  EXPECT_EQ(d.user_version(), kSchemaVersion);
  auto q = d.prepare("SELECT ttft_ms_p50, e2e_ms_p50, ttft_ms_p10 FROM bench_case WHERE id = 1");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.column_double(0), 12.5);
  EXPECT_EQ(q.column_double(1), 13.5);
  EXPECT_TRUE(q.column_is_null(2));  // not measured then
  auto n = d.prepare("SELECT COUNT(*) FROM bench_case WHERE ttft_ms_p10 IS NOT NULL");
  ASSERT_TRUE(n.step());
  EXPECT_EQ(n.column_int(0), 1);  // the new case
  const Result s = run_llmbench("query " + db.string() + " case_summary --param run_id=1", dir);
  EXPECT_EQ(s.exit_code, 0) << s.err;
}

}  // namespace
}  // namespace llmbench

namespace llmbench {
namespace {

// The long flags `llmbench ARGS --help` lists (without --help).
std::set<std::string> help_flags(const std::string& args) {
  const Result r = run_llmbench(args + " --help");
  EXPECT_EQ(r.exit_code, 0) << args << ": " << r.err;
  std::set<std::string> out;
  // Every long name of an option line: a flag with a negation (--a,--no-a) lists both.
  const std::regex option(R"(^\s+(?:-\w,)?(--[a-z0-9-]+(?:,--[a-z0-9-]+)*))");
  const std::regex name("--[a-z0-9-]+");
  for (const auto& line : lines(r.out)) {
    std::smatch m;
    if (!std::regex_search(line, m, option)) continue;
    const std::string names = m[1];
    for (std::sregex_iterator it(names.begin(), names.end(), name), end; it != end; ++it)
      if (it->str() != "--help") out.insert(it->str());
  }
  return out;
}

TEST(Readme, CommandListAgreesWithHelp) {
  const std::string readme = slurp(LLMBENCH_SOURCE_DIR "/README.md");
  const auto start = readme.find("## Commands\n");
  ASSERT_NE(start, std::string::npos);
  const auto body = readme.find('\n', readme.find("```", start)) + 1;
  const std::string block = readme.substr(body, readme.find("```", body) - body);
  // Flags per top-level command, from every line of its entry.
  std::map<std::string, std::set<std::string>> readme_flags;
  std::string command;
  const std::regex flag(R"(--[a-z0-9-]+)");
  for (const auto& line : lines(block)) {
    if (line.starts_with("llmbench ")) {
      std::stringstream words(line.substr(9));
      words >> command;
    }
    for (std::sregex_iterator it(line.begin(), line.end(), flag), end; it != end; ++it)
      readme_flags[command].insert(it->str());
    if (line.find(" -o ") != std::string::npos) readme_flags[command].insert("--output");
  }
  // Each command's --help, with its sub-subcommands (import nsys|chrome, export chrome|gbench).
  const std::map<std::string, std::vector<std::string>> helps = {
      {"run", {"run"}},
      {"merge", {"merge"}},
      {"models", {"models"}},
      {"roofline", {"roofline"}},
      {"export-weights", {"export-weights"}},
      {"query", {"query"}},
      {"import", {"import nsys", "import chrome"}},
      {"export", {"export chrome", "export gbench"}},
      {"compare", {"compare"}},
      {"serve", {"serve"}},
      {"load", {"load"}},
      {"report", {"report"}}};
  const Result top = run_llmbench("--help");
  for (const auto& [cmd, invocations] : helps) {
    SCOPED_TRACE(cmd);
    EXPECT_NE(top.out.find("  " + cmd), std::string::npos);
    std::set<std::string> help;
    for (const auto& inv : invocations) help.merge(help_flags(inv));
    for (const auto& f : help) EXPECT_TRUE(readme_flags[cmd].count(f)) << f << " missing in README";
    for (const auto& f : readme_flags[cmd]) EXPECT_TRUE(help.count(f)) << f << " not in --help";
  }
  // sweep takes every run flag and --list; the README says so.
  EXPECT_TRUE(readme_flags["sweep"].count("--list"));
  auto sweep = help_flags("sweep");
  sweep.erase("--list");
  auto run = help_flags("run");
  run.erase("--config");  // sweep's profile is positional
  EXPECT_EQ(sweep, run);
  // run --help shows value types and ranges and groups the CUDA-only and variant flags.
  const std::string run_help = run_llmbench("run --help").out;
  for (const char* want : {"--batch LIST", "--repeat INT", "--peak-tflops FLOAT", "--shard K/N",
                           "Sequences per case, each >= 1", "CUDA only:",
                           "Engine variants (LIST flags", "--sync-check"})
    EXPECT_NE(run_help.find(want), std::string::npos) << want;
  EXPECT_LT(run_help.find("CUDA only:"), run_help.find("--sync-check"));
  // Every subcommand --help lists ends with examples.
  for (const char* cmd : {"run", "sweep", "merge", "models", "roofline", "export-weights", "query",
                          "import", "export", "compare", "export gbench", "export chrome",
                          "serve", "load", "report"})
    EXPECT_NE(run_llmbench(std::string(cmd) + " --help").out.find("Examples:\n  llmbench"),
              std::string::npos) << cmd;
}

}  // namespace
}  // namespace llmbench

namespace llmbench {
namespace {

TEST(Outputs, ThreadsZeroMeansAllInRunAsInRoofline) {
  const fs::path dir = scratch_dir();
  const Result r = run_llmbench("run" + kTiny + "--max-new-tokens 1 --threads 0 --format json "
                                "--db " + (dir / "r.db").string(), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const int all = nlohmann::json::parse(r.out)["run"]["threads"];
  const Result absent = run_llmbench("run" + kTiny + "--max-new-tokens 1 --format json --db " +
                                     (dir / "r.db").string(), dir);
  ASSERT_EQ(absent.exit_code, 0) << absent.err;
  EXPECT_EQ(nlohmann::json::parse(absent.out)["run"]["threads"], all);
  EXPECT_GE(all, 1);
}

TEST(Outputs, ModelsAsJson) {
  const Result r = run_llmbench("models --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_GE(j.size(), 3u);
  EXPECT_EQ(j[0]["model"], "tiny");
  EXPECT_TRUE(j[0]["params_m"].is_number());
  EXPECT_TRUE(j[0]["fp32_gib"].is_number());
  // int8 / int4 count blocks and scales, 34/32 and 18/32 of a byte per matrix weight; the
  // embedding table stays fp32. On tinyllama-1.1b (embedding 6% of the weights) int8 sits
  // between a quarter and a third of fp32.
  EXPECT_LT(j[0]["int4_gib"].get<double>(), j[0]["int8_gib"].get<double>());
  EXPECT_LT(j[0]["int8_gib"].get<double>(), j[0]["fp32_gib"].get<double>());
  bool seen = false;
  for (const auto& m : j) {
    if (m["model"] != "tinyllama-1.1b") continue;
    seen = true;
    EXPECT_LT(m["int8_gib"].get<double>(), m["fp32_gib"].get<double>() / 3);
    EXPECT_GT(m["int8_gib"].get<double>(), m["fp32_gib"].get<double>() / 4);
  }
  EXPECT_TRUE(seen);
}

TEST(Outputs, QueryTakesInlineSqlReadOnly) {
  const fs::path dir = scratch_dir();
  ASSERT_EQ(run_llmbench("run" + kTiny + "--max-new-tokens 1 --db " + (dir / "r.db").string(),
                         dir).exit_code, 0);
  const Result r = run_llmbench("query " + (dir / "r.db").string() +
                                " \"SELECT model, batch FROM bench_case\" --format json", dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)[0]["model"], "tiny");
  const std::string before = slurp(dir / "r.db");
  const Result w = run_llmbench("query " + (dir / "r.db").string() + " \"DELETE FROM run\"", dir);
  EXPECT_EQ(w.exit_code, 2);
  EXPECT_EQ(lines(w.err).size(), 1u) << w.err;
  EXPECT_EQ(slurp(dir / "r.db"), before);
  // Numbers at full precision without arithmetic artefacts, in csv and json alike.
  const std::string sql = " \"SELECT 130276.1 / 1e6 AS x, 0.1 + 0.2 AS y\" --format ";
  const Result csv = run_llmbench("query " + (dir / "r.db").string() + sql + "csv", dir);
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out, "x,y\n0.1302761,0.3\n");
  const Result json = run_llmbench("query " + (dir / "r.db").string() + sql + "json", dir);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("\"x\": 0.1302761,"), std::string::npos) << json.out;
  EXPECT_EQ(json.out.find("0.13027609999999998"), std::string::npos) << json.out;
}

// Every dtype's GEMM peak is stored (run row, json peaks) and each case divides by its own
// dtype's; the read roof is probed beside each case with decode steps and MBU divides by it. A
// cached read figure far above any probe (1000 GB/s) is flagged in every output.
TEST(Outputs, RunStoresEveryDtypesPeakAndProbesTheReadRoofBesideEachCase) {
  const fs::path dir = scratch_dir() / "probe";
  fs::remove_all(dir);
  fs::create_directories(dir);
  // The cache key names the CPU model: take it from a run with both peaks given.
  const Result first = run_llmbench("run" + kTiny + "--max-new-tokens 1 --threads 1 --format json "
                                    "--trace off --db " + (dir / "a.db").string(), dir);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::string cpu = nlohmann::json::parse(first.out)["run"]["cpu"];
  nlohmann::json cache;
  cache["cpu|" + cpu + "|threads=1"] = {
      {"measured_at", "test"},           {"read_gbps_best", 1000.0},
      {"fp32_gemm_tflops_best", 0.11},   {"bf16_gemm_tflops_best", 0.22},
      {"fp16_gemm_tflops_best", 0.33},   {"int8_gemm_tflops_best", 0.44},
      {"int4_gemm_tflops_best", 0.55}};
  fs::create_directories(dir / "cache");
  std::ofstream(dir / "cache" / "roofline.json") << cache.dump();

  const fs::path db = dir / "b.db";
  const Result r = run_llmbench("run --model tiny --prompt-len 8 --repeat 2 --warmup 0 --quiet "
                                "--dtype fp32,bf16 --max-new-tokens 3 --threads 1 --format json "
                                "--db " + db.string(), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const std::map<std::string, double> want = {
      {"fp32", 0.11}, {"bf16", 0.22}, {"fp16", 0.33}, {"int8", 0.44}, {"int4", 0.55}};
  for (const auto& [dtype, tflops] : want)
    EXPECT_DOUBLE_EQ(j["peaks"]["gemm_tflops"][dtype].get<double>(), tflops) << dtype;
  ASSERT_EQ(j["cases"].size(), 2u);
  for (const auto& c : j["cases"]) {
    const std::string dtype = c["dtype"];
    SCOPED_TRACE(dtype);
    // MFU's denominator: the larger of the cached peak and the compute probes beside the case.
    const double mfu_peak = std::max({want.at(dtype), c["gemm_tflops_before"].get<double>(),
                                      c["gemm_tflops_after"].get<double>()});
    EXPECT_DOUBLE_EQ(c["mfu_peak_tflops"].get<double>(), mfu_peak);
    EXPECT_NEAR(c["mfu"].get<double>() * mfu_peak, c["prefill_tflops"].get<double>(), 1e-9);
    const double before = c["read_gbps_before"], after = c["read_gbps_after"];
    EXPECT_GT(before, 0);
    EXPECT_GT(after, 0);
    EXPECT_DOUBLE_EQ(c["mbu_peak_gbps"].get<double>(), std::max(before, after));
    EXPECT_NEAR(c["mbu"].get<double>() * std::max(before, after), c["decode_gbps"].get<double>(),
                1e-9);
    EXPECT_EQ(c["roof_check"].get<std::string>().rfind("probe -", 0), 0u) << c["roof_check"];
  }
  ASSERT_TRUE(j.contains("warnings"));
  EXPECT_NE(j["warnings"].dump().find("roof check: probe -"), std::string::npos) << j["warnings"];

  Db d(db.string(), Db::Mode::kReadOnly);
  auto q = d.prepare("SELECT peak_fp32_tflops, peak_bf16_tflops, peak_fp16_tflops,"
                     " peak_int8_tflops, peak_int4_tflops, peak_bandwidth_gbps FROM run");
  ASSERT_TRUE(q.step());
  for (int i = 0; i < 5; ++i) EXPECT_DOUBLE_EQ(q.column_double(i), 0.11 * (i + 1)) << i;
  EXPECT_DOUBLE_EQ(q.column_double(5), 1000.0);
  auto c = d.prepare("SELECT count(*) FROM bench_case WHERE roof_check LIKE 'probe -%'"
                     " AND mbu_peak_gbps = max(read_gbps_before, read_gbps_after)");
  ASSERT_TRUE(c.step());
  EXPECT_EQ(c.column_int(0), 2);

  // The table and csv say so too; a case without decode steps has no probe.
  const Result t = run_llmbench("run --model tiny --prompt-len 8 --repeat 1 --warmup 0 --quiet "
                                "--max-new-tokens 2,1 --threads 1 --trace off --db " +
                                db.string(), dir);
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("warning: tiny fp32 cpu b1 p8 n2: roof check: probe -"), std::string::npos)
      << t.out;
  const Result csv = run_llmbench("run --model tiny --prompt-len 8 --repeat 1 --warmup 0 --quiet "
                                  "--max-new-tokens 1 --threads 1 --trace off --format csv --db " +
                                  db.string(), dir);
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  const auto rows = lines(csv.out);
  ASSERT_EQ(rows.size(), 2u);
  const auto header = split(rows[0], ','), row = split(rows[1], ',');
  // No decode steps: no read probe (the compute probe still runs, so roof_check has no read part).
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (header[i] == "read_gbps_before") EXPECT_EQ(row[i], "") << header[i];
    if (header[i] == "roof_check") EXPECT_EQ(row[i].find("probe -"), std::string::npos) << row[i];
  }
}

TEST(Outputs, FirstRunAtANewThreadCountSaysItMeasuresTheRoofline) {
  const fs::path dir = scratch_dir();
  fs::remove_all(dir / "cache");
  const Result r = run_llmbench("run --model tiny --prompt-len 8 --max-new-tokens 1 --repeat 1 "
                                "--threads 1 --db " + (dir / "r.db").string(), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("measuring the roofline"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("roofline measured in"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace llmbench
