// OpenMP's wait policy for llmbench processes. With libgomp's default (spin-then-sleep),
// threads that finish a parallel region keep spinning and, on machines with few cores, steal
// the cores from the next op: measured here, decode of the `small` preset at batch 1 took
// 180 ms per token by default and 33 ms with OMP_WAIT_POLICY=passive. libgomp reads the
// variable once, when it loads, before main() runs, so the only way to set it from inside the
// program is to re-execute itself with it set.
#pragma once

namespace llmbench {

// If OMP_WAIT_POLICY is unset, sets it to "passive" and re-executes /proc/self/exe with the
// same arguments (never returns then). A user's own OMP_WAIT_POLICY is left alone. If the
// re-exec fails, returns and the process goes on with the default policy.
void use_passive_openmp(char** argv);

}  // namespace llmbench
