// Environment notes for `llmbench compare` (see compare_env.h).
#include "tools/compare/compare_env.h"

namespace llmbench {

std::string EnvNote::text() const {
  return field + " differs: base '" + base + "', candidate '" + cand + "'";
}

std::vector<EnvNote> environment_notes(const RunInfo& b, const RunInfo& c) {
  std::vector<EnvNote> notes;
  auto add = [&](bool warning, const char* field, const std::string& x, const std::string& y) {
    if (x != y) notes.push_back({warning, field, x, y});
  };
  add(true, "build_type", b.build_type, c.build_type);
  add(true, "cpu", b.cpu, c.cpu);
  add(true, "gpu", b.gpu, c.gpu);
  add(true, "driver", b.driver, c.driver);
  add(true, "threads", std::to_string(b.threads), std::to_string(c.threads));
  add(false, "llmbench_version", b.version, c.version);
  add(false, "git_commit", b.git_commit, c.git_commit);
  add(false, "host", b.host, c.host);
  return notes;
}

}  // namespace llmbench
