#!/usr/bin/env bash
# Every test of the CUDA kernels on cuda_sim (tests/cuda_sim/cuda_sim.h: the kernels of
# kernels/cuda compiled as C++ and run on the CPU, under AddressSanitizer and UBSan), including
# the slow ones ctest leaves out (tests/cuda_sim/cuda_sim.cmake). No GPU or nvcc needed.
#
#   scripts/cuda_sim.sh [BUILD_DIR] [GTEST_FILTER]     (defaults: build, every test)
#
# Builds test_cuda_sim_asan (the kernels) and test_cuda_sim_model_asan (CudaBackend: the fp16 KV
# cache and the forward pass against the CPU backend) in BUILD_DIR (configured already, as
# scripts/setup.sh does), runs both at once, and exits 0 when every test of both passed, 1
# otherwise. All of them take tens of minutes, one core each (the slowest alone,
# CudaForward.GraphReplayedDecodeGivesTheEagerTokens, 10.6 minutes on the 2-vCPU VM, 2026-12-07).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
filter=${2:-*}
if [ ! -f "$build/build.ninja" ] && [ ! -f "$build/Makefile" ]; then
  echo "cuda_sim.sh: $build is not a configured build tree (run scripts/setup.sh first)" >&2
  exit 2
fi
cmake --build "$build" --target test_cuda_sim_asan test_cuda_sim_model_asan
# The two binaries side by side (each runs on one core), every line prefixed with its binary.
run() {  # BINARY PREFIX: the binary's status (pipefail), its lines prefixed
  "$build/tests/$1" --gtest_filter="$filter" 2>&1 | sed -u "s/^/[$2] /"
}
run test_cuda_sim_asan kernels &
kernels=$!
run test_cuda_sim_model_asan backend &
backend=$!
rc=0
wait "$kernels" || rc=1
wait "$backend" || rc=1
exit $rc
