// The `llmbench serve` binary: prints its bound port on stderr, serves, and exits 0 on SIGTERM
// and on SIGINT (also while a request streams); a non-loopback --host is refused with exit 2.
// Every wait is bounded.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <future>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "tests/serve/serve_child.h"

namespace {

using llmbench_test::Child;

const std::regex kListening(R"(serve: listening on http://127\.0\.0\.1:(\d+))");

TEST(ServeCli, SigtermAfterARequestExitsZero) {
  Child c({"serve", "--model", "tiny", "--port", "0", "--threads", "1"});
  const std::string port = c.wait_for(kListening, std::chrono::seconds(30));
  ASSERT_FALSE(port.empty()) << c.err;
  httplib::Client cli("127.0.0.1", std::stoi(port));
  cli.set_read_timeout(10);
  auto res = cli.Post("/v1/completions", R"({"prompt": [1, 2, 3], "max_tokens": 4})",
                      "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  kill(c.pid, SIGTERM);
  EXPECT_EQ(c.exit_code(std::chrono::seconds(10)), 0) << c.err;
}

TEST(ServeCli, SigintWhileStreamingExitsZero) {
  Child c({"serve", "--model", "tiny", "--port", "0", "--threads", "1", "--shutdown-timeout",
           "0.2"});
  const std::string port = c.wait_for(kListening, std::chrono::seconds(30));
  ASSERT_FALSE(port.empty()) << c.err;
  // Keep the engine busy with several streams, then interrupt.
  std::vector<std::future<std::string>> streams;
  for (int i = 0; i < 4; ++i)
    streams.push_back(std::async(std::launch::async, [&] {
      httplib::Client cli("127.0.0.1", std::stoi(port));
      cli.set_read_timeout(10);
      auto res = cli.Post("/v1/completions",
                          R"({"prompt": "abc", "max_tokens": 240, "stream": true})",
                          "application/json");
      return res ? res->body : std::string();
    }));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  kill(c.pid, SIGINT);
  EXPECT_EQ(c.exit_code(std::chrono::seconds(10)), 0) << c.err;
  for (auto& s : streams) {
    ASSERT_EQ(s.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    const std::string body = s.get();
    // Every stream that started ended properly: finished or aborted, then [DONE].
    if (!body.empty()) {
      EXPECT_NE(body.find("data: [DONE]"), std::string::npos) << body;
    }
  }
}

// Runs `sql` and returns the first column of every row as text.
std::vector<std::string> column(sqlite3* db, const std::string& sql) {
  std::vector<std::string> out;
  sqlite3_stmt* s = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  while (s && sqlite3_step(s) == SQLITE_ROW) {
    const unsigned char* t = sqlite3_column_text(s, 0);
    out.push_back(t ? reinterpret_cast<const char*>(t) : "NULL");
  }
  sqlite3_finalize(s);
  return out;
}

// `llmbench query DB NAME PARAMS --format json`, parsed; fails the test unless it exits 0.
nlohmann::json query_json(const std::string& db, const std::string& name,
                          const std::string& params = "") {
  const std::string cmd = std::string(LLMBENCH_BIN) + " query " + db + " " + name + " " +
                          params + " --format json 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  for (std::size_t n; p && (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int status = p ? pclose(p) : -1;
  EXPECT_EQ(status, 0) << cmd << ": " << out;
  return status == 0 ? nlohmann::json::parse(out) : nlohmann::json::array();
}

TEST(ServeCli, DbGetsStepsAndRequestEvents) {
  const std::string db_path =
      std::string(LLMBENCH_TEST_SCRATCH) + "/serve_cli_" + std::to_string(getpid()) + ".db";
  mkdir(LLMBENCH_TEST_SCRATCH, 0755);
  std::remove(db_path.c_str());
  {
    Child c({"serve", "--model", "tiny", "--port", "0", "--threads", "1", "--db", db_path});
    const std::string port = c.wait_for(kListening, std::chrono::seconds(30));
    ASSERT_FALSE(port.empty()) << c.err;
    std::vector<std::future<int>> reqs;
    for (int i = 0; i < 3; ++i)
      reqs.push_back(std::async(std::launch::async, [&, i] {
        httplib::Client cli("127.0.0.1", std::stoi(port));
        cli.set_read_timeout(10);
        const std::string body = "{\"prompt\": [" + std::to_string(i + 1) + ", 2, 3, 4, 5], " +
                                 "\"max_tokens\": " + std::to_string(5 + i) + "}";
        auto res = cli.Post("/v1/completions", body, "application/json");
        return res ? res->status : 0;
      }));
    for (auto& r : reqs) EXPECT_EQ(r.get(), 200);
    kill(c.pid, SIGTERM);
    EXPECT_EQ(c.exit_code(std::chrono::seconds(10)), 0) << c.err;
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(column(db, "SELECT count(*) FROM serve_session"), std::vector<std::string>{"1"});
  EXPECT_EQ(column(db, "SELECT count(*) FROM serve_request WHERE finish_reason = 'length' AND "
                       "arrival_ns <= first_scheduled_ns AND first_scheduled_ns < first_token_ns "
                       "AND first_token_ns <= finished_ns AND prompt_tokens = 5"),
            std::vector<std::string>{"3"});
  EXPECT_EQ(column(db, "SELECT sum(completion_tokens) FROM serve_request"),
            std::vector<std::string>{"18"});
  EXPECT_EQ(column(db, "SELECT sum(prefill_tokens) FROM serve_step"),
            std::vector<std::string>{"15"});
  // Every token came from a decode row or the end of a prompt.
  EXPECT_EQ(column(db, "SELECT sum(decode_rows) + 3 FROM serve_step"),
            std::vector<std::string>{"18"});
  EXPECT_EQ(column(db, "SELECT count(*) FROM serve_step WHERE forward_ns > dur_ns"),
            std::vector<std::string>{"0"});

  // The bundled serving queries on this session: every request's wait, step by step, and the
  // steps by kind.
  const nlohmann::json spikes = query_json(db_path, "serve_latency_spikes");
  ASSERT_FALSE(spikes.empty());
  std::map<int, std::vector<nlohmann::json>> by_rank;
  for (const auto& row : spikes) by_rank[row["rank"].get<int>()].push_back(row);
  ASSERT_EQ(by_rank.size(), 3u) << spikes.dump();  // the default top_n = 3: all three requests
  double previous_ttft = 1e300;
  for (const auto& [rank, rows] : by_rank) {
    const auto id = rows.front()["request_id"].get<std::int64_t>();
    const double ttft = rows.front()["ttft_ms"].get<double>();
    EXPECT_LE(ttft, previous_ttft) << "ranks not in TTFT order";
    previous_ttft = ttft;
    EXPECT_EQ(column(db, "SELECT (first_token_ns - arrival_ns) / 1e6 = " + rows.front()["ttft_ms"].dump() +
                         " FROM serve_request WHERE request_id = " + std::to_string(id)),
              std::vector<std::string>{"1"});
    for (const auto& row : rows) {
      EXPECT_EQ(row["request_id"].get<std::int64_t>(), id);
      EXPECT_GT(row["prefill_tokens"].get<int>() + row["decode_rows"].get<int>(), 0);
      EXPECT_LE(row["at_ms"].get<double>(), ttft);
    }
    // Its first token came from the last step listed, which ran its rows.
    EXPECT_EQ(rows.back()["scheduled"].get<int>(), 1) << rows.back().dump();
  }
  const nlohmann::json top1 = query_json(db_path, "serve_latency_spikes", "--param top_n=1");
  for (const auto& row : top1) EXPECT_EQ(row["rank"].get<int>(), 1);
  EXPECT_EQ(top1.size(), by_rank[1].size());

  const nlohmann::json kinds = query_json(db_path, "serve_steps");
  ASSERT_FALSE(kinds.empty());
  std::int64_t steps = 0;
  for (const auto& row : kinds) {
    steps += row["steps"].get<std::int64_t>();
    EXPECT_GE(row["host_share"].get<double>(), 0.0);
    EXPECT_LE(row["host_share"].get<double>(), 1.0);
  }
  EXPECT_EQ(std::to_string(steps), column(db, "SELECT count(*) FROM serve_step").at(0));
  sqlite3_close(db);
  std::remove(db_path.c_str());
}

// A checkpoint directory: text prompts use its tokenizer.model when it has one (a file that is
// not a SentencePiece model is refused at start-up, exit 2 naming it), else the byte mapping.
TEST(ServeCli, CheckpointTokenizerModelIsUsedOrRefused) {
  const std::string dir =
      std::string(LLMBENCH_TEST_SCRATCH) + "/serve_ckpt_" + std::to_string(getpid());
  mkdir(LLMBENCH_TEST_SCRATCH, 0755);
  const std::string export_cmd = std::string(LLMBENCH_BIN) +
                                 " export-weights --model tiny -o " + dir + " > /dev/null 2>&1";
  ASSERT_EQ(std::system(export_cmd.c_str()), 0);
  {
    Child c({"serve", "--model", dir, "--port", "0", "--threads", "1"});
    EXPECT_EQ(c.wait_for(std::regex("serve: text prompts: (\\w+)"), std::chrono::seconds(30)),
              "bytes")
        << c.err;
    kill(c.pid, SIGTERM);
    EXPECT_EQ(c.exit_code(std::chrono::seconds(10)), 0) << c.err;
  }
  {
    FILE* f = std::fopen((dir + "/tokenizer.model").c_str(), "w");
    ASSERT_TRUE(f);
    std::fputs("not a SentencePiece model", f);
    std::fclose(f);
    // --backend cpu: with CUDA compiled in, `auto` prints a notice line first.
    Child c({"serve", "--model", dir, "--backend", "cpu", "--port", "0", "--threads", "1"});
    EXPECT_EQ(c.exit_code(std::chrono::seconds(30)), 2) << c.err;
    c.wait_for(std::regex("tokenizer\\.model.*\n"), std::chrono::seconds(5));
    EXPECT_EQ(c.err.rfind("error: ", 0), 0u) << c.err;
    EXPECT_NE(c.err.find("tokenizer.model"), std::string::npos) << c.err;
    EXPECT_EQ(c.err.find("listening"), std::string::npos) << c.err;
  }
  std::system(("rm -rf " + dir).c_str());
}

TEST(ServeCli, NonLoopbackHostIsRefused) {
  Child c({"serve", "--model", "tiny", "--host", "0.0.0.0", "--port", "0"});
  EXPECT_EQ(c.exit_code(std::chrono::seconds(30)), 2);
  c.wait_for(std::regex("loopback"), std::chrono::seconds(1));
  EXPECT_NE(c.err.find("--host"), std::string::npos) << c.err;
}

// A second server on a port in use: exit 2 with one line naming the address (cpp-httplib's
// SO_REUSEPORT once let it start and share the traffic).
TEST(ServeCli, PortInUseIsExit2WithOneLine) {
  Child first({"serve", "--model", "tiny", "--port", "0", "--threads", "1"});
  const std::string port = first.wait_for(kListening, std::chrono::seconds(30));
  ASSERT_FALSE(port.empty()) << first.err;
  Child second({"serve", "--model", "tiny", "--backend", "cpu", "--port", port, "--threads", "1"});
  EXPECT_EQ(second.exit_code(std::chrono::seconds(30)), 2) << second.err;
  second.wait_for(std::regex("in use\n"), std::chrono::seconds(2));
  EXPECT_EQ(second.err.rfind("error: --port: cannot listen on 127.0.0.1:" + port, 0), 0u)
      << second.err;
  EXPECT_EQ(std::count(second.err.begin(), second.err.end(), '\n'), 1) << second.err;
  kill(first.pid, SIGTERM);
  EXPECT_EQ(first.exit_code(std::chrono::seconds(10)), 0) << first.err;
}

// Flags that cannot work are refused before anything is loaded: exit 2, one line naming the flag.
TEST(ServeCli, ImpossibleFlagsAreRefusedWithExit2) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--port", "70000"}, "--port"},
      {{"--port", "-1"}, "--port"},
      {{"--shutdown-timeout", "inf"}, "--shutdown-timeout"},
      {{"--shutdown-timeout", "nan"}, "--shutdown-timeout"},
      {{"--shutdown-timeout", "-1"}, "--shutdown-timeout"},
      {{"--shutdown-timeout", "1e300"}, "--shutdown-timeout"},
      {{"--max-waiting", "0"}, "--max-waiting"},
      {{"--max-waiting", "-5"}, "--max-waiting"},
      {{"--kv-cache-tokens", "-1"}, "--kv-cache-tokens"},
      {{"--max-model-len", "-1"}, "--max-model-len"},
      {{"--max-model-len", "100000"}, "--max-model-len"},
      {{"--http-threads", "0"}, "--http-threads"},
      {{"--http-threads", "100000"}, "--http-threads"},
      {{"--threads", "100000"}, "--threads"},
      {{"--max-num-seqs", "100000000"}, "--max-num-seqs"},
      {{"--dtype", "fp8"}, "--dtype"},
      {{"--chat-template", "jinja"}, "--chat-template"},
      // Fits the flag ranges, not the memory: refused before allocating (the estimate).
      {{"--kv-cache-tokens", "1000000000"}, "not enough host memory"},
  };
  for (const auto& [flags, named] : cases) {
    std::vector<std::string> args = {"serve", "--model", "tiny", "--backend", "cpu", "--port", "0"};
    args.insert(args.end(), flags.begin(), flags.end());
    Child c(args);
    EXPECT_EQ(c.exit_code(std::chrono::seconds(30)), 2) << flags[0] << " " << flags[1] << ": "
                                                        << c.err;
    c.wait_for(std::regex("\n"), std::chrono::seconds(2));
    EXPECT_NE(c.err.find(named), std::string::npos) << c.err;
    EXPECT_EQ(c.err.find("listening"), std::string::npos) << c.err;
  }
}

}  // namespace
