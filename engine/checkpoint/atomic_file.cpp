// See atomic_file.h.
#include "engine/checkpoint/atomic_file.h"

#include <cerrno>
#include <cstring>

#include "kernels/common/error.h"

namespace llmbench {

AtomicFile::AtomicFile(std::string path, std::string who)
    : path_(std::move(path)), tmp_(path_ + ".tmp"), who_(std::move(who)) {
  file_ = std::fopen(tmp_.c_str(), "wb");
  if (!file_) fail("cannot create");
}

AtomicFile::~AtomicFile() {
  if (file_) std::fclose(file_);
  if (!committed_) std::remove(tmp_.c_str());
}

void AtomicFile::write(const void* data, std::size_t bytes) {
  if (bytes && std::fwrite(data, 1, bytes, file_) != bytes) fail("cannot write");
}

void AtomicFile::commit() {
  const bool flushed = std::fflush(file_) == 0;
  const int rc = std::fclose(file_);
  file_ = nullptr;
  if (!flushed || rc != 0) fail("cannot write");
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) fail("cannot rename into place");
  committed_ = true;
}

void AtomicFile::fail(const char* what) const {
  throw BadInput(who_ + ": " + what + " '" + path_ + "' (" + std::strerror(errno) + ")");
}

void write_file_atomically(const std::string& path, std::string_view data,
                           const std::string& who) {
  AtomicFile f(path, who);
  f.write(data);
  f.commit();
}

}  // namespace llmbench
