#!/usr/bin/env bash
# The test suite under the sanitizers (docs/fuzzing.md, "The whole suite under the sanitizers"):
# a second build tree whose every C and C++ object is compiled at -O1 -g1 with the sanitizers,
# the CUDA backend left out (nvcc's device code is not sanitized, and there is no device to run
# it on), then ctest over it.
#
#   scripts/sanitize_suite.sh [--thread] [BUILD_DIR] [CTEST_ARGS...]
#
# Default: AddressSanitizer + UBSan (+ LeakSanitizer), BUILD_DIR build-asan.
# --thread: ThreadSanitizer, BUILD_DIR build-tsan. GCC's libgomp is not instrumented, so TSan
#   cannot see its barriers and would report every OpenMP region; the tests run with OpenMP held
#   to one thread (OMP_THREAD_LIMIT=1: no region has a second thread) and tests/tsan.supp drops
#   whatever still passes through libgomp. What TSan checks then is the threads llmbench starts
#   itself: the server's acceptor, workers and engine loop, the load generator's clients.
#
# Not part of CI (on 2 cores an ASan build takes about 22 minutes and its tests about 32): run
# it after changes to memory handling, parsers, the server or the load generator. Exit status:
# ctest's. What is expected to fail under the sanitizers' slowdown, and why, is in
# docs/fuzzing.md.
set -euo pipefail
cd "$(dirname "$0")/.."
sanitizers=address,undefined
default_dir=build-asan
if [ "${1:-}" = --thread ]; then
  sanitizers=thread
  default_dir=build-tsan
  shift
fi
dir=${1:-$default_dir}
[ $# -gt 0 ] && shift
flags="-O1 -g1 -fsanitize=$sanitizers -fno-omit-frame-pointer"
# The fuzz tests' own AddressSanitizer copies cannot link into a ThreadSanitizer tree.
copies=ON
[ "$sanitizers" = thread ] && copies=OFF
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLLMBENCH_CUDA=OFF \
  -DLLMBENCH_SANITIZED_COPIES=$copies \
  "-DCMAKE_C_FLAGS_RELEASE=$flags" "-DCMAKE_CXX_FLAGS_RELEASE=$flags" \
  "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=$sanitizers" \
  "-DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=$sanitizers" >/dev/null
cmake --build "$dir" -j "$(nproc)"
if [ "$sanitizers" = thread ]; then
  # Reports go to files, one per process, so that those of the llmbench processes the tests
  # spawn (serve, load), whose stderr the tests may not show, are seen too.
  case $dir in
    /*) reports="$dir/tsan-reports" ;;
    *) reports="$PWD/$dir/tsan-reports" ;;
  esac
  rm -rf "$reports" && mkdir -p "$reports"
  status=0
  OMP_THREAD_LIMIT=1 OMP_NUM_THREADS=1 \
  TSAN_OPTIONS=${TSAN_OPTIONS:-suppressions=$PWD/tests/tsan.supp:log_path=$reports/report} \
    ctest --test-dir "$dir" -j "$(nproc)" --output-on-failure "$@" || status=$?
  if compgen -G "$reports/report.*" >/dev/null; then
    cat "$reports"/report.*
    echo "ThreadSanitizer: reports above (files in $reports)" >&2
    exit 1
  fi
  exit "$status"
else
  # halt_on_error: the first report fails its test, with the stack that shows where.
  ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1} \
  UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1} \
    ctest --test-dir "$dir" -j "$(nproc)" --output-on-failure "$@"
fi
