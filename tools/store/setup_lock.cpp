// SetupLock (see setup_lock.h).
#include "tools/store/setup_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <thread>

#include "kernels/common/error.h"

namespace llmbench {

SetupLock::SetupLock(const std::string& db_path, double timeout_s) {
  std::filesystem::path dir = std::filesystem::path(db_path).parent_path();
  if (dir.empty()) dir = ".";
  fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  // A directory we cannot open (no read permission, or it does not exist: SQLite then reports
  // the database as unopenable) is not locked; the schema transaction still protects the data.
  if (fd_ < 0) return;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(timeout_s));
  while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) {  // a file system without flock: go on without
      release();
      return;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      release();
      throw Error("database '" + db_path + "': another llmbench process has been opening it " +
                  "for more than " + std::to_string(int(timeout_s)) + " s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

SetupLock::~SetupLock() { release(); }

void SetupLock::release() {
  if (fd_ < 0) return;
  ::close(fd_);  // closing the only descriptor of the open file description drops the flock
  fd_ = -1;
}

}  // namespace llmbench
