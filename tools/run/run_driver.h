// Runs a plan of cases (what `llmbench run` and `llmbench sweep` execute): builds each model
// once, runs every case, commits each finished case before the next starts (one transaction),
// shows progress, resumes a run of the same plan (--resume), stops cleanly on SIGINT/SIGTERM
// (exit 130/143, the current case abandoned, every finished case stored), records a failing
// case with status 'error' and goes on (exit 1), and prints the results and the SLO report.
#pragma once
#include <string>

#include "tools/run/run_options.h"

namespace llmbench {

// Returns the process exit code. Throws BadInput (nothing run, nothing written) for bad flags
// or profile values.
int run_benchmarks(const RunOptions& opts, const AppliedProfile* profile,
                   const std::string& command_line);

}  // namespace llmbench
