#!/usr/bin/env bash
# One-time set-up on Debian 12, safe to repeat: installs the Debian packages llmbench needs
# (only those missing; a no-op when everything is there), configures into ./build (Release) and
# builds `llmbench` first, so the main job can run as soon as the tool is built. With --tests it
# then builds everything else: the test binaries, their sanitized copies and the benchmarks
# (what `ctest` runs). Used by both commands of the README and by .ci/run.
#
#   bash scripts/setup.sh            packages + build/tools/llmbench (about 12 minutes on 2 cores)
#   bash scripts/setup.sh --tests    the same, then every test and benchmark target
#
# Progress goes to the terminal (one line per 5% or 20 s); the compiler's full output goes to
# build.log.
set -euo pipefail
cd "$(dirname "$0")/.."

with_tests=0
for arg in "$@"; do
  case "$arg" in
    --tests) with_tests=1 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "setup: unknown argument '$arg' (expected --tests)" >&2; exit 2 ;;
  esac
done

packages=(
  build-essential cmake ninja-build pkg-config git
  libcli11-dev libfmt-dev libsqlite3-dev sqlite3 libopenblas-openmp-dev nlohmann-json3-dev
  libtomlplusplus-dev
  libcpp-httplib-dev libcurl4-openssl-dev libsentencepiece-dev
  zlib1g-dev
  libgtest-dev libgmock-dev libbenchmark-dev libsimde-dev
  python3 python3-numpy
  libjs-chart.js chromium
  clang libclang-rt-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

echo "setup: configuring build/ (log: build.log)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release ${LLMBENCH_CMAKE_ARGS:-} > build.log 2>&1 \
  || { cat build.log; exit 1; }

# build LABEL [TARGET]: ninja's "[k/n]" lines become a progress line every 5% or 20 s.
build() {
  local label=$1 start=$SECONDS last_pct=-5 last_t=$SECONDS line k n pct
  echo "setup: building $label"
  set +e
  cmake --build build -j "$(nproc)" ${2:+--target "$2"} 2>&1 | tee -a build.log | {
    while IFS= read -r line; do
      [[ $line =~ ^\[([0-9]+)/([0-9]+)\] ]] || continue
      k=${BASH_REMATCH[1]} n=${BASH_REMATCH[2]}
      ((n > 2)) || continue  # ninja's re-check of globbed folders, not the build
      pct=$((100 * k / n))
      if ((pct >= last_pct + 5 || SECONDS - last_t >= 20 || k == n)); then
        printf 'setup: %s %3d%% (%d/%d steps, %d:%02d)\n' "$label" "$pct" "$k" "$n" \
          $(((SECONDS - start) / 60)) $(((SECONDS - start) % 60))
        last_pct=$pct last_t=$SECONDS
      fi
    done
  }
  local status=${PIPESTATUS[0]}
  set -e
  if ((status != 0)); then
    tail -n 60 build.log
    echo "setup: building $label failed (full log: build.log)" >&2
    exit 1
  fi
}

build "llmbench" llmbench
echo "setup: built build/tools/llmbench ($(build/tools/llmbench --version))"
if ((with_tests)); then
  build "the tests and benchmarks"
  echo "setup: built every test and benchmark; run them with ctest --test-dir build -j 2"
fi
