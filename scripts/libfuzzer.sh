#!/usr/bin/env bash
# Coverage-guided fuzzing (libFuzzer, clang) of the parsers that read what a peer sends: the
# server's HTTP request reader, request bodies and the BPE tokenizer that encodes their text,
# the load client's event stream and answers, the Prometheus text it scrapes, and a checkpoint's
# safetensors files
# (docs/fuzzing.md, "Coverage-guided"). Each harness in tests/fuzz/libfuzzer/ is compiled with
# its parser's sources at -O1 with ASan + UBSan and libFuzzer's coverage; nothing else of the
# project is built.
#
#   scripts/libfuzzer.sh [SECONDS] [TARGET...]   fuzz each target SECONDS (default 300)
#   scripts/libfuzzer.sh --replay [TARGET...]    run the committed seeds once (a regression
#                                                 check; the ctest libfuzzer_replay)
#
# Targets: http_request stream prometheus request tokenizer safetensors (default: all). Work goes to
# $LLMBENCH_LIBFUZZER_DIR (default build-libfuzzer): the binaries, each target's growing corpus
# (corpus/TARGET, started from tests/fuzz/libfuzzer/seeds/TARGET) and what crashed
# (crashes/TARGET/, each file an input that reproduces it: run the binary with the file).
# Exit status: 0 when nothing crashed, 1 when something did, 2 for bad arguments, 77 when no
# clang with libFuzzer is installed (Debian: clang, libclang-rt-dev).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${LLMBENCH_LIBFUZZER_DIR:-$root/build-libfuzzer}
replay=0
seconds=300
if [ "${1:-}" = --replay ]; then replay=1; shift
elif [[ "${1:-}" =~ ^[0-9]+$ ]]; then seconds=$1; shift
fi
all=(http_request stream prometheus request tokenizer safetensors)
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all[@]}")

# The parser sources each harness needs.
sources() {
  case $1 in
    http_request) echo tools/serve/http_request.cpp ;;
    stream) echo tools/load/stream_parse.cpp engine/checkpoint/json_input.cpp kernels/common/error.cpp ;;
    prometheus) echo tools/load/prometheus_text.cpp ;;
    request) echo tools/serve/completion_request.cpp tools/serve/chat_request.cpp \
                  tools/serve/sampling_params.cpp tools/text/*.cpp \
                  engine/checkpoint/json_input.cpp engine/checkpoint/input_file.cpp \
                  kernels/common/error.cpp ;;
    tokenizer) echo tools/text/*.cpp engine/checkpoint/json_input.cpp \
                    engine/checkpoint/input_file.cpp kernels/common/error.cpp ;;
    safetensors) echo engine/checkpoint/safetensors.cpp engine/checkpoint/json_input.cpp \
                      engine/checkpoint/input_file.cpp kernels/common/error.cpp ;;
    *) echo "libfuzzer.sh: unknown target '$1' (expected one of: ${all[*]})" >&2; exit 2 ;;
  esac
}
for t in "${targets[@]}"; do sources "$t" >/dev/null; done

cxx=${CXX_LIBFUZZER:-clang++}
# Fuzzing wants the speed of -O1; a replay only compiles and runs a few seeds, so -O0.
opt=-O1
[ $replay = 1 ] && opt=-O0
flags=(-std=c++20 "$opt" -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
       -fno-omit-frame-pointer -I"$root" -DLLMBENCH_SOURCE_DIR="\"$root\"")
mkdir -p "$out"
if ! command -v "$cxx" >/dev/null ||
   ! echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' |
     "$cxx" "${flags[@]}" -x c++ - -o "$out/probe" 2>/dev/null; then
  echo "libfuzzer.sh: no $cxx with libFuzzer (Debian: apt-get install clang libclang-rt-dev); skipped" >&2
  exit 77
fi

# Each parser source is compiled once per invocation, however many harnesses share it (a
# fresh folder each time, so no object outlives a change to a header).
rm -rf "$out/obj" && mkdir -p "$out/obj"
objects() {
  local src obj
  for src in $(sources "$1"); do
    obj=$out/obj/${src//\//_}.o
    [ -f "$obj" ] || "$cxx" "${flags[@]}" -c "$src" -o "$obj"
    echo "$obj"
  done
}

crashed=0
for t in "${targets[@]}"; do
  bin=$out/lf_$t
  objs=$(objects "$t")
  # shellcheck disable=SC2086  # word splitting of the object list is intended
  "$cxx" "${flags[@]}" "tests/fuzz/libfuzzer/lf_$t.cpp" $objs -o "$bin"
  seeds=tests/fuzz/libfuzzer/seeds/$t
  mkdir -p "$out/crashes/$t"
  if [ $replay = 1 ]; then
    # Every seed once, no mutation: the inputs that once crashed stay fixed.
    if ! "$bin" -runs=0 -artifact_prefix="$out/crashes/$t/" "$seeds" >"$out/$t.log" 2>&1; then
      crashed=1; tail -30 "$out/$t.log"
    fi
    echo "$t: $(ls "$seeds" | wc -l) seeds replayed"
    continue
  fi
  mkdir -p "$out/corpus/$t"
  if ! "$bin" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
       -artifact_prefix="$out/crashes/$t/" "$out/corpus/$t" "$seeds" >"$out/$t.log" 2>&1; then
    crashed=1; grep -E 'ERROR|SUMMARY|runtime error|^    #[0-9] ' "$out/$t.log" | head -20
  fi
  echo "$t: $(grep -Eo 'Done [0-9]+ runs in [0-9]+ second' "$out/$t.log" | tail -1)," \
       "$(grep -Eo 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' "$out/$t.log" | tail -1)," \
       "crashes: $(ls "$out/crashes/$t" | wc -l)"
done
exit $crashed
