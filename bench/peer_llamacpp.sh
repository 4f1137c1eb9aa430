#!/usr/bin/env bash
# llmbench against llama.cpp on this machine, same model shape, same weight bytes, interleaved.
# Builds llama.cpp CPU-only (native, OpenMP, no CUDA, no curl), writes GGUF files of an llmbench
# preset (bench/peer_gguf.py from `llmbench export-weights`; Q8_0/Q4_0 by llama-quantize --pure
# --token-embedding-type f32, llmbench's layout), then runs rounds of pairs, the order alternating
# each round, and prints each round's ratio (llmbench / llama.cpp: below 1 means llmbench is
# faster) and the median per case. Nothing of llama.cpp is part of llmbench; it is used from the
# tree given with --llama-cpp. Not part of ctest (minutes per case).
#
# Checked with llama.cpp c392e5094deaf2d1a7c18683214f007fad3fe42b (2025-02-20), the commit the
# figures in docs/metrics.md ("Against llama.cpp") were measured with.
#
# Cases (the same positions on both sides):
#   tg    batch-1 decode: llama-bench -p 0 -n G (G tokens from an empty cache) against
#         llmbench run --batch 1 --prompt-len 1 --max-new-tokens G+1; TPOT in ms
#   pp    prefill of one P-token prompt: llama-bench -p P -n 0 against --prompt-len P
#         --max-new-tokens 1; TTFT in ms
#   b16   16 sequences of P prompt tokens, then G decode steps: llama-batched-bench -npp P
#         -ntg G -npl 16 against llmbench run --batch 16 --prompt-len P --max-new-tokens G+1;
#         two rows, TTFT (t_pp) and TPOT (t_tg / G)
# llama.cpp always runs with --mmap 0 (weights read into memory, as llmbench holds them), both
# with the same thread count, and both do one unmeasured warm-up per run.
#
# Usage: bench/peer_llamacpp.sh --llama-cpp DIR [--build DIR] [--model PRESET] [--dtype LIST]
#            [--cases LIST] [--rounds N] [--gen G] [--prompt P] [--threads N] [--work DIR]
#            [--bin LLMBENCH] [--lock FILE] [--lock-scope pair|round]
#   --dtype  comma list of fp32,bf16,fp16,int8,int4 (GGUF F32, BF16, F16, Q8_0, Q4_0)
#   --lock   run each pair (or each round: --lock-scope round) under `flock FILE`, so no build
#            runs during it, and release it in between
# The environment reaches llmbench: LLMBENCH_CPU_ISA=portable compares its portable kernels.
# Example: bench/peer_llamacpp.sh --llama-cpp /work/llama.cpp --model tinyllama-1.1b \
#            --dtype fp32,bf16 --cases tg,pp --rounds 6 --lock /tmp/llmbench.lock
set -euo pipefail
cd "$(dirname "$0")/.."

lcpp="" build="" model=tinyllama-1.1b dtypes=fp32 cases=tg rounds=5 gen=32 prompt=128
threads=$(nproc) work=/tmp/llmbench-peer bin=$PWD/build/tools/llmbench lock="" scope=pair
while [ $# -gt 0 ]; do
  case $1 in
    --llama-cpp) lcpp=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --model) model=$2; shift 2 ;;
    --dtype) dtypes=$2; shift 2 ;;
    --cases) cases=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --gen) gen=$2; shift 2 ;;
    --prompt) prompt=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --lock) lock=$2; shift 2 ;;
    --lock-scope) scope=$2; shift 2 ;;
    *) echo "peer_llamacpp: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ -n "$lcpp" ] && [ -f "$lcpp/CMakeLists.txt" ] ||
  { echo "peer_llamacpp: --llama-cpp: expected a llama.cpp source tree" >&2; exit 2; }
case $scope in pair|round) ;; *) echo "peer_llamacpp: --lock-scope: expected pair or round" >&2; exit 2 ;; esac
[ -x "$bin" ] || { echo "peer_llamacpp: --bin: '$bin' is not an executable (build first)" >&2; exit 2; }
build=${build:-$lcpp/build}
# Debian's python3 has numpy; a pyenv or venv python in PATH may not.
py=python3
python3 -c 'import numpy' 2> /dev/null || py=/usr/bin/python3
with_lock() { if [ -n "$lock" ]; then flock "$lock" "$@"; else "$@"; fi; }
# The lock held over one pair only (file descriptor 9), so builds can run between pairs.
lock_take() { if [ -n "$lock" ]; then exec 9> "$lock"; flock 9; fi; }
lock_give() { if [ -n "$lock" ]; then flock -u 9; exec 9>&-; fi; }

# ---- llama.cpp, built once ----
if [ ! -x "$build/bin/llama-bench" ] || [ ! -x "$build/bin/llama-quantize" ] ||
   [ ! -x "$build/bin/llama-batched-bench" ]; then
  echo "building llama.cpp in $build (llama-bench, llama-quantize, llama-batched-bench)" >&2
  with_lock cmake -S "$lcpp" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON \
    -DGGML_OPENMP=ON -DGGML_CUDA=OFF -DLLAMA_CURL=OFF > /dev/null
  with_lock cmake --build "$build" -j "$threads" --target llama-bench llama-quantize \
    llama-batched-bench > /dev/null
fi
echo "llama.cpp: $(git -C "$lcpp" rev-parse --short=10 HEAD 2> /dev/null || echo unknown)" \
     "($build); llmbench: $("$bin" --version 2> /dev/null | head -1)"

# ---- GGUF files ----
mkdir -p "$work"
gguf_for() {  # dtype -> path of the GGUF file with that preset's weights (made once)
  local dt=$1 src gg qt
  case $dt in
    fp32) src=fp32 gg=F32 ;; bf16) src=bf16 gg=BF16 ;; fp16) src=fp16 gg=F16 ;;
    int8) src=fp32 gg=Q8_0 qt=Q8_0 ;; int4) src=fp32 gg=Q4_0 qt=Q4_0 ;;
    *) echo "peer_llamacpp: --dtype: expected fp32, bf16, fp16, int8 or int4, got '$dt'" >&2
       return 2 ;;
  esac
  local out=$work/$model-$gg.gguf
  if [ ! -s "$out" ]; then
    local hf=$work/$model-$src-hf base=$work/$model-${src^^}.gguf
    [ "$src" = fp32 ] && base=$work/$model-F32.gguf
    if [ ! -s "$base" ]; then
      [ -d "$hf" ] || with_lock "$bin" export-weights --model "$model" --dtype "$src" -o "$hf" >&2
      with_lock "$py" bench/peer_gguf.py --llama-cpp "$lcpp" --hf-dir "$hf" --out "$base.tmp" >&2
      mv "$base.tmp" "$base"
      rm -rf "$hf"
    fi
    if [ -n "${qt:-}" ]; then
      with_lock "$build/bin/llama-quantize" --pure --token-embedding-type f32 "$base" "$out.tmp" "$qt" \
        > "$work/quantize-$gg.log" 2>&1
      mv "$out.tmp" "$out"
    fi
  fi
  echo "$out"
}

# ---- one measurement each; every function prints "metric value_ms" lines ----
llmbench_case() {  # dtype case
  local dt=$1 c=$2 b=1 p=1 n=$((gen + 1))
  case $c in pp) p=$prompt n=1 ;; b16) b=16 p=$prompt ;; esac
  "$bin" run --model "$model" --dtype "$dt" --backend cpu --threads "$threads" --batch "$b" \
    --prompt-len "$p" --max-new-tokens "$n" --warmup 1 --repeat 1 --format csv --quiet |
    "$py" -c '
import csv, sys
row = next(csv.DictReader(sys.stdin))
case = sys.argv[1]
if case in ("pp", "b16"): print("ttft", row["ttft_ms_mean"])
if case in ("tg", "b16"): print("tpot", row["tpot_ms_mean"])' "$c"
}
llamacpp_case() {  # gguf case
  local gg=$1 c=$2
  case $c in
    tg|pp)
      local p=0 n=$gen
      [ "$c" = pp ] && p=$prompt n=0
      "$build/bin/llama-bench" -m "$gg" -t "$threads" -mmp 0 -p "$p" -n "$n" -r 1 -o csv \
        2> /dev/null | "$py" -c '
import csv, sys
row = next(csv.DictReader(sys.stdin))
tokens = int(row["n_gen"]) or int(row["n_prompt"])
ms = float(row["avg_ns"]) / 1e6
print("tpot" if int(row["n_gen"]) else "ttft", ms / tokens if int(row["n_gen"]) else ms)' ;;
    b16)
      "$build/bin/llama-batched-bench" -m "$gg" -t "$threads" -tb "$threads" --no-mmap \
        -c $((16 * (prompt + gen) + 16)) -b 2048 -ub 512 -npp "$prompt" -ntg "$gen" -npl 16 \
        --output-format jsonl 2>&1 | "$py" -c '
import json, sys
for line in sys.stdin:
    if line.startswith("{"):
        r = json.loads(line)
        print("ttft", 1000 * r["t_pp"]); print("tpot", 1000 * r["t_tg"] / r["tg"])' ;;
  esac
}

# ---- rounds ----
results=$work/results-$$.txt
: > "$results"
IFS=, read -ra dtype_list <<< "$dtypes"
IFS=, read -ra case_list <<< "$cases"
printf '%-5s %-5s %-4s %5s %12s %12s %7s %s\n' round dtype case what llmbench_ms llamacpp_ms ratio first
for dt in "${dtype_list[@]}"; do gguf_for "$dt" > /dev/null; done  # made before any timing
for ((r = 1; r <= rounds; ++r)); do
  if [ "$scope" = round ]; then lock_take; fi
  for dt in "${dtype_list[@]}"; do
    gg=$(gguf_for "$dt")
    for c in "${case_list[@]}"; do
      a=$(mktemp) b=$(mktemp)
      if [ "$scope" = pair ]; then lock_take; fi
      if ((r % 2)); then
        first=llmbench
        llmbench_case "$dt" "$c" > "$a"; llamacpp_case "$gg" "$c" > "$b"
      else
        first=llama.cpp
        llamacpp_case "$gg" "$c" > "$b"; llmbench_case "$dt" "$c" > "$a"
      fi
      if [ "$scope" = pair ]; then lock_give; fi
      while read -r what ours; do
        theirs=$(awk -v w="$what" '$1 == w { print $2 }' "$b")
        [ -n "$theirs" ] || { echo "peer_llamacpp: llama.cpp gave no $what for $dt $c" >&2; continue; }
        ratio=$(awk -v a="$ours" -v b="$theirs" 'BEGIN { printf "%.3f", a / b }')
        printf '%-5s %-5s %-4s %5s %12.2f %12.2f %7s %s\n' "$r" "$dt" "$c" "$what" "$ours" \
          "$theirs" "$ratio" "$first"
        echo "$dt $c $what $ratio" >> "$results"
      done < "$a"
      rm -f "$a" "$b"
    done
  done
  if [ "$scope" = round ]; then lock_give; fi
done
echo
echo "median ratio per case (llmbench / llama.cpp; below 1: llmbench faster), over $rounds rounds:"
sort -k1,1 -k2,2 -k3,3 -k4,4n "$results" | awk '
  { key = $1 " " $2 " " $3; v[key, ++n[key]] = $4; if (!(key in seen)) { seen[key] = 1; order[++k] = key } }
  END { for (i = 1; i <= k; ++i) { key = order[i]; m = n[key];
          med = (m % 2) ? v[key, (m + 1) / 2] : (v[key, m / 2] + v[key, m / 2 + 1]) / 2;
          printf "  %-22s %.3f  (min %.3f, max %.3f, %d rounds)\n", key, med, v[key, 1], v[key, m], m } }'
rm -f "$results"
