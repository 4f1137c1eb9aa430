#!/usr/bin/env bash
# Every test of the CUDA kernels on cuda_sim (tests/cuda_sim/cuda_sim.h: the kernels of
# kernels/cuda compiled as C++ and run on the CPU, under AddressSanitizer and UBSan), including
# the slow ones ctest leaves out (tests/cuda_sim/cuda_sim.cmake). No GPU or nvcc needed.
#
#   scripts/cuda_sim.sh [BUILD_DIR] [GTEST_FILTER]     (defaults: build, every test)
#
# Builds test_cuda_sim_asan in BUILD_DIR (configured already, as scripts/setup.sh does), runs
# it, and exits with its status: 0 when every test passed.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
filter=${2:-*}
if [ ! -f "$build/build.ninja" ] && [ ! -f "$build/Makefile" ]; then
  echo "cuda_sim.sh: $build is not a configured build tree (run scripts/setup.sh first)" >&2
  exit 2
fi
cmake --build "$build" --target test_cuda_sim_asan
exec "$build/tests/test_cuda_sim_asan" --gtest_filter="$filter"
