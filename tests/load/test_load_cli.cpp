// `llmbench load` end to end: a sweep at concurrency 1 and 4 against `llmbench serve --model
// tiny` started by --server-cmd stores every request and chunk, the bundled queries agree with
// the printed numbers and serving_table has both levels; two servers' databases merged give one
// table and compare level by level; a server that stops mid-run gives per-request errors and
// exit 1; bad input is one line and exit 2. Every run is bounded (small requests, timeouts).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <thread>

extern char** environ;

#include "tests/cli/llmbench_process.h"
#include "tests/load/sqlite_scalar.h"

namespace {

using llmbench_test::Result;
using llmbench_test::run_llmbench;
using llmbench_test::scalar;
using llmbench_test::scratch_dir;
using json = nlohmann::json;
namespace fs = std::filesystem;

const std::string kServe = std::string("'") + LLMBENCH_BIN + " serve --model tiny --port {port}'";
const std::string kShape = " --input-len 16 --output-len 8 --ignore-eos --quiet";

json query_json(const fs::path& db, const std::string& name, const fs::path& dir) {
  const Result r = run_llmbench("query " + db.string() + " " + name + " --format json", dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out);
}

TEST(LoadCli, SweepAgainstServeStoresEveryRequestAndTheServingTable) {
  const fs::path dir = scratch_dir();
  const fs::path db = dir / "serve.db";
  fs::remove(db);
  const auto t0 = std::chrono::steady_clock::now();
  const Result r = run_llmbench("load --server-cmd " + kServe + " --concurrency 1,4 --num-requests 12" +
                                kShape + " --format json --db " + db.string(), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(60));
  const json out = json::parse(r.out);
  ASSERT_EQ(out["levels"].size(), 2u);
  EXPECT_EQ(out["run"]["prompt_kind"].dump(), json("token_ids").dump());
  EXPECT_EQ(out["levels"][0]["level"].dump(), json("c1 in16 out8").dump());
  EXPECT_EQ(out["levels"][1]["concurrency"].dump(), json(4).dump());
  for (const json& l : out["levels"]) {
    EXPECT_EQ(l["requests"].dump(), json(12).dump());
    EXPECT_EQ(l["failed"].dump(), json(0).dump());
    EXPECT_EQ(l["output_tokens"].dump(), json(12 * 8).dump());  // ignore_eos: every request runs to max_tokens
    EXPECT_EQ(l["input_tokens"].dump(), json(12 * 16).dump());  // the server's usage
    EXPECT_GT(l["ttft_ms_p50"].get<double>(), 0);
    EXPECT_LE(l["ttft_ms_p50"].get<double>(), l["e2el_ms_p50"].get<double>());
    EXPECT_FALSE(l.contains("goodput_req_s")) << "no --goodput, so no goodput column";
    // A higher-is-better rate names its low tail: p1 (99% of requests were at least this fast).
    ASSERT_TRUE(l.contains("user_tok_s_p1")) << l.dump();
    EXPECT_FALSE(l.contains("user_tok_s_p99"));
    EXPECT_LE(l["user_tok_s_p1"].get<double>(), l["user_tok_s_p50"].get<double>());
  }
  // The output names the schema version and the commit, as every format does.
  EXPECT_TRUE(out["schema_version"].is_number_integer()) << out.dump();
  EXPECT_FALSE(out["run"]["git_commit"].get<std::string>().empty());
  // Every request and chunk stored (llmbench serve streams one chunk per token).
  EXPECT_EQ(scalar(db, "SELECT COUNT(*) FROM load_level"), 2);
  EXPECT_EQ(scalar(db, "SELECT COUNT(*) FROM load_request WHERE status = 'ok' AND output_tokens = 8"
                       " AND completion_tokens = 8 AND prompt_tokens = 16 AND http_status = 200"
                       " AND finish_reason = 'length'"), 24);
  EXPECT_EQ(scalar(db, "SELECT COUNT(*) FROM load_chunk"), 24 * 8);
  EXPECT_EQ(scalar(db, "SELECT COUNT(*) FROM load_chunk WHERE itl_ns IS NULL"), 24);
  EXPECT_EQ(scalar(db, "SELECT COUNT(*) FROM load_run WHERE status = 'complete' AND label = 'tiny'"
                       " AND server_cmd LIKE '% serve --model tiny --port %'"), 1);
  EXPECT_EQ(scalar(db, "SELECT COUNT(*) FROM load_request WHERE ttft_ns <> first_token_ns - send_ns"
                       " OR e2el_ns <> end_ns - send_ns"), 0);
  // The bundled queries agree with what load printed.
  const json summary = query_json(db, "load_summary", dir);
  ASSERT_EQ(summary.size(), 2u);
  for (int i = 0; i < 2; ++i)
    for (const char* k : {"request_throughput", "output_tok_s", "total_tok_s", "ttft_ms_p50",
                          "ttft_ms_p99", "tpot_ms_p50", "itl_ms_p99", "e2el_ms_p50"}) {
      const double want = out["levels"][i][k].get<double>();
      EXPECT_NEAR(summary[i][k].get<double>(), want, 1e-6 * std::abs(want) + 1e-9) << k;
    }
  const json pct = query_json(db, "load_percentiles", dir);
  ASSERT_EQ(pct.size(), 8u);  // 2 levels x ttft, tpot, itl, e2el
  EXPECT_EQ(pct[0]["metric"].dump(), json("ttft_ms").dump());
  EXPECT_NEAR(pct[0]["p95"].get<double>(), out["levels"][0]["ttft_ms_p95"].get<double>(), 1e-6);
  const json table = query_json(db, "serving_table", dir);
  ASSERT_EQ(table.size(), 1u);
  EXPECT_EQ(table[0]["label"].dump(), json("tiny").dump());
  EXPECT_NEAR(table[0]["tps_at_1"].get<double>(), out["levels"][0]["output_tok_s"].get<double>(), 1e-6);
  EXPECT_NEAR(table[0]["qps_at_4"].get<double>(), out["levels"][1]["request_throughput"].get<double>(), 1e-6);
  EXPECT_NEAR(table[0]["ftl_ms_at_4"].get<double>(), out["levels"][1]["ttft_ms_p50"].get<double>(), 1e-6);
  EXPECT_TRUE(table[0]["tps_at_16"].is_null());
  const json timeline = query_json(db, "load_timeline", dir);
  EXPECT_EQ(timeline.size(), 12u);
  const json itl = query_json(db, "load_itl_distribution", dir);
  ASSERT_FALSE(itl.empty());
  EXPECT_DOUBLE_EQ(itl.back()["cumulative_share"].get<double>(), 1.0);
  const json good = query_json(db, "load_goodput", dir);
  ASSERT_EQ(good.size(), 2u);
  EXPECT_EQ(good[0]["good"].dump(), json(12).dump());  // no limits given: every ok request is good
}

TEST(LoadCli, TwoServersMergeIntoOneTableAndCompareByLevel) {
  const fs::path dir = scratch_dir();
  const fs::path a = dir / "a.db", b = dir / "b.db", all = dir / "all.db";
  for (const auto& p : {a, b, all}) fs::remove(p);
  for (const auto& [db, label] : {std::pair{a, "server-a"}, std::pair{b, "server-b"}}) {
    const Result r = run_llmbench("load --server-cmd " + kServe + " --concurrency 1,4 --num-requests 6" +
                                  kShape + " --goodput ttft:10000,tpot:10000 --label " + label +
                                  " --db " + db.string(), dir);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("goodput_req_s"), std::string::npos) << r.out;
  }
  const Result m = run_llmbench("merge " + a.string() + " " + b.string() + " -o " + all.string(), dir);
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_NE(m.err.find("2 load runs added"), std::string::npos) << m.err;
  const json table = query_json(all, "serving_table", dir);
  ASSERT_EQ(table.size(), 2u);
  EXPECT_EQ(table[0]["label"].dump(), json("server-a").dump());
  EXPECT_EQ(table[1]["label"].dump(), json("server-b").dump());
  for (const json& row : table) EXPECT_FALSE(row["qps_at_4"].is_null());
  EXPECT_EQ(scalar(all, "SELECT COUNT(*) FROM load_request"), 24);
  EXPECT_EQ(scalar(all, "SELECT COUNT(DISTINCT level_id) FROM load_request"), 4);
  // compare: both databases hold serving runs only, so levels are matched and compared.
  const Result c = run_llmbench("compare " + a.string() + " " + b.string() + " --format json", dir);
  // One load run per side is no valid test (exit 3), and the advice fits serving runs: no
  // `--run ... --config PROFILE`, which only engine runs have.
  EXPECT_EQ(c.exit_code, 3) << c.err;
  EXPECT_NE(c.err.find("llmbench load"), std::string::npos) << c.err;
  EXPECT_EQ(c.err.find("--config PROFILE"), std::string::npos) << c.err;
  const json cj = json::parse(c.out);
  ASSERT_EQ(cj["cases"].size(), 2u);
  EXPECT_EQ(cj["cases"][0]["case"].dump(), json("load c1 in16 out8").dump());
  EXPECT_EQ(cj["cases"][1]["case"].dump(), json("load c4 in16 out8").dump());
  EXPECT_EQ(cj["cases"][0]["metrics"]["ttft"]["n_base"].dump(), json(6).dump());
}

TEST(LoadCli, ServerStoppingMidRunGivesPerRequestErrorsAndExit1) {
  const fs::path dir = scratch_dir();
  const fs::path db = dir / "dies.db";
  fs::remove(db);
  // The server gets SIGTERM after 1.5 s (timeout(1)): new requests then get 503 while it
  // drains for 0.2 s, then nothing listens. 40 requests at 10/s take 4 s.
  const std::string cmd = std::string("'timeout 1.5 ") + LLMBENCH_BIN +
                          " serve --model tiny --port {port} --shutdown-timeout 0.2'";
  const auto t0 = std::chrono::steady_clock::now();
  const Result r = run_llmbench("load --server-cmd " + cmd + " --request-rate 10 --num-requests 40" +
                                kShape + " --connect-timeout 1 --db " + db.string(), dir);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("load: the server exited with code"), std::string::npos) << r.err;
  EXPECT_EQ(scalar(db, "SELECT COUNT(*) FROM load_request"), 40);  // every request recorded
  EXPECT_GT(scalar(db, "SELECT COUNT(*) FROM load_request WHERE status = 'ok'"), 0);
  EXPECT_GT(scalar(db, "SELECT COUNT(*) FROM load_request WHERE status = 'error' AND"
                       " (error LIKE 'connect failed: %' OR error LIKE 'HTTP 503: %')"), 0);
  EXPECT_EQ(scalar(db, "SELECT COUNT(*) FROM load_request WHERE status = 'error' AND"
                       " (error IS NULL OR error = '')"), 0);
}

TEST(LoadCli, BadInputIsOneLineAndExit2) {
  const fs::path dir = scratch_dir();
  struct Case {
    std::string args, starts;
  };
  const std::string nowhere = "http://127.0.0.1:1";
  const Case cases[] = {
      {"load --url " + nowhere + " --concurrency 0", "error: --concurrency: expected an integer in [1, 4096]"},
      {"load --url " + nowhere + " --request-rate 2 --concurrency 1", "error: --concurrency/--request-rate:"},
      {"load --concurrency 1", "error: --url: expected http://HOST:PORT"},
      {"load --url " + nowhere + " --model m", "error: --url: cannot reach http://127.0.0.1:1/v1/completions"},
      {"load --url " + nowhere + " --server-cmd 'exit 3' --server-timeout 5", "error: --server-cmd: the server exited with code 3 before"},
      {"load --url " + nowhere + " --goodput ttft", "error: --goodput: expected KEY:MS items"},
      {"load --url " + nowhere + " --concurrency 2 --stop-on-saturation", "error: --stop-on-saturation: applies to --request-rate"},
      {"load --url " + nowhere + " --request-rate 2 --stop-on-saturation --no-stream", "error: --stop-on-saturation: needs streamed answers"},
      {"load --url " + nowhere + " --request-rate 2 --saturation-window 0.1", "error: --saturation-window: expected seconds in [0.5, 3600]"},
  };
  for (const Case& c : cases) {
    const Result r = run_llmbench(c.args + " --quiet --db " + (dir / "bad.db").string(), dir);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.err;
    EXPECT_EQ(r.err.rfind(c.starts, 0), 0u) << c.args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  EXPECT_FALSE(fs::exists(dir / "bad.db"));  // nothing written for bad input
}

// --no-stream against serve, completions and chat: one JSON answer per request, so E2EL and
// the usage tokens are measured and TTFT, TPOT and ITL are unknown (null, NULL), never made up.
TEST(LoadCli, NoStreamMeasuresEndToEndLatencyAndUsageTokensOnly) {
  const fs::path dir = scratch_dir();
  for (const std::string endpoint : {"completions", "chat"}) {
    const fs::path db = dir / ("nostream-" + endpoint + ".db");
    fs::remove(db);
    const Result r = run_llmbench("load --server-cmd " + kServe + " --endpoint " + endpoint +
                                  " --no-stream --concurrency 2 --num-requests 6" + kShape +
                                  " --format json --db " + db.string(), dir);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json out = json::parse(r.out);
    EXPECT_EQ(out["run"]["stream"].dump(), "false");
    const json& l = out["levels"][0];
    EXPECT_EQ(l["ok"].get<int>(), 6) << l.dump();
    EXPECT_EQ(l["output_tokens"].get<int>(), 48) << l.dump();  // 8 each (--ignore-eos), from usage
    EXPECT_TRUE(l["ttft_ms_p50"].is_null()) << l.dump();
    EXPECT_TRUE(l["tpot_ms_p50"].is_null()) << l.dump();
    EXPECT_TRUE(l["itl_ms_p50"].is_null()) << l.dump();
    EXPECT_GT(l["e2el_ms_p50"].get<double>(), 0) << l.dump();
    EXPECT_EQ(scalar(db, "SELECT stream FROM load_run"), 0);
    EXPECT_EQ(scalar(db, "SELECT COUNT(*) FROM load_request WHERE ttft_ns IS NULL AND "
                         "e2el_ns > 0 AND completion_tokens = 8"), 6);
    EXPECT_EQ(scalar(db, "SELECT COUNT(*) FROM load_chunk"), 0);
  }
}

// Ctrl-C after the first level: it stays stored, the second is dropped, the server we started
// is stopped, the run is marked interrupted and the exit code is 128 + SIGINT.
TEST(LoadCli, InterruptKeepsFinishedLevelsAndStopsTheServer) {
  const fs::path dir = scratch_dir();
  const fs::path db = dir / "int.db";
  fs::remove(db);
  std::vector<std::string> args = {LLMBENCH_BIN, "load", "--server-cmd",
                                    std::string(LLMBENCH_BIN) + " serve --model tiny --port {port}",
                                    "--request-rate", "1000,1", "--num-requests", "20",
                                    "--input-len", "8", "--output-len", "4", "--db", db.string()};
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  ASSERT_EQ(posix_spawn(&pid, LLMBENCH_BIN, &fa, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  // Wait (bounded) for the first level's line, then interrupt.
  std::string err;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  bool signalled = false;
  int status = 0;
  bool reaped = false;
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, 50) > 0) {
      char buf[4096];
      const ssize_t n = read(fds[0], buf, sizeof buf);
      if (n > 0) err.append(buf, std::size_t(n));
    }
    if (!signalled && err.find("[1/2] r1000 b1 in8 out4: 20 ok") != std::string::npos) {
      kill(pid, SIGINT);
      signalled = true;
    }
    if (signalled && waitpid(pid, &status, WNOHANG) == pid) {
      reaped = true;
      break;
    }
  }
  if (!reaped) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  close(fds[0]);
  ASSERT_TRUE(signalled) << err;
  ASSERT_TRUE(reaped) << "load did not end after SIGINT:\n" << err;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGINT) << err;
  EXPECT_NE(err.find("has 1 of 2 levels stored"), std::string::npos) << err;
  EXPECT_NE(err.find("serve: signal 15: stopping"), std::string::npos) << err;
  EXPECT_EQ(scalar(db, "SELECT COUNT(*) FROM load_level"), 1);
  EXPECT_EQ(scalar(db, "SELECT COUNT(*) FROM load_request WHERE status = 'ok'"), 20);
  EXPECT_EQ(scalar(db, "SELECT COUNT(*) FROM load_run WHERE status = 'interrupted'"), 1);
}

}  // namespace
