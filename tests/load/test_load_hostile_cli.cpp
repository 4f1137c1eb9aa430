// `llmbench load` end to end against what a careless user or a hostile server gives it (issue
// 42): flags that used to run something else (exit 2 naming the flag), a Mooncake trace at
// 1e300 ms, a tokenizer.json whose model is null, SIGTERM during an event flood (honoured at
// once), kill -9 of load (its --server-cmd server dies too), and a database that stops taking
// writes (one line, the run marked failed). Servers are in-process scripted ones on loopback.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

#include "tests/cli/llmbench_process.h"
#include "tests/load/scripted_server.h"
#include "tests/load/sqlite_scalar.h"

namespace {

using llmbench_test::Result;
using llmbench_test::run_llmbench;
using llmbench_test::scalar;
using llmbench_test::scratch_dir;
namespace fs = std::filesystem;
using llmbench::test::Behaviour;
using llmbench::test::Script;
using llmbench::test::ScriptedServer;

int count_lines(const std::string& s) { return int(std::count(s.begin(), s.end(), '\n')); }

// Processes of process group `group` that are not zombies (a reaped-by-nobody zombie is gone
// as a process: PID 1 of a container may never reap it).
int live_members(pid_t group) {
  int n = 0;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "stat");
    std::string stat;
    std::getline(in, stat);
    const auto close_paren = stat.rfind(')');
    if (close_paren == std::string::npos) continue;
    std::istringstream rest(stat.substr(close_paren + 2));
    char state = 0;
    pid_t ppid = 0, pgrp = 0;
    rest >> state >> ppid >> pgrp;
    if (pgrp == group && state != 'Z') ++n;
  }
  return n;
}

void expect_flag_refused(const std::string& args, const std::string& flag) {
  const Result r = run_llmbench("load --url http://127.0.0.1:9 --model m " + args + " --quiet");
  EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
  EXPECT_EQ(r.err.rfind("error: " + flag, 0), 0u) << args << ": " << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << args << ": " << r.err;
}

// A child llmbench with stderr on a pipe.
struct Child {
  pid_t pid = -1;
  int err_fd = -1;
  std::string err;
  explicit Child(std::vector<std::string> args) {
    args.insert(args.begin(), LLMBENCH_BIN);
    int fds[2];
    EXPECT_EQ(pipe(fds), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    EXPECT_EQ(posix_spawn(&pid, LLMBENCH_BIN, &fa, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    err_fd = fds[0];
  }
  ~Child() {
    if (pid > 0 && waitpid(pid, nullptr, WNOHANG) == 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    close(err_fd);
  }
  // Reads stderr until `text` appears or `limit` passes.
  bool wait_for(const std::string& text, std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      if (err.find(text) != std::string::npos) return true;
      pollfd p{err_fd, POLLIN, 0};
      if (poll(&p, 1, 20) <= 0) continue;
      char buf[4096];
      const ssize_t n = read(err_fd, buf, sizeof buf);
      if (n > 0) err.append(buf, std::size_t(n));
      else if (n == 0) break;
    }
    return err.find(text) != std::string::npos;
  }
  // The exit status within `limit`, or -1.
  int wait_exit(std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    int status = 0;
    while (std::chrono::steady_clock::now() < deadline) {
      if (waitpid(pid, &status, WNOHANG) == pid) {
        pid = -1;
        wait_for("\x01", std::chrono::milliseconds(50));  // drain what is left
        return status;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return -1;
  }
};

}  // namespace

TEST(LoadHostileCli, FlagsThatUsedToRunSomethingElseAreRefused) {
  expect_flag_refused("--request-rate 1e-300", "--request-rate");
  expect_flag_refused("--request-rate 1e-10", "--request-rate");
  expect_flag_refused("--request-rate 2,2", "--request-rate");
  expect_flag_refused("--num-requests 0", "--num-requests");
  expect_flag_refused("--concurrency 2,2", "--concurrency");
  expect_flag_refused("--concurrency ''", "--concurrency");
  expect_flag_refused("--request-timeout -1", "--request-timeout");
}

TEST(LoadHostileCli, ABadTraceTimestampAndANullTokenizerModelNameTheFileAndField) {
  const fs::path dir = scratch_dir();
  const fs::path trace = dir / "trace.jsonl";
  std::ofstream(trace) << R"({"timestamp": 0, "input_length": 8, "output_length": 4})" << "\n"
                       << R"({"timestamp": 1e300, "input_length": 8, "output_length": 4})" << "\n";
  Result r = run_llmbench("load --url http://127.0.0.1:9 --model m --dataset-name mooncake "
                          "--dataset-path " + trace.string() + " --quiet");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(trace.string() + ":2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\"timestamp\""), std::string::npos) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;

  const fs::path tok = dir / "tokenizer.json";
  std::ofstream(tok) << R"({"model": null, "pre_tokenizer": {"type": "ByteLevel"}})";
  ScriptedServer server(Script{.tokens = 2});  // the tokenizer is read after the probe
  r = run_llmbench("load --url " + server.url() + " --model m --dataset-name sharegpt "
                   "--dataset-path " + trace.string() + " --tokenizer " + tok.string() +
                   " --quiet");
  server.stop();
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(tok.string()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\"model\""), std::string::npos) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
}

// An event flood (events as fast as the socket takes them, max_tokens high enough that the
// cap does not end it first): SIGTERM ends load promptly with 128 + 15.
TEST(LoadHostileCli, SigtermDuringAnEventFloodIsHonoured) {
  Script s;
  s.behaviour = Behaviour::kRaw;
  s.raw = [](int i) {
    return i < 50'000'000 ? std::string("data: {\"choices\": [{\"index\": 0, \"text\": \"x\"}]}\n\n")
                          : std::string();
  };
  ScriptedServer server(s);
  const fs::path db = scratch_dir() / "flood.db";
  fs::remove(db);
  Child c({"load", "--url", server.url(), "--model", "scripted", "--concurrency", "2",
           "--num-requests", "4", "--output-len", "1000000", "--input-len", "8", "--db",
           db.string()});
  ASSERT_TRUE(c.wait_for("[1/1]", std::chrono::seconds(20))) << c.err;
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // flooding now
  const auto t0 = std::chrono::steady_clock::now();
  kill(c.pid, SIGTERM);
  const int status = c.wait_exit(std::chrono::seconds(10));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_NE(status, -1) << "load still running 10 s after SIGTERM: " << c.err;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGTERM) << c.err;
  EXPECT_LT(took, 3.0) << c.err;
  server.stop();
}

// The issue's bound: SIGTERM honoured within one second during the flood. The best of three
// attempts must be under 1 s (a loaded machine may delay one attempt's wake-up; a loop that
// does not poll its stop flag misses all three).
TEST(LoadHostileCli, SigtermDuringAnEventFloodEndsLoadWithinOneSecond) {
  Script s;
  s.behaviour = Behaviour::kRaw;
  s.raw = [](int i) {
    return i < 50'000'000 ? std::string("data: {\"choices\": [{\"index\": 0, \"text\": \"x\"}]}\n\n")
                          : std::string();
  };
  ScriptedServer server(s);
  double best = 1e9;
  std::string errs;
  for (int attempt = 0; attempt < 3 && best >= 1.0; ++attempt) {
    const fs::path db = scratch_dir() / ("flood1s-" + std::to_string(attempt) + ".db");
    fs::remove(db);
    Child c({"load", "--url", server.url(), "--model", "scripted", "--concurrency", "2",
             "--num-requests", "4", "--output-len", "1000000", "--input-len", "8", "--db",
             db.string()});
    ASSERT_TRUE(c.wait_for("[1/1]", std::chrono::seconds(20))) << c.err;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const auto t0 = std::chrono::steady_clock::now();
    kill(c.pid, SIGTERM);
    const int status = c.wait_exit(std::chrono::seconds(10));
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_NE(status, -1) << c.err;
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGTERM) << c.err;
    best = std::min(best, took);
    errs += "attempt " + std::to_string(attempt) + ": " + std::to_string(took) + " s\n";
  }
  EXPECT_LT(best, 1.0) << errs;
  server.stop();
}

// Another process holds the database's write lock from the level's start for 20 s, past the
// level's end (~3.6 s) plus the busy timeout (10 s): the level cannot be stored; load says so in one line naming the lock (no raw sqlite
// error), still prints its results, marks the run failed once the lock is free, and exits 1.
TEST(LoadHostileCli, ADatabaseLockHeldByAnotherProcessFailsTheRunInOneLine) {
  Script slow;
  slow.tokens = 4;
  slow.gap = std::chrono::milliseconds(200);
  ScriptedServer server(slow);
  const fs::path dir = scratch_dir();
  const fs::path db = dir / "locked.db";
  fs::remove(db);
  Child c({"load", "--url", server.url(), "--model", "scripted", "--concurrency", "1",
           "--num-requests", "6", "--input-len", "8", "--output-len", "4", "--db", db.string()});
  // The run row is written before the level starts (its progress line comes at its end).
  // (Read quietly: while load creates the schema a read may be refused as busy.)
  auto runs = [&]() -> long long {
    sqlite3* h = nullptr;
    long long v = -1;
    if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
      sqlite3_stmt* st = nullptr;
      if (sqlite3_prepare_v2(h, "SELECT COUNT(*) FROM load_run", -1, &st, nullptr) == SQLITE_OK &&
          sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
      sqlite3_finalize(st);
    }
    sqlite3_close(h);
    return v;
  };
  bool started = false;
  for (int i = 0; i < 1000 && !started; ++i) {  // bounded: 10 s
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    started = fs::exists(db) && runs() == 1;
  }
  ASSERT_TRUE(started) << c.err;
  // The holder: a forked process with its own connection, BEGIN EXCLUSIVE for 20 s.
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t holder = fork();
  ASSERT_GE(holder, 0);
  if (holder == 0) {
    sqlite3* h = nullptr;
    if (sqlite3_open(db.c_str(), &h) != SQLITE_OK) _exit(3);
    sqlite3_busy_timeout(h, 5000);
    if (sqlite3_exec(h, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr) != SQLITE_OK) _exit(4);
    const char ok = 'y';
    if (write(ready[1], &ok, 1) != 1) _exit(5);
    sleep(20);
    sqlite3_exec(h, "COMMIT", nullptr, nullptr, nullptr);
    sqlite3_close(h);
    _exit(0);
  }
  close(ready[1]);
  char got = 0;
  pollfd p{ready[0], POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, 10000), 1);
  ASSERT_EQ(read(ready[0], &got, 1), 1);
  close(ready[0]);
  const int status = c.wait_exit(std::chrono::seconds(60));
  int holder_status = 0;
  waitpid(holder, &holder_status, 0);
  EXPECT_TRUE(WIFEXITED(holder_status) && WEXITSTATUS(holder_status) == 0);
  ASSERT_NE(status, -1) << c.err;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << c.err;
  EXPECT_NE(c.err.find("cannot store [1/1] (another process holds the database lock)"),
            std::string::npos) << c.err;
  EXPECT_EQ(c.err.find("sqlite"), std::string::npos) << c.err;
  EXPECT_EQ(scalar(db, "SELECT COUNT(*) FROM load_run WHERE status = 'failed'"), 1)
      << "runs: " << scalar(db, "SELECT COUNT(*) FROM load_run") << ", complete: "
      << scalar(db, "SELECT COUNT(*) FROM load_run WHERE status = 'complete'") << "\n" << c.err;
  EXPECT_EQ(scalar(db, "SELECT COUNT(*) FROM load_run WHERE status = 'running'"), 0);
  server.stop();
}

// kill -9 of load: the --server-cmd process group (here a shell waiting on `sleep`) goes too.
TEST(LoadHostileCli, TheServerDiesWithLoad) {
  Child c({"load", "--server-cmd", "sleep 600 # {port}", "--server-timeout", "60", "--model",
           "m", "--quiet"});
  // The shell's group: load's child (its pid is the group id).
  pid_t group = -1;
  for (int i = 0; i < 500 && group < 0; ++i) {
    std::ifstream kids("/proc/" + std::to_string(c.pid) + "/task/" + std::to_string(c.pid) +
                       "/children");
    pid_t kid = -1;
    while (kids >> kid)
      if (getpgid(kid) == kid) group = kid;
    if (group < 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GT(group, 0) << "no server group found";
  EXPECT_GE(live_members(group), 1);
  kill(c.pid, SIGKILL);
  c.wait_exit(std::chrono::seconds(5));
  bool gone = false;
  for (int i = 0; i < 500 && !gone; ++i) {  // bounded: 5 s (the watcher's grace is 2 s)
    gone = live_members(group) == 0;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(gone) << "the server's process group outlived load";
  if (!gone) kill(-group, SIGKILL);
}

// A database that stops taking writes mid-run (a file size limit, as a full disk): one line,
// the results still printed, exit 1, the run marked failed.
TEST(LoadHostileCli, AStoringFailureIsOneLineAndMarksTheRunFailed) {
  ScriptedServer server(Script{.tokens = 4});
  const fs::path dir = scratch_dir();
  const fs::path db = dir / "full.db";
  fs::remove(db);
  // The schema and the run row first, checkpointed, then a limit the levels' rows pass.
  Result first = run_llmbench("load --url " + server.url() + " --model scripted --num-requests 2 "
                              "--input-len 8 --output-len 4 --quiet --db " + db.string(), dir);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  const auto old_handler = signal(SIGXFSZ, SIG_IGN);
  rlimit small = old;
  small.rlim_cur = rlim_t(64 * 1024);  // the -wal file stops at 64 KiB; the main file is read
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  Child c({"load", "--url", server.url(), "--model", "scripted", "--num-requests", "1000",
           "--concurrency", "8", "--input-len", "8", "--output-len", "4", "--db", db.string()});
  setrlimit(RLIMIT_FSIZE, &old);
  signal(SIGXFSZ, old_handler);
  const int status = c.wait_exit(std::chrono::seconds(60));
  ASSERT_NE(status, -1) << c.err;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << c.err;
  EXPECT_NE(c.err.find("load: --db '" + db.string() + "': cannot store"), std::string::npos)
      << c.err;
  EXPECT_EQ(c.err.find("sqlite"), std::string::npos) << c.err;
  EXPECT_EQ(scalar(db, "SELECT COUNT(*) FROM load_run WHERE status = 'running'"), 0);
  EXPECT_EQ(scalar(db, "SELECT COUNT(*) FROM load_run WHERE status = 'failed'"), 1);
  server.stop();
}

// The saturation guard end to end: a one-thread server taking 40 ms a request (25 req/s) offered
// 50 req/s: the level is over capacity, stopped there with --stop-on-saturation, says so on
// stderr and in json, and stores the verdict; the same server at 5 req/s is judged "ok".
TEST(LoadHostileCli, AnOverCapacityRateLevelIsStoppedPrintedAndStored) {
  Script s;
  s.tokens = 4;
  s.first_delay = std::chrono::milliseconds(10);
  s.gap = std::chrono::milliseconds(10);
  ScriptedServer server(s, /*threads=*/1);
  server.close_after_each_request();
  const fs::path dir = scratch_dir();
  const fs::path db = dir / "saturated.db";
  fs::remove(db);
  const Result r = run_llmbench("load --url " + server.url() + " --model scripted --request-rate 50,5 "
                                "--num-requests 200 --duration 8 --input-len 8 --output-len 4 "
                                "--saturation-window 1 --stop-on-saturation --format json --db " +
                                db.string(), dir);
  server.stop();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: [1/2] is over capacity from"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the level stopped there"), std::string::npos) << r.err;
  const auto out = nlohmann::json::parse(r.out);
  EXPECT_EQ(out["levels"][0]["capacity"], "over") << out["levels"][0].dump();
  EXPECT_GT(out["levels"][0]["saturation_s"].get<double>(), 0.5);
  EXPECT_EQ(out["levels"][1]["capacity"], "ok") << out["levels"][1].dump();
  EXPECT_EQ(scalar(db, "SELECT COUNT(*) FROM load_level WHERE over_capacity = 1 AND stopped_early = 1 "
                       "AND saturation_ns > 0 AND request_rate = 50"), 1);
  EXPECT_EQ(scalar(db, "SELECT COUNT(*) FROM load_level WHERE over_capacity = 0 AND stopped_early = 0 "
                       "AND request_rate = 5"), 1);
  // Stopped early: fewer requests than the 200 (or 8 s) the level would otherwise have run.
  EXPECT_LT(scalar(db, "SELECT requests FROM load_level WHERE request_rate = 50"), 200);
}
