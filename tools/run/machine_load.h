// How busy the machine is right now: the 1-minute load average and the other llmbench processes
// running beside this one. The roofline cache records it with every measurement, because a peak
// measured while a build or a test suite loads the machine is about half the real one
// (docs/metrics.md, "Peaks"), and such an entry must not become the denominator of later runs
// silently.
// Deliberately not: a wait for a quiet machine, or per-core accounting.
#pragma once
#include <string>

namespace llmbench {

struct MachineLoad {
  double load_avg_1m = 0;   // /proc/loadavg's first field (0 where unreadable)
  int cpus = 1;             // online CPUs
  int other_llmbench = 0;   // processes named llmbench other than this one

  // Busy: another llmbench runs, or the load average exceeds half the CPUs. A quiet 2-vCPU
  // machine reads 0.0-0.3; one build job alone lifts it past 1 within a minute.
  bool busy() const { return other_llmbench > 0 || load_avg_1m > 0.5 * cpus; }
  // "load 1.93 on 2 CPUs, 1 other llmbench process"
  std::string describe() const;
};

MachineLoad current_machine_load();

}  // namespace llmbench
