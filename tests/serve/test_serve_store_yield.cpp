// The serving tables' writer thread yields to the engine (tools/serve/serve_store.cpp): it
// commits at SCHED_IDLE, steps up to nice 19 when its queue passes half the backlog bound, and
// goes back once the queue is short. Read from /proc, the kernel's own record of the thread.
#include <gtest/gtest.h>

#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tools/serve/serve_store.h"

namespace llmbench {
namespace {

struct ThreadSched {
  long tid = 0;
  int nice = 0;
  int policy = 0;
};

// /proc/self/task/TID/stat: fields after the command's closing parenthesis, numbered from 3;
// nice is field 19, policy field 41 (proc(5)).
std::optional<ThreadSched> read_sched(long tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  const auto close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(line.substr(close + 2));
  std::vector<std::string> f;
  for (std::string w; rest >> w;) f.push_back(w);
  if (f.size() < 39) return std::nullopt;
  ThreadSched s;
  s.tid = tid;
  s.nice = std::stoi(f[19 - 3]);
  s.policy = std::stoi(f[41 - 3]);
  return s;
}

std::vector<ThreadSched> threads() {
  std::vector<ThreadSched> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task"))
    if (auto s = read_sched(std::stol(e.path().filename().string()))) out.push_back(*s);
  return out;
}

template <typename Pred>
bool wait_for(Pred pred) {
  for (int i = 0; i < 300; ++i) {  // at most 3 s
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return pred();
}

TEST(ServeStoreWriter, CommitsInTheGapsAndStepsUpOnlyWhenBehind) {
  std::filesystem::create_directories(LLMBENCH_TEST_SCRATCH);
  const std::string path = std::string(LLMBENCH_TEST_SCRATCH) + "/serve_yield.db";
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  for (const ThreadSched& t : threads()) ASSERT_NE(t.policy, SCHED_IDLE) << "before the writer";

  ServeStore store(path, std::chrono::milliseconds(200), /*max_backlog_rows=*/100);
  store.begin_session(ServeSessionInfo{});
  long writer = 0;
  ASSERT_TRUE(wait_for([&] {
    for (const ThreadSched& t : threads())
      if (t.policy == SCHED_IDLE) writer = t.tid;
    return writer != 0;
  })) << "no thread of this process went to SCHED_IDLE";

  // 60 rows queued within one interval (microseconds of its 200 ms): more than half the
  // bound of 100.
  ServedRequest r;
  for (int i = 0; i < 60; ++i) {
    r.id = RequestId(i + 1);
    store.on_request(r);
  }
  ASSERT_TRUE(wait_for([&] { return store.totals().requests == 60; }));
  const auto behind = read_sched(writer);
  ASSERT_TRUE(behind);
  // Leaving SCHED_IDLE takes CAP_SYS_NICE (root here) or an RLIMIT_NICE above 0; where the
  // kernel refuses, the writer stays in the gaps.
  const bool may_leave_idle = geteuid() == 0;
  if (may_leave_idle) {
    EXPECT_EQ(behind->policy, SCHED_OTHER);
    EXPECT_EQ(behind->nice, 19);
  } else {
    EXPECT_EQ(behind->policy, SCHED_IDLE);
  }

  // One row: the queue is short again, so back to the gaps.
  r.id = RequestId(100);
  store.on_request(r);
  ASSERT_TRUE(wait_for([&] { return store.totals().requests == 61; }));
  const auto caught_up = read_sched(writer);
  ASSERT_TRUE(caught_up);
  EXPECT_EQ(caught_up->policy, SCHED_IDLE);
  store.close();
  EXPECT_EQ(store.totals().dropped, 0);
}

}  // namespace
}  // namespace llmbench
