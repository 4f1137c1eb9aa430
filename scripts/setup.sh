#!/usr/bin/env bash
# One-time set-up on Debian 12, safe to repeat: installs the Debian packages llmbench needs
# (only those missing; a no-op when everything is there), then configures and builds into
# ./build (Release). Used by both commands of the README and by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build pkg-config git
  libcli11-dev libfmt-dev libsqlite3-dev sqlite3 libopenblas-openmp-dev nlohmann-json3-dev
  libtomlplusplus-dev
  libcpp-httplib-dev libcurl4-openssl-dev libsentencepiece-dev
  zlib1g-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-numpy
  libjs-chart.js chromium
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

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release ${LLMBENCH_CMAKE_ARGS:-} > build.log 2>&1 \
  || { cat build.log; exit 1; }
cmake --build build -j "$(nproc)" >> build.log 2>&1 || { tail -n 60 build.log; exit 1; }
echo "setup: built build/tools/llmbench ($(build/tools/llmbench --version))"
