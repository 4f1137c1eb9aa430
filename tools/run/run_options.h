// The flags of `llmbench run` (shared with `llmbench sweep`) and how a profile supplies them:
// each profile key is a flag's long name; a key whose flag is also on the command line is
// overridden by it. Errors in values that came from the profile name the profile's file, line
// and key.
#pragma once
#include <set>
#include <string>

#include "tools/run/profile.h"
#include "tools/run/run_plan.h"

namespace CLI {
class App;
}

namespace llmbench {

// Registers every `llmbench run` flag on `cmd`, bound to `opts`.
void add_run_flags(CLI::App* cmd, RunOptions& opts);

struct AppliedProfile {
  Profile profile;
  std::set<std::string> applied;  // keys that set a flag (not overridden on the command line)
};

// Loads opts.config (a file or bundled profile name) and applies its entries to the flags of
// `cmd` that were not given on the command line. Throws BadInput "FILE:LINE: key 'K': ..." for
// unknown keys and values of the wrong type; nothing has run yet when it throws.
AppliedProfile apply_profile(CLI::App* cmd, RunOptions& opts);

// make_plan(), with errors about values that came from a profile rewritten to name the
// profile's file, line and key instead of the flag.
RunPlan make_plan_attributed(const RunOptions& opts, const AppliedProfile* profile);

}  // namespace llmbench
