// The bundled GPU-trace queries (nvtx_range_summary, kernel_summary, kernel_by_nvtx_range,
// range_gpu_projection, gpu_idle_gaps, launch_overhead, peer_gemm_compare) on imports with
// hand-computed answers: the nsys scenario of nsys_fixture.h, the Kineto trace of
// chrome_fixture.h and the torch.profiler decode steps of kineto_decode_fixture.h; and their
// scope: the latest import by default, an llmbench case with --param case_id, beside runs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <set>
#include <nlohmann/json.hpp>

#include "tests/import/chrome_fixture.h"
#include "tests/cli/llmbench_process.h"
#include "tests/import/kineto_decode_fixture.h"
#include "tests/import/nsys_fixture.h"
#include "tests/import/sqlite_rows.h"

namespace {

using namespace llmbench_test;
using ojson = nlohmann::ordered_json;

ojson query(const fs::path& db, const std::string& name, const std::string& params = "") {
  const Result r = run_llmbench("query " + db.string() + " " + name + " " + params +
                                " --format json", scratch_dir() / ("q_" + name));
  EXPECT_EQ(r.exit_code, 0) << name << ": " << r.err;
  return r.exit_code == 0 ? ojson::parse(r.out) : ojson::array();
}

// Rows keyed by the text of one column.
std::map<std::string, ojson> by(const ojson& rows, const std::string& key) {
  std::map<std::string, ojson> out;
  for (const auto& r : rows) out[r[key].is_string() ? r[key].get<std::string>() : r[key].dump()] = r;
  return out;
}

class ImportQueriesNsys : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::path(LLMBENCH_TEST_SCRATCH) / "import_queries" / std::to_string(::getpid());
    fs::create_directories(dir_);
    db_ = dir_ / "nsys.db";
    fs::remove(db_);
    make_nsys_export(dir_ / "report.sqlite");
    import_ = run_llmbench("import nsys " + (dir_ / "report.sqlite").string() + " --db " +
                           db_.string(), dir_ / "import");
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  void SetUp() override { ASSERT_EQ(import_.exit_code, 0) << import_.err; }
  static inline fs::path dir_, db_;
  static inline Result import_;
};

TEST_F(ImportQueriesNsys, KernelsAreAttributedToTheInnermostRangeOfTheirLaunch) {
  const ojson rows = query(db_, "kernel_by_nvtx_range");
  std::map<std::pair<std::string, std::string>, ojson> got;
  for (const auto& r : rows) got[{r["range_name"], r["name"]}] = r;
  ASSERT_EQ(got.size(), 6u) << rows.dump(1);
  auto at = [&](const std::string& range, const std::string& name) {
    return got[std::pair(range, name)];
  };
  EXPECT_EQ(at("registered_range", "gemm_kernel<float>(float*)")["total_us"], 2.0);
  EXPECT_EQ(at("registered_range", "relu_kernel")["n"], 1);
  EXPECT_EQ(at("registered_range", "relu_kernel")["total_us"], 0.4);
  EXPECT_NEAR(at("registered_range", "gemm_kernel<float>(float*)")["share_of_range"]
                  .get<double>(), 2.0 / 2.4, 1e-12);
  EXPECT_EQ(at("step", "relu_kernel")["total_us"], 0.1);  // launched in step, outside layer
  EXPECT_EQ(at("tail", "[CUDA memcpy Device-to-Host]")["category"], "gpu_memcpy");
  EXPECT_EQ(at("(no range)", "[CUDA memset]")["n"], 1);    // no launching call
  EXPECT_EQ(at("(no range)", "other_kernel")["n"], 1);
}

TEST_F(ImportQueriesNsys, RangeProjectionSpansFirstToLastLaunchedOp) {
  const auto rows = by(query(db_, "range_gpu_projection"), "name");
  ASSERT_EQ(rows.size(), 3u);
  const ojson& step = rows.at("step");
  EXPECT_EQ(step["ops"], 4);  // both layer kernels, the relu before them, the memcpy in tail
  EXPECT_EQ(step["gpu_start_ts"], 1300);
  EXPECT_EQ(step["gpu_end_ts"], 7800);
  EXPECT_EQ(step["gpu_span_us"], 6.5);
  EXPECT_EQ(step["op_us"], 3.5);
  EXPECT_EQ(step["gpu_lag_us"], 0.3);
  EXPECT_EQ(step["gpu_tail_us"], -2.2);
  EXPECT_EQ(rows.at("registered_range")["gpu_start_ts"], 3000);
  EXPECT_EQ(rows.at("registered_range")["gpu_end_ts"], 5600);
  EXPECT_EQ(rows.at("registered_range")["depth"], 1);
  EXPECT_EQ(rows.at("tail")["ops"], 1);
  const ojson only = query(db_, "range_gpu_projection", "--param range_name=tail");
  ASSERT_EQ(only.size(), 1u);
  EXPECT_EQ(only[0]["range_us"], 2.5);
}

TEST_F(ImportQueriesNsys, IdleGapsPerStream) {
  const auto rows = by(query(db_, "gpu_idle_gaps"), "stream_id");
  ASSERT_EQ(rows.size(), 2u);
  // Stream 7: [1300,1400) [3000,5000) [5200,5600) [6800,7800) [8000,8100).
  const ojson& s7 = rows.at("7");
  EXPECT_EQ(s7["track"], "GPU 0 (NVIDIA H100) stream 7");
  EXPECT_EQ(s7["device_id"], 0);
  EXPECT_EQ(s7["ops"], 5);
  EXPECT_EQ(s7["span_us"], 6.8);
  EXPECT_EQ(s7["busy_us"], 3.6);
  EXPECT_EQ(s7["idle_us"], 3.2);
  EXPECT_EQ(s7["gaps"], 4);
  EXPECT_EQ(s7["avg_gap_us"], 0.8);
  EXPECT_EQ(s7["max_gap_us"], 1.6);
  EXPECT_NEAR(s7["idle_share"].get<double>(), 3.2 / 6.8, 1e-12);
  EXPECT_EQ(rows.at("8")["gaps"], 0);
  EXPECT_EQ(rows.at("8")["idle_us"], 0.0);
}

TEST_F(ImportQueriesNsys, LaunchOverheadIsRangeTimeMinusItsKernelsTime) {
  const auto rows = by(query(db_, "launch_overhead"), "name");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows.at("step")["range_us"], 9.0);
  EXPECT_EQ(rows.at("step")["op_us"], 3.5);
  EXPECT_EQ(rows.at("step")["overhead_us"], 5.5);
  EXPECT_EQ(rows.at("registered_range")["overhead_us"], 1.6);
  EXPECT_EQ(rows.at("registered_range")["ops"], 2);
  EXPECT_EQ(rows.at("tail")["overhead_us"], 1.5);
  EXPECT_NEAR(rows.at("tail")["overhead_share"].get<double>(), 0.6, 1e-12);
}

TEST_F(ImportQueriesNsys, RangeAndKernelSummaries) {
  const auto ranges = by(query(db_, "nvtx_range_summary"), "name");
  ASSERT_EQ(ranges.size(), 4u);  // step, registered_range, tail, async_io; the mark is no range
  EXPECT_EQ(ranges.at("step")["domain"], "llmbench");
  EXPECT_EQ(ranges.at("registered_range")["domain"], "llmbench");
  EXPECT_TRUE(ranges.at("tail")["domain"].is_null());
  EXPECT_EQ(ranges.at("async_io")["total_ms"], 0.009);
  EXPECT_EQ(ranges.at("registered_range")["min_depth"], 1);
  const auto kernels = by(query(db_, "kernel_summary"), "name");
  ASSERT_EQ(kernels.size(), 5u);
  EXPECT_EQ(kernels.at("relu_kernel")["n"], 2);
  EXPECT_EQ(kernels.at("relu_kernel")["avg_us"], 0.25);
  EXPECT_EQ(kernels.at("[CUDA memcpy Device-to-Host]")["bytes"], 4096);
  double share = 0;
  for (const auto& [name, r] : kernels) share += r["share"].get<double>();
  EXPECT_NEAR(share, 1.0, 1e-12);
  EXPECT_EQ(query(db_, "kernel_summary", "--param top_n=2").size(), 2u);
}

TEST(ImportQueriesKineto, KernelsFollowAc2gFlowsToTheRecordFunctionRange) {
  const fs::path dir = scratch_dir(), db = dir / "kineto.db", in = dir / "kineto.json";
  fs::remove(db);
  write_file(in, kineto_trace().dump());
  ASSERT_EQ(run_llmbench("import chrome " + in.string() + " --db " + db.string()).exit_code, 0);
  const ojson rows = query(db, "kernel_by_nvtx_range");
  ASSERT_EQ(rows.size(), 3u) << rows.dump(1);
  for (const auto& r : rows) EXPECT_EQ(r["range_name"], "my_range") << r.dump();
  const ojson proj = query(db, "range_gpu_projection");
  ASSERT_EQ(proj.size(), 1u);
  EXPECT_EQ(proj[0]["gpu_start_ts"], 130000);
  EXPECT_EQ(proj[0]["gpu_end_ts"], 159000);
  EXPECT_EQ(proj[0]["op_us"], 12.345 + 2 + 3);
}

TEST(ImportQueriesScope, ImportsBesideRunsKeepTheirOwnScope) {
  const fs::path dir = scratch_dir(), db = dir / "mixed.db";
  fs::remove(db);
  const Result run = run_llmbench("run --model tiny --batch 1 --prompt-len 8 --max-new-tokens 2 "
                                  "--repeat 1 --warmup 0 --trace ops --db " + db.string() +
                                  " --peak-bw-gbps 20 --peak-tflops 0.2 --quiet");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto ops_before = sql_int(db, "SELECT COUNT(*) FROM event");
  make_nsys_export(dir / "report.sqlite");
  ASSERT_EQ(run_llmbench("import nsys " + (dir / "report.sqlite").string() + " --db " +
                         db.string()).exit_code, 0);
  EXPECT_EQ(sql_int(db, "SELECT COUNT(*) FROM event"), ops_before + 16);
  EXPECT_EQ(sql_int(db, "SELECT COUNT(*) FROM event e JOIN track t ON t.id = e.track_id "
                        "WHERE t.case_id IS NOT NULL"), ops_before);
  // Default: the import. With case_id: the run's trace, its ops attributed to their ranges.
  EXPECT_EQ(by(query(db, "kernel_summary"), "name").count("gemm_kernel<float>(float*)"), 1u);
  const auto own = by(query(db, "kernel_summary", "--param case_id=1 --param top_n=100"), "name");
  EXPECT_EQ(own.count("attention"), 1u);
  EXPECT_EQ(own.count("relu_kernel"), 0u);
  std::map<std::string, std::set<std::string>> ranges_of;
  for (const auto& r : query(db, "kernel_by_nvtx_range", "--param case_id=1"))
    ranges_of[r["name"]].insert(r["range_name"]);
  EXPECT_EQ(ranges_of["attention"], std::set<std::string>{"layer"});
  EXPECT_EQ(ranges_of["lm_head"], (std::set<std::string>{"decode_step", "prefill"}));
  // The run's own queries are untouched by the import.
  const ojson top = query(db, "top_ops", "--param top_n=3");
  ASSERT_FALSE(top.empty());
  EXPECT_EQ(top[0]["case_id"], 1);
}

// Two transformers decode steps as torch.profiler 2.x writes them, imported beside a real
// llmbench trace (tiny, 2 decode steps) in one database, as the GPU peer check does.
class KinetoDecode : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::path(LLMBENCH_TEST_SCRATCH) / "kineto_decode" / std::to_string(::getpid());
    fs::create_directories(dir_);
    db_ = dir_ / "peer.db";
    fs::remove(db_);
    run_ = run_llmbench("run --model tiny --batch 1 --prompt-len 8 --max-new-tokens 3 --repeat 1 "
                        "--warmup 0 --trace ops --peak-bw-gbps 20 --peak-tflops 0.2 --quiet --db " +
                        db_.string(), dir_ / "run");
    write_file(dir_ / "torch_eager_decode.json", kineto_decode_trace().dump());
    import_ = run_llmbench("import chrome " + (dir_ / "torch_eager_decode.json").string() +
                           " --db " + db_.string(), dir_ / "import");
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  void SetUp() override {
    ASSERT_EQ(run_.exit_code, 0) << run_.err;
    ASSERT_EQ(import_.exit_code, 0) << import_.err;
  }
  static inline fs::path dir_, db_;
  static inline Result run_, import_;
};

TEST_F(KinetoDecode, EveryKernelHasItsLaunchAndGraphLaunchesFanOut) {
  EXPECT_EQ(import_.err.find("skipped"), std::string::npos) << import_.err;
  const std::string imp = "(SELECT MAX(id) FROM import)";
  EXPECT_EQ(sql_int(db_, "SELECT COUNT(*) FROM device_op WHERE import_id = " + imp), 29);
  EXPECT_EQ(sql_int(db_, "SELECT COUNT(*) FROM device_op WHERE import_id = " + imp +
                         " AND launch_id IS NULL"), 0);
  // One 's' on cudaGraphLaunch, one 'f' per kernel of the graph: three flows per launch.
  EXPECT_EQ(sql_int(db_, "SELECT COUNT(*) FROM flow AS f JOIN event AS e ON e.id = f.slice_out "
                         "WHERE e.name = 'cudaGraphLaunch'"), 6);
  EXPECT_EQ(sql_int(db_, "SELECT json_extract(notes, '$.\"flow ends sharing one start (one per "
                         "kernel of a CUDA graph launch)\"') FROM import"), 4);
  EXPECT_EQ(sql_int(db_, "SELECT COUNT(*) FROM slice WHERE name = 'PyTorch Profiler (0)'"), 1);
}

TEST_F(KinetoDecode, KernelsGoToTheirModuleRange) {
  std::map<std::pair<std::string, std::string>, ojson> got;
  for (const auto& r : query(db_, "kernel_by_nvtx_range")) got[{r["range_name"], r["name"]}] = r;
  auto at = [&](const std::string& range, const std::string& name) {
    return got[std::pair(range, name)];
  };
  EXPECT_EQ(at("q_proj", "gemmSN_TN_kernel<half>")["total_us"], 15.0);
  EXPECT_EQ(at("q_proj", "splitKreduce_kernel<half>")["n"], 1);
  EXPECT_EQ(at("lm_head", "gemv2T_kernel_val<half>")["total_us"], 77.5 + 78.5);
  EXPECT_EQ(at("decode_step", "gemvx_kernel")["n"], 2);            // inside the CUDA graph
  EXPECT_EQ(at("decode_step", "triton_poi_fused_add_0")["n"], 2);  // cuLaunchKernel
  EXPECT_EQ(at("decode_step", "Memcpy DtoH (Device -> Pageable)")["category"], "gpu_memcpy");
  for (const auto& [key, r] : got) EXPECT_NE(key.first, "(no range)") << r.dump();
  const auto kernels = by(query(db_, "kernel_summary"), "name");
  EXPECT_EQ(kernels.at("gemv2T_kernel_val<half>")["n"], 15);
  EXPECT_EQ(kernels.at("Memcpy DtoH (Device -> Pageable)")["bytes"], 16);
  const auto overhead = by(query(db_, "launch_overhead"), "name");
  EXPECT_EQ(overhead.at("decode_step")["n"], 2);
  EXPECT_EQ(overhead.at("decode_step")["ops"], 29);
}

TEST_F(KinetoDecode, PeerGemmCompareLinesUpTheSameWeights) {
  const ojson rows = query(db_, "peer_gemm_compare");
  ASSERT_EQ(rows.size(), 6u) << rows.dump(1);
  // llmbench's side, read independently: its decode gemm ops and its decode steps.
  std::map<std::string, double> ours_ns;
  for (const auto& r : sql_rows(db_, "SELECT e.name, SUM(e.dur) FROM event AS e JOIN track AS t "
                                     "ON t.id = e.track_id WHERE t.case_id = 1 AND e.phase = "
                                     "'decode' AND e.category = 'gemm' GROUP BY e.name"))
    ours_ns[r[0]] = std::stod(r[1]);
  const auto steps = sql_int(db_, "SELECT COUNT(*) FROM event AS e JOIN track AS t ON t.id = "
                                  "e.track_id WHERE t.case_id = 1 AND e.name = 'decode_step'");
  ASSERT_EQ(steps, 2);
  const std::vector<std::pair<std::string, double>> torch_us = {
      {"qkv_proj", 57.0}, {"o_proj", 19.0}, {"gate_up_proj", 81.5}, {"down_proj", 41.5},
      {"lm_head", 78.0}, {"total", 277.0}};
  const std::vector<double> kernels = {3.5, 1, 2, 1, 1, 8.5};
  double ours_total = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const ojson& r = rows[i];
    SCOPED_TRACE(r.dump());
    EXPECT_EQ(r["op"], torch_us[i].first);
    EXPECT_NEAR(r["torch_us"].get<double>(), torch_us[i].second, 1e-9);
    EXPECT_NEAR(r["torch_kernels"].get<double>(), kernels[i], 1e-12);
    EXPECT_EQ(r["torch_steps"], 2);
    EXPECT_EQ(r["llmbench_steps"], 2);
    const double ours = i < 5 ? ours_ns.at(r["op"]) / 1e3 / 2 : ours_total;
    ours_total += ours;
    EXPECT_NEAR(r["llmbench_us"].get<double>(), ours, 1e-9);
    EXPECT_NEAR(r["ratio"].get<double>(), ours / torch_us[i].second, 1e-9);
    EXPECT_EQ(r["llmbench_calls"].get<double>(), i < 5 ? (i == 4 ? 1 : 2) : 9);
  }
}

}  // namespace
