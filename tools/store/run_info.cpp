// Run environment facts (see run_info.h).
#include "tools/store/run_info.h"

#include <unistd.h>

#include <ctime>

#include "engine/cpu_backend.h"
#include "tools/build_info/version.h"

namespace llmbench {

std::string utc_now_iso8601() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

RunInfo current_run_info() {
  RunInfo r;
  r.started_at = utc_now_iso8601();
  r.version = kVersion;
  r.git_commit = kGitCommit;
  r.build_type = kBuildType;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) r.host = host;
  r.cpu = cpu_model_name();
  return r;
}

}  // namespace llmbench
