// cuda_sim stands in for the CUDA header of this name (tests/cuda_sim/cuda_sim.h).
#pragma once
#include "tests/cuda_sim/cuda_sim.h"
