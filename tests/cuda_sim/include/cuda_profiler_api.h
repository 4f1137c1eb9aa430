// cuda_sim stands in for the CUDA header of this name (tests/cuda_sim/cuda_sim.h): profiler
// start/stop do nothing on the simulated device.
#pragma once
#include "tests/cuda_sim/cuda_sim.h"
inline cudaError_t cudaProfilerStart() { return cudaSuccess; }
inline cudaError_t cudaProfilerStop() { return cudaSuccess; }
