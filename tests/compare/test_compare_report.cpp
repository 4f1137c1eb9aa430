// Loading, matching and reporting of `llmbench compare` on hand-built databases
// (tests/compare/compare_db.h): which run is read, the per-repetition samples of each metric,
// matching by configuration (variants normalised, trace ignored, duplicates in order, threads),
// unmatched and failed cases, environment notes, verdicts and summary, every output format,
// bad input, and that the databases are never modified.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>
#include <sstream>

#include "kernels/common/error.h"
#include "tests/compare/compare_db.h"
#include "tools/compare/compare_match.h"
#include "tools/report/compare_output.h"
#include "tools/compare/compare_report.h"

using namespace llmbench;
using namespace llmbench_test;
namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& name) {
  const auto* info = testing::UnitTest::GetInstance()->current_test_info();
  const fs::path d = fs::path(LLMBENCH_TEST_SCRATCH) / "compare" / info->name();
  fs::create_directories(d);
  fs::remove(d / name);
  return d / name;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

FakeCase with(FakeCase c, int batch, int prompt_len) {
  c.batch = batch;
  c.prompt_len = prompt_len;
  return c;
}

CompareReport report_of(const LoadedRun& b, const LoadedRun& c, CompareSettings s = {}) {
  return build_report(b, c, s);
}

}  // namespace

TEST(CompareLoad, ReadsTheLatestRunOrTheOneNamedAndDerivesEveryMetric) {
  const fs::path db = scratch("two_runs.db");
  FakeCase c;
  c.batch = 2;
  c.max_new_tokens = 3;
  c.ttft_ns = {10'000'000, 12'000'000};
  c.decode_ns = {{1'000'000, 3'000'000}, {2'000'000, 2'000'000}};
  const auto first = add_fake_run(db, fake_run_info(), {c});
  c.ttft_ns = {20'000'000};
  c.decode_ns = {{4'000'000, 4'000'000}};
  const auto second = add_fake_run(db, fake_run_info(), {c, c});

  const LoadedRun latest = read_bench_run(parse_side(db.string()), "BASE");
  EXPECT_EQ(latest.run.id, second);
  EXPECT_EQ(latest.cases.size(), 2u);
  const LoadedRun named = read_bench_run(parse_side(db.string() + ":" + std::to_string(first)), "BASE");
  EXPECT_EQ(named.run.id, first);
  ASSERT_EQ(named.cases.size(), 1u);
  const CaseSamples& s = named.cases[0];
  EXPECT_EQ(s.ttft_ms, (std::vector<double>{10.0, 12.0}));
  ASSERT_TRUE(s.tpot_ms.has_value());
  EXPECT_EQ(*s.tpot_ms, (std::vector<double>{2.0, 2.0}));  // mean of each repetition's steps
  EXPECT_EQ(s.e2e_ms, (std::vector<double>{14.0, 16.0}));
  // throughput per repetition = batch x max_new_tokens / e2e = 6 tokens / 14 ms, / 16 ms
  ASSERT_EQ(s.throughput_tok_s.size(), 2u);
  EXPECT_DOUBLE_EQ(s.throughput_tok_s[0], 6 / 0.014);
  EXPECT_DOUBLE_EQ(s.throughput_tok_s[1], 6 / 0.016);
  EXPECT_EQ(s.label(), "tiny fp32 cpu b2 p16 n3 t2");
}

TEST(CompareLoad, TpotDoesNotApplyWithOneNewToken) {
  const fs::path db = scratch("n1.db");
  FakeCase c;
  c.max_new_tokens = 1;
  add_fake_run(db, fake_run_info(), {timed_case(5, 0, 4, c)});
  const LoadedRun r = read_bench_run(parse_side(db.string()), "BASE");
  EXPECT_FALSE(r.cases[0].tpot_ms.has_value());
  EXPECT_FALSE(r.cases[0].samples(Metric::kTpot).has_value());
  EXPECT_EQ(r.cases[0].ttft_ms.size(), 4u);
}

TEST(CompareLoad, SideArgumentSplitsARunIdOnlyWhenThePathDoesNotExist) {
  const fs::path dir = scratch("x").parent_path();
  const fs::path odd = dir / "odd:7";
  std::ofstream(odd) << "";
  EXPECT_EQ(parse_side(odd.string()).path, odd.string());
  EXPECT_FALSE(parse_side(odd.string()).run_id.has_value());
  const SideSpec s = parse_side((dir / "none.db:12").string());
  EXPECT_EQ(s.path, (dir / "none.db").string());
  EXPECT_EQ(s.run_id, 12);
  EXPECT_FALSE(parse_side((dir / "none.db:x1").string()).run_id.has_value());
}

TEST(CompareLoad, BadInputNamesTheSideAndTheProblem) {
  const fs::path db = scratch("ok.db");
  add_fake_run(db, fake_run_info(), {timed_case(5, 1)});
  auto message = [](const std::string& arg) {
    try {
      read_bench_run(parse_side(arg), "CAND");
    } catch (const BadInput& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(db.string() + ":99").find("CAND '" + db.string() + "' has no run 99 (runs: 1)"),
            std::string::npos) << message(db.string() + ":99");
  const fs::path missing = db.parent_path() / "missing.db";
  EXPECT_NE(message(missing.string()).find("CAND: database '" + missing.string() + "' does not exist"),
            std::string::npos) << message(missing.string());
  const fs::path text = db.parent_path() / "text.db";
  std::ofstream(text) << "this is not a database, just some text that is long enough to matter\n";
  EXPECT_NE(message(text.string()).find("CAND: database"), std::string::npos) << message(text.string());
  const fs::path other = scratch("other.db");
  {
    Db h(other.string(), Db::Mode::kCreate);
    h.exec("CREATE TABLE t (x)");
  }
  EXPECT_NE(message(other.string()).find("is not an llmbench result database"), std::string::npos)
      << message(other.string());
  const fs::path empty = scratch("empty.db");
  { ResultStore s(empty.string()); }
  EXPECT_NE(message(empty.string()).find("has no runs"), std::string::npos) << message(empty.string());
}

TEST(CompareLoad, DatabasesAreNotModified) {
  const fs::path db = scratch("ro.db");
  add_fake_run(db, fake_run_info(), {timed_case(5, 1)});
  const std::string before = slurp(db);
  const auto mtime = fs::last_write_time(db);
  const LoadedRun a = read_bench_run(parse_side(db.string()), "BASE");
  const LoadedRun b = read_bench_run(parse_side(db.string()), "CAND");
  std::ostringstream out;
  print_report(out, "json", report_of(a, b));
  EXPECT_FALSE(out.str().empty());
  EXPECT_EQ(slurp(db), before);
  EXPECT_EQ(fs::last_write_time(db), mtime);
  EXPECT_FALSE(fs::exists(db.string() + "-wal") && fs::file_size(db.string() + "-wal") > 0);
}

TEST(CompareMatch, PairsByConfigurationAndListsTheRest) {
  const fs::path bdb = scratch("b.db"), cdb = scratch("c.db");
  add_fake_run(bdb, fake_run_info(), {timed_case(5, 1, 8, with({}, 1, 16)),
                                      timed_case(5, 1, 8, with({}, 2, 16)),
                                      timed_case(5, 1, 8, with({}, 4, 16))});
  add_fake_run(cdb, fake_run_info(), {timed_case(5, 1, 8, with({}, 2, 16)),
                                      timed_case(5, 1, 8, with({}, 1, 16)),
                                      timed_case(5, 1, 8, with({}, 1, 32))});
  const LoadedRun b = read_bench_run(parse_side(bdb.string()), "BASE");
  const LoadedRun c = read_bench_run(parse_side(cdb.string()), "CAND");
  const Matching m = match_cases(b.cases, c.cases);
  ASSERT_EQ(m.pairs.size(), 2u);
  EXPECT_EQ(m.pairs[0].base->batch, 1);
  EXPECT_EQ(m.pairs[0].cand->batch, 1);
  EXPECT_EQ(m.pairs[1].cand->batch, 2);
  ASSERT_EQ(m.base_only.size(), 1u);
  EXPECT_EQ(m.base_only[0]->batch, 4);
  ASSERT_EQ(m.cand_only.size(), 1u);
  EXPECT_EQ(m.cand_only[0]->prompt_len, 32);
  EXPECT_FALSE(m.threads_ignored);

  const CompareReport r = report_of(b, c);
  ASSERT_EQ(r.cases.size(), 4u);  // base order, base-only in place, candidate-only last
  EXPECT_EQ(r.cases[0].label, "tiny fp32 cpu b1 p16 n3 t2");
  EXPECT_EQ(r.cases[2].status, CaseStatus::kBaseOnly);
  EXPECT_EQ(r.cases[3].status, CaseStatus::kCandOnly);
  EXPECT_EQ(r.summary.compared_cases, 2);
  EXPECT_EQ(r.summary.base_only, 1);
  EXPECT_EQ(r.summary.cand_only, 1);
  EXPECT_EQ(r.summary.same, 6);  // 2 cases x ttft, tpot, e2e
  EXPECT_FALSE(r.regressed());
}

TEST(CompareMatch, VariantsAreNormalisedAndTraceIsNotPartOfTheKey) {
  FakeCase a, b, other;
  a.variants = R"({"qkv":"permute","kv_cache":"concat"})";
  a.trace = "ops";
  b.variants = R"({ "kv_cache" : "concat",  "qkv": "permute" })";
  b.trace = "off";
  other.variants = R"({"qkv":"fused","kv_cache":"concat"})";
  const fs::path bdb = scratch("b.db"), cdb = scratch("c.db");
  add_fake_run(bdb, fake_run_info(), {timed_case(5, 1, 8, a)});
  add_fake_run(cdb, fake_run_info(), {timed_case(5, 1, 8, other), timed_case(5, 1, 8, b)});
  const LoadedRun lb = read_bench_run(parse_side(bdb.string()), "BASE");
  const LoadedRun lc = read_bench_run(parse_side(cdb.string()), "CAND");
  EXPECT_EQ(lb.cases[0].variants, R"({"kv_cache":"concat","qkv":"permute"})");
  const Matching m = match_cases(lb.cases, lc.cases);
  ASSERT_EQ(m.pairs.size(), 1u);
  EXPECT_EQ(m.pairs[0].cand, &lc.cases[1]);
  ASSERT_EQ(m.cand_only.size(), 1u);
  // Named as every output names variants (variants_label).
  EXPECT_EQ(lb.cases[0].label(), "tiny fp32 cpu b2 p16 n3 t2 qkv=permute kv_cache=concat");
}

TEST(CompareMatch, DuplicateConfigurationsAreMatchedInOrder) {
  const fs::path bdb = scratch("b.db"), cdb = scratch("c.db");
  add_fake_run(bdb, fake_run_info(), {timed_case(10, 1), timed_case(20, 1)});
  add_fake_run(cdb, fake_run_info(), {timed_case(10, 1), timed_case(20, 1), timed_case(30, 1)});
  const LoadedRun b = read_bench_run(parse_side(bdb.string()), "BASE");
  const LoadedRun c = read_bench_run(parse_side(cdb.string()), "CAND");
  const CompareReport r = report_of(b, c);
  ASSERT_EQ(r.cases.size(), 3u);
  EXPECT_EQ(r.cases[0].cand, &c.cases[0]);
  EXPECT_EQ(r.cases[1].cand, &c.cases[1]);
  EXPECT_EQ(r.cases[2].status, CaseStatus::kCandOnly);
  EXPECT_EQ(r.summary.same, 6);  // in order, 10 ms pairs with 10 ms and 20 with 20
}

TEST(CompareMatch, FailedCasesAreListedNotCompared) {
  FakeCase bad;
  bad.status = "error";
  bad.error = "not enough host memory";
  const fs::path bdb = scratch("b.db"), cdb = scratch("c.db");
  add_fake_run(bdb, fake_run_info(), {timed_case(5, 1, 8, with({}, 1, 16)), with(bad, 2, 16)});
  add_fake_run(cdb, fake_run_info(), {with(bad, 1, 16), with(bad, 2, 16)});
  const LoadedRun b = read_bench_run(parse_side(bdb.string()), "BASE");
  const LoadedRun c = read_bench_run(parse_side(cdb.string()), "CAND");
  const CompareReport r = report_of(b, c);
  ASSERT_EQ(r.cases.size(), 2u);
  EXPECT_EQ(r.cases[0].status, CaseStatus::kErrorCand);
  EXPECT_EQ(r.cases[1].status, CaseStatus::kErrorBoth);
  EXPECT_TRUE(r.cases[0].metrics.empty());
  EXPECT_EQ(r.summary.failed_cases, 2);
  EXPECT_EQ(r.summary.compared_cases, 0);
  const auto rows = compare_rows(r, "");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].back(), "error in candidate");
  const auto j = compare_json(r);
  EXPECT_EQ(j["cases"][0]["candidate_error"], "not enough host memory");
}

TEST(CompareMatch, ThreadsOfTheWholeRunAreAnEnvironmentNotAKey) {
  FakeCase t1, t2;
  t1.threads = 1;
  t2.threads = 2;
  const fs::path bdb = scratch("b.db"), cdb = scratch("c.db");
  add_fake_run(bdb, fake_run_info(2), {timed_case(10, 1, 8, t2)});
  add_fake_run(cdb, fake_run_info(1), {timed_case(18, 1.8, 8, t1)});
  const LoadedRun b = read_bench_run(parse_side(bdb.string()), "BASE");
  const LoadedRun c = read_bench_run(parse_side(cdb.string()), "CAND");
  const CompareReport r = report_of(b, c);
  EXPECT_TRUE(r.threads_ignored);
  ASSERT_EQ(r.cases.size(), 1u);
  EXPECT_EQ(r.cases[0].label, "tiny fp32 cpu b2 p16 n3");
  EXPECT_EQ(r.summary.slower, 3);
  EXPECT_TRUE(r.regressed());
  ASSERT_EQ(r.env.size(), 1u);
  EXPECT_TRUE(r.env[0].warning);
  EXPECT_EQ(r.env[0].text(), "threads differs: base '2', candidate '1'");

  // A side that sweeps threads keeps them in the key.
  const fs::path sweep = scratch("sweep.db");
  add_fake_run(sweep, fake_run_info(2), {timed_case(10, 1, 8, t1), timed_case(10, 1, 8, t2)});
  const LoadedRun s = read_bench_run(parse_side(sweep.string()), "CAND");
  const Matching m = match_cases(b.cases, s.cases);
  EXPECT_FALSE(m.threads_ignored);
  ASSERT_EQ(m.pairs.size(), 1u);
  EXPECT_EQ(m.pairs[0].cand->threads, 2);
  EXPECT_EQ(m.cand_only.size(), 1u);
}

TEST(CompareEnv, WarnsOnTimingRelevantDifferencesAndInformsOnTheRest) {
  RunInfo a, b;
  a.build_type = "Release";
  b.build_type = "Debug";
  a.git_commit = "abc";
  b.git_commit = "def";
  a.cpu = b.cpu = "Same CPU";
  const auto notes = environment_notes(a, b);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_TRUE(notes[0].warning);
  EXPECT_EQ(notes[0].field, "build_type");
  EXPECT_FALSE(notes[1].warning);
  EXPECT_EQ(notes[1].field, "git_commit");
  EXPECT_TRUE(environment_notes(a, a).empty());
  b = a;
  b.gpu = "NVIDIA H100";
  b.driver = "550.54";
  b.cpu = "Other CPU";
  b.threads = 8;
  EXPECT_EQ(environment_notes(a, b).size(), 4u);
}

TEST(CompareReport, VerdictsSummaryAndEveryFormat) {
  FakeCase n1;
  n1.max_new_tokens = 1;
  const fs::path bdb = scratch("b.db"), cdb = scratch("c.db");
  auto info = fake_run_info();
  add_fake_run(bdb, info, {timed_case(10, 2, 8, with({}, 1, 16)), timed_case(10, 2, 8, with({}, 2, 16)),
                           timed_case(10, 0, 8, n1), timed_case(10, 2, 2, with({}, 8, 16))});
  info.git_commit = "def456";
  add_fake_run(cdb, info, {timed_case(11, 2, 8, with({}, 1, 16)), timed_case(9, 2, 8, with({}, 2, 16)),
                           timed_case(10, 0, 8, n1), timed_case(10, 2, 2, with({}, 8, 16))});
  const LoadedRun b = read_bench_run(parse_side(bdb.string()), "BASE");
  const LoadedRun c = read_bench_run(parse_side(cdb.string()), "CAND");
  CompareSettings s;
  s.metrics = {Metric::kTtft, Metric::kTpot, Metric::kThroughput};
  const CompareReport r = report_of(b, c, s);
  // b1: ttft 10% slower; throughput lower. b2: ttft 10% faster. n1: TPOT n/a. b8: 2 reps.
  EXPECT_EQ(r.cases[0].metrics[0].verdict, Verdict::kSlower);
  EXPECT_EQ(r.cases[0].metrics[1].verdict, Verdict::kSame);
  EXPECT_EQ(r.cases[1].metrics[0].verdict, Verdict::kFaster);
  EXPECT_EQ(r.cases[2].metrics[1].verdict, Verdict::kNotApplicable);
  EXPECT_EQ(r.cases[3].metrics[0].verdict, Verdict::kTooFew);
  EXPECT_EQ(r.summary.slower, 2);  // b1 ttft and b1 throughput (e2e 14 -> 15 ms)
  EXPECT_TRUE(r.regressed());
  EXPECT_EQ(summary_headline(r.summary), "2 regressions, 2 improvements, 4 same");

  std::ostringstream table, md, csv, json;
  print_report(table, "table", r);
  print_report(md, "md", r);
  print_report(csv, "csv", r);
  print_report(json, "json", r);
  EXPECT_EQ(table.str().rfind("llmbench compare: 2 regressions, 2 improvements, 4 same (", 0), 0u)
      << table.str();
  EXPECT_NE(table.str().find("too few samples"), std::string::npos);
  EXPECT_EQ(md.str().rfind("**llmbench compare: 2 regressions, 2 improvements, 4 same**\n", 0), 0u)
      << md.str();
  EXPECT_NE(md.str().find("- info: git_commit differs: base 'abc123', candidate 'def456'"),
            std::string::npos) << md.str();
  EXPECT_NE(md.str().find("| case | metric | n_base |"), std::string::npos) << md.str();
  EXPECT_EQ(csv.str().rfind("case,metric,n_base,n_cand,base_median,cand_median,ratio,"
                            "ci_low,ci_high,p_value,verdict\n", 0), 0u) << csv.str();
  EXPECT_NE(csv.str().find("tiny fp32 cpu b1 p16 n3 t2,ttft_ms,8,8,10.010,11.011,1.1000,"),
            std::string::npos) << csv.str();
  EXPECT_NE(csv.str().find("tiny fp32 cpu b2 p16 n1 t2,tpot_ms,,,,,,,,,n/a"), std::string::npos)
      << csv.str();

  const auto j = nlohmann::json::parse(json.str());
  EXPECT_EQ(j["summary"]["regressions"], 2);
  EXPECT_EQ(j["summary"]["regressed"], true);
  EXPECT_EQ(j["settings"]["metrics"], nlohmann::json::parse(R"(["ttft","tpot","throughput"])"));
  EXPECT_EQ(j["environment"][0]["level"], "info");
  const auto& ttft = j["cases"][0]["metrics"]["ttft"];
  EXPECT_EQ(ttft["verdict"], "slower");
  EXPECT_NEAR(ttft["median_base"].get<double>(), 10.01, 1e-6);  // jitter median +0.1%
  EXPECT_NEAR(ttft["median_candidate"].get<double>(), 11.011, 1e-6);
  EXPECT_NEAR(ttft["ratio"].get<double>(), 1.1, 1e-9);
  EXPECT_LE(ttft["ci_low"].get<double>(), 1.1);
  EXPECT_GE(ttft["ci_high"].get<double>(), 1.1);
  EXPECT_LT(ttft["p_value"].get<double>(), 0.001);
  EXPECT_EQ(ttft["p_exact"], true);
  EXPECT_TRUE(j["cases"][2]["metrics"]["tpot"]["median_base"].is_null());
  EXPECT_EQ(j["cases"][3]["metrics"]["ttft"]["verdict"], "too few samples");
  EXPECT_EQ(j["unmatched"]["base_only"].size(), 0u);
  EXPECT_EQ(j["base"]["git_commit"], "abc123");
  EXPECT_EQ(j["candidate"]["run_id"], 1);
}
