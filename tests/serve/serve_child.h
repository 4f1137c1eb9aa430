// A `llmbench` child process for tests of `serve`: started with posix_spawn, its stderr read
// with a bounded wait for a line, its exit code read with a bounded wait; killed (SIGKILL) when
// the test ends if it is still running. LLMBENCH_BIN is the binary's path.
#pragma once
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <regex>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace llmbench_test {

struct Child {
  pid_t pid = -1;
  int err_fd = -1;
  std::string err;  // stderr so far

  explicit Child(std::vector<std::string> args) {
    int fds[2];
    EXPECT_EQ(pipe(fds), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    std::vector<char*> argv;
    args.insert(args.begin(), LLMBENCH_BIN);
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
    if (err_fd >= 0) close(err_fd);
  }
  // Reads stderr until `re` matches (bounded); returns the first group or "".
  std::string wait_for(const std::regex& re, std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    std::smatch m;
    while (std::chrono::steady_clock::now() < deadline) {
      if (std::regex_search(err, m, re)) return m.size() > 1 ? m[1].str() : m[0].str();
      pollfd p{err_fd, POLLIN, 0};
      if (poll(&p, 1, 50) > 0) {
        char buf[4096];
        const ssize_t n = read(err_fd, buf, sizeof buf);
        if (n <= 0) break;
        err.append(buf, std::size_t(n));
      }
    }
    return std::regex_search(err, m, re) ? (m.size() > 1 ? m[1].str() : m[0].str()) : "";
  }
  // Exit status after waiting at most `limit`; -1 if still running (then it is killed).
  int exit_code(std::chrono::seconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    int status = 0;
    while (std::chrono::steady_clock::now() < deadline) {
      if (waitpid(pid, &status, WNOHANG) == pid) {
        pid = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return -1;
  }
};

}  // namespace llmbench_test
