#!/bin/sh
# Incremental builds for `llmbench bisect --build 'bench/bisect/build.sh {rev} {out}'` on
# llmbench's own history (docs/ci.md, "Bisect on llmbench's own history"). bisect checks each
# commit out into a fresh worktree, where every file is new and a build starts from nothing (about
# 25 minutes on 2 cores); this script ignores that worktree and keeps one clone and one build
# directory under $LLMBENCH_BISECT_DIR (default /tmp/llmbench-bisect): `git checkout` rewrites only
# the files a commit changed, so ninja rebuilds only what they touch. CPU backend only, no tests.
set -eu
rev="$1"; out="$2"
dir="${LLMBENCH_BISECT_DIR:-/tmp/llmbench-bisect}"
repo="$(git rev-parse --path-format=absolute --git-common-dir)"
[ -d "$dir/src/.git" ] || git clone -q "$repo" "$dir/src"
git -C "$dir/src" fetch -q "$repo" "$rev" 2>/dev/null || true
git -C "$dir/src" checkout -q --detach "$rev"
cmake -S "$dir/src" -B "$dir/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DLLMBENCH_CUDA=OFF -DLLMBENCH_BUILD_TESTS=OFF > /dev/null
nice -n 10 cmake --build "$dir/build" --target llmbench -j "$(nproc)"
cp "$dir/build/tools/llmbench" "$out"
