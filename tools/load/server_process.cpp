// The server child process (see server_process.h).
#include "tools/load/server_process.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "kernels/common/error.h"
#include "tools/load/load_client.h"

extern char** environ;

namespace llmbench {

int pick_free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw Error(std::string("socket: ") + std::strerror(errno));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    const std::string why = std::strerror(errno);
    close(fd);
    throw Error("cannot pick a free port: " + why);
  }
  close(fd);
  return ntohs(a.sin_port);
}

std::string substitute_port(const std::string& cmd, int port) {
  std::string out;
  const std::string key = "{port}";
  std::size_t from = 0;
  for (std::size_t at; (at = cmd.find(key, from)) != std::string::npos; from = at + key.size())
    out += cmd.substr(from, at - from) + std::to_string(port);
  return out + cmd.substr(from);
}

namespace {

std::string describe(int status) {
  // 127: the shell found no such command (a bare `llmbench` is not on PATH after set-up).
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
    return "exited with code 127 (the shell found no such command: give the server program's "
           "path, e.g. --server-cmd \"build/tools/llmbench serve --model small --port {port}\", "
           "or add its directory to PATH)";
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "stopped";
}

}  // namespace

namespace {

// `llmbench ...` where no llmbench is on PATH: this very binary (/proc/self/exe), so the README's
// and docs' commands run from a fresh build. Any other command runs as given.
std::string resolve_own_name(const std::string& cmd) {
  const std::size_t start = cmd.find_first_not_of(" \t");
  if (start == std::string::npos || cmd.compare(start, 9, "llmbench ") != 0) return cmd;
  if (std::system("command -v llmbench > /dev/null 2>&1") == 0) return cmd;
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return cmd;
  const std::string path(self, std::size_t(n));
  if (path.find('\'') != std::string::npos) return cmd;
  return cmd.substr(0, start) + "'" + path + "'" + cmd.substr(start + 8);
}

}  // namespace

// The server dies with this process, however this process ends (kill -9 included), so a port
// is never left held by an orphan: the shell runs in its own process group with
// PR_SET_PDEATHSIG, and a small watcher (a child of this process, in the shell's group) blocks
// on a pipe whose only write end this process holds. When this process is gone the read
// returns, and the watcher signals the whole group (SIGTERM, then SIGKILL after 2 s): the
// shell, the server it started and whatever that started. Only async-signal-safe calls run
// between fork and exec.
ServerProcess::ServerProcess(const std::string& given) {
  const std::string cmd = resolve_own_name(given);
  std::string sh = "/bin/sh", c = "-c", command = cmd;
  char* argv[] = {sh.data(), c.data(), command.data(), nullptr};
  int life[2];
  if (pipe2(life, O_CLOEXEC) != 0)
    throw Error("--server-cmd: pipe2 failed: " + std::string(std::strerror(errno)));
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    close(life[0]);
    close(life[1]);
    throw Error("--server-cmd: cannot start /bin/sh: " + std::string(std::strerror(err)));
  }
  if (pid == 0) {
    setpgid(0, 0);  // its own group: stop() and the watcher signal the whole group
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // the parent died before the line above
    close(life[0]);
    close(life[1]);
    execve("/bin/sh", argv, environ);
    _exit(127);
  }
  // Both sides set the group, so the watcher can join it and stop() signal it at once.
  setpgid(pid, pid);
  pid_ = pid;
  const pid_t watcher = fork();
  if (watcher == 0) {
    // This process's own handlers (Ctrl-C sets a flag) must not keep the watcher alive.
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGTERM, &dfl, nullptr);
    sigaction(SIGINT, &dfl, nullptr);
    setpgid(0, pid);
    close(life[1]);
    char b;
    while (read(life[0], &b, 1) < 0 && errno == EINTR) {
    }
    // This process is gone (or stop() closed the pipe): end the group, the watcher last.
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigprocmask(SIG_BLOCK, &term, nullptr);
    kill(-pid, SIGTERM);
    const timespec grace{2, 0};
    nanosleep(&grace, nullptr);
    kill(-pid, SIGKILL);
    _exit(0);
  }
  close(life[0]);
  if (watcher < 0) {
    close(life[1]);  // no watcher: PR_SET_PDEATHSIG still ends the shell
  } else {
    setpgid(watcher, pid);
    life_fd_ = life[1];
    watcher_ = watcher;
  }
}

void ServerProcess::reap_watcher() {
  if (watcher_ > 0 && waitpid(watcher_, nullptr, WNOHANG) == watcher_) watcher_ = -1;
}

ServerProcess::~ServerProcess() {
  if (pid_ > 0 && (!status_ || kill(-pid_, 0) == 0)) stop(5);
  if (life_fd_ >= 0) close(life_fd_);
  if (watcher_ > 0) {
    kill(watcher_, SIGKILL);
    waitpid(watcher_, nullptr, 0);
  }
}

std::optional<std::string> ServerProcess::exited() {
  if (status_ || pid_ <= 0) return status_;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) status_ = describe(status);
  return status_;
}

void ServerProcess::wait_healthy(const std::string& health_url, double timeout_s,
                                 const std::function<bool()>& stop) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  std::string last = "no answer yet";
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto s = exited())
      throw Error("--server-cmd: the server " + *s + " before " + health_url + " answered");
    if (stop && stop()) throw Error("--server-cmd: interrupted while waiting for " + health_url);
    const HttpResponse r = http_get(health_url, 2.0);
    if (r.status == 200) return;
    last = r.status ? "HTTP " + std::to_string(r.status) : r.error;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  throw Error("--server-cmd: " + health_url + " did not answer 200 within " +
              std::to_string(int(timeout_s)) + " s (--server-timeout; last: " + last + ")");
}

std::string ServerProcess::stop(double grace_s) {
  // The shell may have exited while the server it started (same process group) still runs:
  // the group is gone only when kill(-pgid, 0) finds no process.
  // The watcher is in the group too: it goes with the rest, and is reaped here.
  const auto group_alive = [this] {
    reap_watcher();
    return kill(-pid_, 0) == 0;
  };
  if (exited() && !group_alive()) return *status_;
  kill(-pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_s);
  while (std::chrono::steady_clock::now() < deadline) {
    exited();
    if (status_ && !group_alive()) return *status_;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(-pid_, SIGKILL);
  if (!status_) {
    int status = 0;
    waitpid(pid_, &status, 0);
    status_ = describe(status);
  }
  *status_ += " (SIGKILL to the group after " + std::to_string(int(grace_s)) + " s)";
  return *status_;
}

}  // namespace llmbench
