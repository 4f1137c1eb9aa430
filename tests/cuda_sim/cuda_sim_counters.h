// What the simulated device has run, for tests that count a step's kernels (a structural
// property: the same count on a GPU, where nothing here is timed). Host code; no CUDA names.
#pragma once

#include <cstdint>

namespace cuda_sim {

// Grids run since the process started: every kernel launch that ran, eagerly or as a node of a
// replayed graph (a launch recorded by a stream capture counts when it runs, not when captured).
std::uint64_t grids_run();

}  // namespace cuda_sim
