// `llmbench serve --db`: the database is opened and checked at start-up (a bad path, a file
// that is not a database, one that is not llmbench's: exit 2 with one line, before the model
// loads), and rows are stored as the server runs, so a server killed with SIGKILL keeps every
// request that finished more than a commit interval (0.5 s) before. Every wait is bounded.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <thread>

#include "tests/cli/llmbench_process.h"
#include "tests/serve/serve_child.h"
#include "tools/store/store.h"

namespace {

namespace fs = std::filesystem;
using llmbench_test::Child;

const std::regex kListening(R"(serve: listening on http://127\.0\.0\.1:(\d+))");

std::string scalar(const fs::path& db, const std::string& sql) {
  sqlite3* h = nullptr;
  EXPECT_EQ(sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(h, sql.c_str(), -1, &s, nullptr), SQLITE_OK) << sqlite3_errmsg(h);
  std::string out;
  if (s && sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
    out = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
  sqlite3_finalize(s);
  sqlite3_close(h);
  return out;
}

// LLMBENCH_CPU_ISA reaches the server as it reaches `run`: forced, nothing is measured, every op
// class takes the forced path, and the session row says so. (Each test is its own process.)
// The server runs an fp16 KV pool (--kv-cache-dtype fp16), said at start-up and stored too.
TEST(ServeDb, AForcedCpuIsaIsWhatTheSessionRanAndStored) {
  const fs::path dir = llmbench_test::scratch_dir();
  const fs::path db = dir / "forced_isa.db";
  fs::remove(db);
  ASSERT_EQ(setenv("LLMBENCH_CPU_ISA", "portable", 1), 0);
  Child c({"serve", "--model", "tiny", "--port", "0", "--threads", "1", "--db", db.string(),
           "--kv-cache-dtype", "fp16"});
  const std::string port = c.wait_for(kListening, std::chrono::seconds(30));
  unsetenv("LLMBENCH_CPU_ISA");
  EXPECT_NE(c.err.find(" MiB, fp16); "), std::string::npos) << c.err;
  ASSERT_FALSE(port.empty()) << c.err;
  EXPECT_NE(c.err.find("serve: CPU kernels: portable for every op class (forced by "
                       "LLMBENCH_CPU_ISA)"),
            std::string::npos)
      << c.err;
  httplib::Client cli("127.0.0.1", std::stoi(port));
  cli.set_read_timeout(10);
  auto res = cli.Post("/v1/completions", R"({"prompt": [1, 2, 3], "max_tokens": 2})",
                      "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  kill(c.pid, SIGTERM);
  EXPECT_EQ(c.exit_code(std::chrono::seconds(10)), 0);
  EXPECT_EQ(scalar(db, "SELECT cpu_isa FROM serve_session"), "portable");
  EXPECT_EQ(scalar(db, "SELECT kv_cache_dtype FROM serve_session"), "fp16");
}

TEST(ServeDb, KilledServerKeepsTheRequestsThatFinished) {
  const fs::path dir = llmbench_test::scratch_dir();
  const fs::path db = dir / "killed.db";
  fs::remove(db);
  Child c({"serve", "--model", "tiny", "--port", "0", "--threads", "1", "--db", db.string()});
  const std::string port = c.wait_for(kListening, std::chrono::seconds(30));
  ASSERT_FALSE(port.empty()) << c.err;
  httplib::Client cli("127.0.0.1", std::stoi(port));
  cli.set_read_timeout(10);
  constexpr int kRequests = 3;
  for (int i = 0; i < kRequests; ++i) {
    // 20 tokens: with blocks of 16 and prefix caching (the default), requests 2 and 3 find
    // the first 16 cached.
    auto res = cli.Post("/v1/completions",
                        R"({"prompt": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17,
                                       18, 19, 20], "max_tokens": 4})",
                        "application/json");
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 200) << res->body;
  }
  // Past one commit interval (0.5 s) with margin, then no chance to clean up.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  kill(c.pid, SIGKILL);
  EXPECT_EQ(c.exit_code(std::chrono::seconds(10)), 128 + SIGKILL);
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM serve_session"), "1");
  EXPECT_EQ(scalar(db, "SELECT count(*) FROM serve_request WHERE finish_reason = 'length'"),
            std::to_string(kRequests));
  EXPECT_EQ(scalar(db, "SELECT sum(completion_tokens) FROM serve_request"),
            std::to_string(4 * kRequests));
  EXPECT_NE(scalar(db, "SELECT count(*) FROM serve_step"), "0");
  EXPECT_EQ(scalar(db, "SELECT prefix_caching FROM serve_session"), "1");
  EXPECT_EQ(scalar(db, "SELECT kv_cache_dtype FROM serve_session"), "fp32");
  // The CPU kernels it ran (issue 45): the measured decode dispatch, said and stored as run's.
  EXPECT_NE(c.err.find("serve: CPU kernels: "), std::string::npos) << c.err;
  EXPECT_TRUE(std::regex_search(scalar(db, "SELECT cpu_isa FROM serve_session"),
                                std::regex("^(avx512-bf16|avx512|avx2|portable)")));
  EXPECT_EQ(scalar(db, "SELECT group_concat(cached_tokens) FROM (SELECT cached_tokens FROM"
                       " serve_request ORDER BY request_id)"),
            "0,16,16");
  EXPECT_EQ(scalar(db, "SELECT sum(cached_tokens) FROM serve_step"), "32");
  // What `llmbench query` reads from the killed server's database (its -wal file included).
  const auto q = llmbench_test::run_llmbench("query " + db.string() + " serve_steps --format csv",
                                             dir / "query");
  EXPECT_EQ(q.exit_code, 0) << q.err;
}

// `serve --db X` exits 2 with one `error:` line naming the database, before loading the model.
void expect_refused(const std::string& db, const std::string& why) {
  const auto r = llmbench_test::run_llmbench("serve --model tiny --port 0 --db '" + db + "'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("error: database '" + db + "'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(why), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.find("listening"), std::string::npos) << r.err;
}

TEST(ServeDb, BadPathsExitTwoAtStartup) {
  const fs::path dir = llmbench_test::scratch_dir();
  expect_refused((dir / "no-such-dir" / "x.db").string(), "cannot open");
  const fs::path text = dir / "notes.txt";
  llmbench_test::write_file(text, std::string(4096, 'x'));
  expect_refused(text.string(), "not a database");
  expect_refused(dir.string(), "");
}

// A full disk, played by a file size limit the child inherits (RLIMIT_FSIZE, with SIGXFSZ
// ignored so a write past it fails with EFBIG): storing fails with one line and is retried with
// a bounded backlog, serving goes on, and the exit says how many rows were not stored.
TEST(ServeDb, AFullDiskStopsStoringNotServing) {
  const fs::path dir = llmbench_test::scratch_dir();
  const fs::path db = dir / "full.db";
  fs::remove(db);
  // The schema, checkpointed into the main file; the server then only appends to the -wal
  // file, which the limit stops at 64 KiB (a few commits). The main file is larger than the
  // limit but is only read.
  { llmbench::ResultStore store(db.string()); }
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  const auto old_handler = signal(SIGXFSZ, SIG_IGN);
  rlimit small = old;
  small.rlim_cur = rlim_t(64 * 1024);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  Child c({"serve", "--model", "tiny", "--port", "0", "--threads", "1", "--db", db.string()});
  setrlimit(RLIMIT_FSIZE, &old);  // this process writes as before; the child keeps the limit
  signal(SIGXFSZ, old_handler);
  const std::string port = c.wait_for(kListening, std::chrono::seconds(30));
  ASSERT_FALSE(port.empty()) << c.err;
  httplib::Client cli("127.0.0.1", std::stoi(port));
  cli.set_read_timeout(10);
  const std::regex stopped(R"(serve: --db '[^']*': cannot store now \(([^)]*)\); serving goes on)");
  std::string why;
  for (int i = 0; i < 200 && why.empty(); ++i) {
    auto res = cli.Post("/v1/completions", R"({"prompt": [1, 2, 3], "max_tokens": 16})",
                        "application/json");
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 200);
    why = c.wait_for(stopped, std::chrono::milliseconds(60));
  }
  if (why.empty()) why = c.wait_for(stopped, std::chrono::seconds(2));
  ASSERT_FALSE(why.empty()) << "no failed commit within 200 requests: " << c.err;
  EXPECT_NE(why.find("disk"), std::string::npos) << why;
  // Serving goes on.
  auto after = cli.Post("/v1/completions", R"({"prompt": [1, 2, 3], "max_tokens": 4})",
                        "application/json");
  ASSERT_TRUE(after);
  EXPECT_EQ(after->status, 200);
  kill(c.pid, SIGTERM);
  EXPECT_EQ(c.exit_code(std::chrono::seconds(10)), 0) << c.err;
  c.wait_for(std::regex("rows dropped while it could not store"), std::chrono::seconds(2));
  EXPECT_NE(c.err.find("rows dropped while it could not store"), std::string::npos) << c.err;
  // One line says so, once.
  std::size_t lines = 0;
  for (std::size_t at = c.err.find("cannot store now"); at != std::string::npos;
       at = c.err.find("cannot store now", at + 1))
    ++lines;
  EXPECT_EQ(lines, 1u) << c.err;
}

}  // namespace
