// Every bundled query on a database produced by a real traced run of the tiny preset
// (2 layers; batch 1 and 2; prompt 16; 3 new tokens = 1 prefill + 2 decode steps), checked for
// rows that are not just present but consistent with the model's structure: one attention per
// layer per step, a fit per op across batch sizes, one gap fewer than ops per step. The same
// database also gets a real `llmbench load` run against `llmbench serve --model tiny`, which the
// serving queries (load_*, serving_table) read.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/cli/llmbench_process.h"

namespace {

using namespace llmbench_test;
using json = nlohmann::ordered_json;  // keeps the columns' order

constexpr int kLayers = 2;         // the tiny preset
constexpr int kDecodeSteps = 2;    // --max-new-tokens 3: the first token comes from prefill
constexpr int kReps = 2;           // --repeat 2 (untraced, measured)

class QueryOnTrace : public testing::Test {
 protected:
  // One traced run per test process (ctest runs each test in its own process, in parallel,
  // so the directory is per process).
  static void SetUpTestSuite() {
    dir_ = fs::path(LLMBENCH_TEST_SCRATCH) / "query_on_trace" / std::to_string(::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    db_ = dir_ / "trace.db";
    run_ = run_llmbench("run --model tiny --batch 1,2 --prompt-len 16 --max-new-tokens 3 "
                        "--repeat 2 --trace ops --db " + db_.string() +
                        " --peak-bw-gbps 20 --peak-tflops 0.2 --quiet",
                        dir_ / "run");
    load_ = run_llmbench("load --server-cmd '" LLMBENCH_BIN " serve --model tiny --port {port}' "
                         "--concurrency 1,4 --num-requests 4 --input-len 8 --output-len 4 "
                         "--ignore-eos --quiet --db " + db_.string(),
                         dir_ / "load");
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  void SetUp() override {
    ASSERT_EQ(run_.exit_code, 0) << "llmbench run --trace ops failed:\n" << run_.err;
    ASSERT_EQ(load_.exit_code, 0) << "llmbench load failed:\n" << load_.err;
  }

  // Runs a bundled query with --format json; fails the test unless it exits 0.
  static json query(const std::string& name, const std::string& params = "") {
    const Result r = run_llmbench("query " + db_.string() + " " + name + " " + params +
                                  " --format json", dir_ / ("q_" + name));
    EXPECT_EQ(r.exit_code, 0) << name << " " << params << ": " << r.err;
    EXPECT_TRUE(r.err.empty()) << r.err;
    return r.exit_code == 0 ? json::parse(r.out) : json::array();
  }

  // The first column of `sql` run directly on the database, as text.
  static std::vector<std::string> column(const std::string& sql) {
    std::vector<std::string> out;
    sqlite3* h = nullptr;
    sqlite3_stmt* st = nullptr;
    if (sqlite3_open_v2(db_.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK &&
        sqlite3_prepare_v2(h, sql.c_str(), -1, &st, nullptr) == SQLITE_OK)
      while (sqlite3_step(st) == SQLITE_ROW)
        out.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
    sqlite3_finalize(st);
    sqlite3_close(h);
    return out;
  }

  static std::vector<int> case_ids() {
    std::vector<int> ids;
    for (const auto& row : query("case_summary")) ids.push_back(row["case_id"]);
    return ids;
  }

  static inline fs::path dir_, db_;
  static inline Result run_, load_;
};

TEST_F(QueryOnTrace, EveryBundledQueryReturnsRowsWithItsDeclaredColumns) {
  const Result list = run_llmbench("query --list --format json", dir_ / "list");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  for (const auto& q : json::parse(list.out)) {
    const std::string name = q["name"];
    // The serve_* queries read the serving tables, which `llmbench serve --db` writes; they
    // run on a served database in tests/serve/test_serve_cli.cpp.
    if (name.rfind("serve_", 0) == 0) continue;
    // So do the request-path queries, on a `serve --db --trace ops` database in
    // tests/serve/test_serve_trace.cpp.
    if (name == "request_breakdown" || name == "ttft_blocked_by_prefill") continue;
    const json rows = query(name);
    ASSERT_FALSE(rows.empty()) << name << " returned no rows";
    std::vector<std::string> declared, returned;
    for (const auto& c : q["columns"]) declared.push_back(c["name"]);
    for (const auto& [key, value] : rows[0].items()) returned.push_back(key);
    EXPECT_EQ(returned, declared) << name;
  }
}

TEST_F(QueryOnTrace, CaseSummaryHasBothTracedCases) {
  const json rows = query("case_summary");
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& r : rows) {
    EXPECT_EQ(r["status"], "ok");
    EXPECT_EQ(r["trace"], "ops");
    EXPECT_GT(r["ttft_ms_p50"].get<double>(), 0);
    EXPECT_GT(r["tpot_ms_mean"].get<double>(), 0);
    EXPECT_GT(r["mbu"].get<double>(), 0);
  }
  EXPECT_EQ(rows[0]["batch"], 1);
  EXPECT_EQ(rows[1]["batch"], 2);
}

TEST_F(QueryOnTrace, WindowOpsOfADecodeStepHoldOneAttentionPerLayer) {
  for (int id : case_ids()) {
    const json rows = query("window_ops", "--param case_id=" + std::to_string(id));
    std::map<std::string, json> by_name;
    for (const auto& r : rows) by_name[r["name"]] = r;
    ASSERT_TRUE(by_name.count("attention")) << rows.dump();
    EXPECT_EQ(by_name["attention"]["n"], kLayers);
    EXPECT_EQ(by_name["layer"]["n"], kLayers);
    EXPECT_EQ(by_name["layer"]["depth"], 1);
    EXPECT_EQ(by_name["attention"]["depth"], 2);
    EXPECT_EQ(by_name["lm_head"]["n"], 1);
    EXPECT_FALSE(by_name.count("decode_step")) << "the window range itself is listed";
    EXPECT_FALSE(by_name.count("prefill"));
    for (const auto& r : rows) {
      EXPECT_GT(r["share"].get<double>(), 0) << r.dump();
      EXPECT_LE(r["share"].get<double>(), 1) << r.dump();
    }
  }
  // Another window and occurrence: the second layer range holds one op of each layer op.
  const json layer = query("window_ops", "--param range_name=layer --param occurrence=2");
  for (const auto& r : layer) EXPECT_EQ(r["n"], 1) << r.dump();
  EXPECT_GE(layer.size(), 14u);
}

TEST_F(QueryOnTrace, TopOpsCallsAreLayersTimesStepsPerPhase) {
  for (int id : case_ids()) {
    const json rows =
        query("top_ops", "--param case_id=" + std::to_string(id) + " --param top_n=100");
    std::map<std::string, int> attention, lm_head;
    std::map<std::string, double> share;
    for (const auto& r : rows) {
      EXPECT_EQ(r["case_id"], id);
      if (r["name"] == "attention") attention[r["phase"]] = r["calls"];
      if (r["name"] == "lm_head") lm_head[r["phase"]] = r["calls"];
      share[r["phase"]] += r["share"].get<double>();
    }
    EXPECT_EQ(attention["prefill"], kLayers * 1);
    EXPECT_EQ(attention["decode"], kLayers * kDecodeSteps);
    EXPECT_EQ(lm_head["prefill"], 1);
    EXPECT_EQ(lm_head["decode"], kDecodeSteps);
    for (const auto& [phase, s] : share) {  // ops cover most of a phase, never more than all
      EXPECT_GT(s, 0.5) << phase;
      EXPECT_LE(s, 1.0) << phase;
    }
  }
  const json decode = query("top_ops", "--param phase=decode --param top_n=3");
  ASSERT_EQ(decode.size(), 3u);
  for (const auto& r : decode) EXPECT_EQ(r["phase"], "decode");
}

TEST_F(QueryOnTrace, OpVsBatchHasARowPerOp) {
  for (const std::string phase : {"prefill", "decode"}) {
    const auto ops = column("SELECT DISTINCT name FROM slice WHERE phase = '" + phase +
                            "' AND category <> 'range' ORDER BY name");
    ASSERT_FALSE(ops.empty());
    const json rows = query("op_vs_batch", "--param phase=" + phase);
    std::set<std::string> names;
    for (const auto& r : rows) {
      names.insert(r["name"]);
      EXPECT_EQ(r["model"], "tiny");
      EXPECT_EQ(r["batches"], 2);
      EXPECT_EQ(r["min_batch"], 1);
      EXPECT_EQ(r["max_batch"], 2);
      EXPECT_TRUE(r["slope_us_per_seq"].is_number()) << r.dump();
      // Two points: the line goes through both.
      const double slope = r["slope_us_per_seq"], icept = r["intercept_us"];
      EXPECT_NEAR(icept + slope * 2, r["us_at_max_batch"].get<double>(), 1e-6);
      EXPECT_TRUE(r["r2"].is_null()) << "r2 of two batch sizes means nothing";
    }
    EXPECT_EQ(names, std::set<std::string>(ops.begin(), ops.end())) << phase;
    EXPECT_EQ(rows.size(), ops.size()) << phase;
  }
}

TEST_F(QueryOnTrace, LayerBreakdownAddsUpPerLayer) {
  for (const std::string phase : {"prefill", "decode"}) {
    const json rows = query("layer_breakdown", "--param phase=" + phase);
    ASSERT_EQ(rows.size(), std::size_t(kLayers + 1)) << rows.dump();  // + the ops outside layers
    for (int l = 0; l < kLayers; ++l) {
      const json& r = rows[l];
      EXPECT_EQ(r["layer"], l);
      double parts = r["untracked_us"].get<double>();
      for (const char* c :
           {"gemm_us", "attention_us", "norm_us", "elementwise_us", "copy_us", "other_us"})
        parts += r[c].get<double>();
      EXPECT_NEAR(parts, r["layer_us"].get<double>(), 1e-6);
      EXPECT_GT(r["gemm_us"].get<double>(), 0);
      EXPECT_GT(r["attention_us"].get<double>(), 0);
    }
    EXPECT_TRUE(rows[kLayers]["layer"].is_null());
    EXPECT_GT(rows[kLayers]["gemm_us"].get<double>(), 0);  // lm_head
  }
}

TEST_F(QueryOnTrace, OpRooflineRatesFollowFromFlopsBytesAndPeaks) {
  const json rows = query("op_roofline");
  std::set<std::string> phases;
  for (const auto& r : rows) {
    phases.insert(r["phase"]);
    if (r["category"] != "gemm") continue;
    const double us = r["avg_us"], flop = r["flop_per_call"], bytes = r["bytes_per_call"];
    EXPECT_NEAR(r["achieved_gflops"].get<double>(), flop / (us * 1e3), 1e-6 * flop / us);
    EXPECT_NEAR(r["achieved_gbps"].get<double>(), bytes / (us * 1e3), 1e-6 * bytes / us);
    // Bound at 0.2 TFLOP/s and 20 GB/s, in us.
    EXPECT_NEAR(r["bound_us"].get<double>(), std::max(flop / 0.2e6, bytes / 20e3), 1e-9);
    EXPECT_GT(r["fraction_of_bound"].get<double>(), 0);
    EXPECT_TRUE(r["limiter"] == "compute" || r["limiter"] == "memory");
  }
  EXPECT_EQ(phases, (std::set<std::string>{"prefill", "decode"}));
}

TEST_F(QueryOnTrace, OpGapsCountOneGapFewerThanOpsPerStep) {
  const json ops = query("top_ops", "--param top_n=100");
  std::map<std::string, double> calls;
  for (const auto& r : ops) calls[r["phase"]] += r["calls"].get<double>();
  const json rows = query("op_gaps");
  std::map<std::string, double> gaps;
  for (const auto& r : rows)
    if (r["prev_op"] == "(all)") gaps[r["phase"]] = r["gaps"];
  ASSERT_EQ(gaps.size(), 2u) << rows.dump();
  EXPECT_EQ(gaps["prefill"], calls["prefill"] - 1);
  EXPECT_EQ(gaps["decode"], calls["decode"] - kDecodeSteps);
}

TEST_F(QueryOnTrace, OpCoverageAddsUpTheOpsOfEveryTracedStep) {
  // Per case: one prefill row (one traced step) and one decode row (kDecodeSteps steps); the
  // ops of a step cover no more than the step, most of it on the synchronous CPU backend, and
  // the untraced figure is the case's own TTFT median or TPOT mean.
  const json rows = query("op_coverage");
  ASSERT_EQ(rows.size(), 4u) << rows.dump();
  const json cases = query("case_summary");
  std::map<int, json> by_id;
  for (const auto& c : cases) by_id[c["case_id"].get<int>()] = c;
  for (const auto& r : rows) {
    SCOPED_TRACE(r.dump());
    const bool prefill = r["phase"] == "prefill";
    EXPECT_EQ(r["steps"], prefill ? 1 : kDecodeSteps);
    EXPECT_EQ(r["op_timer"], "device");
    const double share = r["ops_share"];
    EXPECT_GT(share, 0.5);
    EXPECT_LE(share, 1.0);
    EXPECT_NEAR(r["ops_ms"].get<double>(), share * r["step_ms"].get<double>(), 1e-9);
    const json& c = by_id.at(r["case_id"].get<int>());
    EXPECT_DOUBLE_EQ(r["untraced_ms"].get<double>(),
                     (prefill ? c["ttft_ms_p50"] : c["tpot_ms_mean"]).get<double>());
    EXPECT_NEAR(r["step_vs_untraced"].get<double>(),
                r["step_ms"].get<double>() / r["untraced_ms"].get<double>(), 1e-9);
  }
}

TEST_F(QueryOnTrace, LatencyStatsCountRawSamples) {
  const json rows = query("latency_stats");
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& r : rows) {
    EXPECT_EQ(r["n"], kReps);
    EXPECT_EQ(r["tpot_n"], kReps * kDecodeSteps);
    EXPECT_LE(r["tpot_ms_p50"].get<double>(), r["tpot_ms_p99"].get<double>());
    EXPECT_GT(r["ttft_ms_p50"].get<double>(), 0);
  }
}

}  // namespace
