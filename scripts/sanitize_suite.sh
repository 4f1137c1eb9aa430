#!/usr/bin/env bash
# The whole test suite under AddressSanitizer + UBSan (docs/fuzzing.md, "The whole suite under
# the sanitizers"): a second build tree whose every C and C++ object is compiled with
# -fsanitize=address,undefined at -O1 -g1, the CUDA backend left out (nvcc's device code is not
# sanitized, and there is no device to run it on), then ctest over all of it.
#
#   scripts/sanitize_suite.sh [BUILD_DIR] [CTEST_ARGS...]     (default BUILD_DIR: build-asan)
#
# Not part of CI (on 2 cores the build takes about 22 minutes and the tests about 32): run it
# after changes to memory handling, parsers or the server. Exit status: ctest's. What is expected
# to fail under the sanitizers' slowdown, and why, is in docs/fuzzing.md.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-asan}
[ $# -gt 0 ] && shift
flags="-O1 -g1 -fsanitize=address,undefined -fno-omit-frame-pointer"
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLLMBENCH_CUDA=OFF \
  "-DCMAKE_C_FLAGS_RELEASE=$flags" "-DCMAKE_CXX_FLAGS_RELEASE=$flags" \
  "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined" \
  "-DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=address,undefined" >/dev/null
cmake --build "$dir" -j "$(nproc)"
# halt_on_error: the first report fails its test, with the stack that shows where.
ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1} \
  ctest --test-dir "$dir" -j "$(nproc)" --output-on-failure "$@"
