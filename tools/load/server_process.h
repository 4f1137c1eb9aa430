// `llmbench load --server-cmd "..."`: the server under test as a child process. The command
// runs under /bin/sh in its own process group (so a shell's children stop with it), and the
// group dies with this process however it ends (kill -9 included: see the constructor); a {port}
// in it is replaced by a free loopback port picked first. Start-up waits for GET /health to
// answer 200, bounded by a timeout and by the child exiting; stop() sends SIGTERM to the group,
// then SIGKILL after a bound. The child's stderr and stdout pass through (its own progress).
#pragma once
#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>

namespace llmbench {

// A free TCP port on 127.0.0.1 (bound to port 0, read back, closed). Another process may take
// it before the server binds it; the health wait then fails clearly.
int pick_free_port();

// "llmbench serve --port {port}" with 8123 -> "llmbench serve --port 8123" (every {port}).
std::string substitute_port(const std::string& cmd, int port);

class ServerProcess {
 public:
  // Starts `cmd` (already substituted). Throws Error when it cannot be started.
  explicit ServerProcess(const std::string& cmd);
  ~ServerProcess();  // stop() if still running
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // Polls `health_url` until it answers 200. Throws Error (with the exit status when the
  // child died) after `timeout_s`, or as soon as the child exits.
  // `stop` (Ctrl-C) ends the wait early with an Error.
  void wait_healthy(const std::string& health_url, double timeout_s,
                    const std::function<bool()>& stop = nullptr);
  // The exit status if the child has exited ("exited with code 3", "killed by signal 9").
  std::optional<std::string> exited();
  // SIGTERM to the group, SIGKILL after `grace_s`; returns how it ended.
  std::string stop(double grace_s = 10);

  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int life_fd_ = -1;  // the write end of the pipe the group's watcher reads (see the constructor)
  pid_t watcher_ = -1;
  void reap_watcher();
  std::optional<std::string> status_;  // once reaped
};

}  // namespace llmbench
