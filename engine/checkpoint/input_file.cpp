// Refusing inputs that are not regular files (see input_file.h).
#include "engine/checkpoint/input_file.h"

#include <sys/stat.h>

#include "kernels/common/error.h"

namespace llmbench {

std::optional<std::string> special_file_kind(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;  // missing: the caller's message
  if (S_ISREG(st.st_mode)) return std::nullopt;
  if (S_ISFIFO(st.st_mode)) return "a FIFO (named pipe)";
  if (S_ISDIR(st.st_mode)) return "a directory";
  if (S_ISSOCK(st.st_mode)) return "a socket";
  if (S_ISCHR(st.st_mode)) return "a character device";
  if (S_ISBLK(st.st_mode)) return "a block device";
  return "not a regular file";
}

void refuse_special_file(const std::string& path, const std::string& what) {
  if (auto kind = special_file_kind(path))
    throw BadInput(what + " '" + path + "' is " + *kind + ", not a regular file");
}

}  // namespace llmbench
