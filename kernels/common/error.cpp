// Formatting of check failures (see error.h).
#include "kernels/common/error.h"

namespace llmbench {

void throw_check_failure(const char* file, int line, const char* statement,
                         const std::string& detail) {
  std::string msg = std::string(file) + ":" + std::to_string(line) + ": check `" + statement +
                    "` failed";
  if (!detail.empty()) msg += ": " + detail;
  throw Error(msg);
}

}  // namespace llmbench
