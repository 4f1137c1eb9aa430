#!/usr/bin/env bash
# Packs what scripts/gpu_validate.sh runs on a lent GPU machine into .gpu/bundle.tgz (ignored by
# git): the binaries of BUILD_DIR (configured with -DCMAKE_CUDA_ARCHITECTURES=90) in bin/ and
# the shared libraries they load that such a machine's image lacks in lib/ (everything ldd
# finds except glibc, the C++ runtime and CUDA, which the image has).
#
#   scripts/gpu_bundle.sh [BUILD_DIR]     (default build-sm90)
set -euo pipefail
build=${1:-build-sm90}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cmake --build "$build" --target llmbench test_cuda_kernels test_cuda_forward test_cuda_kv_f16 \
    bench_cuda_kernels
rm -rf .gpu && mkdir -p .gpu/bin .gpu/lib
bins=("$build/tools/llmbench" "$build/tests/test_cuda_kernels" "$build/tests/test_cuda_forward"
      "$build/tests/test_cuda_kv_f16" "$build/tests/bench_cuda_kernels")
cp "${bins[@]}" .gpu/bin/
skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libmvec|libpthread|libdl\.so|librt\.so|libstdc\+\+|libgcc_s|libcuda|libcudart|libcublas)'
for b in "${bins[@]}"; do ldd "$b"; done | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u |
  while read -r name path; do
    [[ $name =~ $skip ]] || cp -L "$path" ".gpu/lib/$name"
  done
grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || { mkdir -p .git/info; echo /.gpu/ >> .git/info/exclude; }
# One archive: what travels with a call is limited to 64 MiB and OpenBLAS alone is 36 MB.
tar -C .gpu -czf .gpu/bundle.tgz bin lib && rm -rf .gpu/bin .gpu/lib
du -sh .gpu/bundle.tgz
echo "on the device: mkdir -p /tmp/g && tar xzf .gpu/bundle.tgz -C /tmp/g && bash scripts/gpu_validate.sh /tmp/g/bin \$OUT check"
