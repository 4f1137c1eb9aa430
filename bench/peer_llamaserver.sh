#!/usr/bin/env bash
# llmbench serve against llama.cpp's llama-server, served, at concurrency 1: the same model
# shape and weight bytes (the GGUF files of bench/peer_llamacpp.sh), the same thread count, the
# same client (`llmbench load`), rounds of pairs with the order alternating. Each side is one
# `llmbench load --server-cmd ...` run: load starts the server on a free loopback port, waits for
# /health, sends --warmup-requests unmeasured and --num-requests measured streamed requests one
# at a time (token-id prompts of --input-len ids, max_tokens --output-len with ignore_eos, so
# both servers generate exactly that many tokens), and stops the server (SIGTERM to its process
# group). Prints each round's TPOT p50 and TTFT p50 of both and their ratio (llmbench /
# llama-server: below 1 means llmbench is faster) and the median ratio per dtype. Nothing of
# llama.cpp is part of llmbench; llama-server is built in the --build directory (the one
# bench/peer_llamacpp.sh uses) when missing. Not part of ctest (minutes per pair).
#
# Checked with llama.cpp c392e5094deaf2d1a7c18683214f007fad3fe42b (2025-02-20), the commit of the
# figures in docs/metrics.md ("Served: llmbench serve against llama-server").
#
# Server command lines (both on 127.0.0.1, one sequence at a time):
#   llmbench serve --model M --dtype D --threads T --port {port}
#   llama-server -m M-GG.gguf --host 127.0.0.1 --port {port} -t T -tb T --no-mmap -np 1
#                -c CTX (CTX = input + output + 16)
# (each server's own output goes to WORK/serve-D.log and WORK/llama-server-D.log)
# TPOT is load's per-request (E2EL - TTFT) / (tokens - 1), docs/metrics.md "Serving metrics";
# each side's stored requests go to --db (labels llmbench-D and llama-server-D).
#
# Usage: bench/peer_llamaserver.sh --llama-cpp DIR [--build DIR] [--model PRESET] [--dtype LIST]
#            [--rounds N] [--input-len P] [--output-len G] [--num-requests N]
#            [--warmup-requests W] [--threads N] [--work DIR] [--bin LLMBENCH] [--db PATH]
#            [--lock FILE]
#   --dtype  comma list of fp32,bf16,fp16,int8,int4 (GGUF F32, BF16, F16, Q8_0, Q4_0); missing
#            GGUF files are made by bench/peer_llamacpp.sh --rounds 0 in the same --work
#   --lock   run each pair under `flock FILE` (no build runs during it), released in between
# Example: bench/peer_llamaserver.sh --llama-cpp /work/llama.cpp --work /work/peer --model small \
#            --dtype fp32,bf16 --rounds 3 --lock /tmp/llmbench.lock
set -euo pipefail
cd "$(dirname "$0")/.."

lcpp="" build="" model=small dtypes=fp32 rounds=3 input=128 output=64 requests=8 warmup=2
threads=$(nproc) work=/tmp/llmbench-peer bin=$PWD/build/tools/llmbench db="" lock=""
while [ $# -gt 0 ]; do
  case $1 in
    --llama-cpp) lcpp=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --model) model=$2; shift 2 ;;
    --dtype) dtypes=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --input-len) input=$2; shift 2 ;;
    --output-len) output=$2; shift 2 ;;
    --num-requests) requests=$2; shift 2 ;;
    --warmup-requests) warmup=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --db) db=$2; shift 2 ;;
    --lock) lock=$2; shift 2 ;;
    *) echo "peer_llamaserver: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ -n "$lcpp" ] && [ -f "$lcpp/CMakeLists.txt" ] ||
  { echo "peer_llamaserver: --llama-cpp: expected a llama.cpp source tree" >&2; exit 2; }
[ -x "$bin" ] || { echo "peer_llamaserver: --bin: '$bin' is not an executable (build first)" >&2; exit 2; }
for v in rounds input output requests warmup threads; do
  [[ ${!v} =~ ^[0-9]+$ ]] || { echo "peer_llamaserver: --${v}: expected a whole number, got '${!v}'" >&2; exit 2; }
done
build=${build:-$lcpp/build}
db=${db:-$work/served.db}
server=$build/bin/llama-server
with_lock() { if [ -n "$lock" ]; then flock "$lock" "$@"; else "$@"; fi; }
lock_take() { if [ -n "$lock" ]; then exec 9> "$lock"; flock 9; fi; }
lock_give() { if [ -n "$lock" ]; then flock -u 9; exec 9>&-; fi; }

if [ ! -x "$server" ]; then
  echo "building llama-server in $build" >&2
  [ -f "$build/CMakeCache.txt" ] ||
    with_lock cmake -S "$lcpp" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON \
      -DGGML_OPENMP=ON -DGGML_CUDA=OFF -DLLAMA_CURL=OFF > /dev/null
  with_lock cmake --build "$build" -j "$threads" --target llama-server > /dev/null
fi
echo "llama.cpp: $(git -C "$lcpp" rev-parse --short=10 HEAD 2> /dev/null || echo unknown)" \
     "($server); llmbench: $("$bin" --version 2> /dev/null | head -1)"

gguf_name() {  # dtype -> the GGUF type name bench/peer_llamacpp.sh gives that dtype's file
  case $1 in
    fp32) echo F32 ;; bf16) echo BF16 ;; fp16) echo F16 ;; int8) echo Q8_0 ;; int4) echo Q4_0 ;;
    *) echo "peer_llamaserver: --dtype: expected fp32, bf16, fp16, int8 or int4, got '$1'" >&2
       return 2 ;;
  esac
}
IFS=, read -ra dtype_list <<< "$dtypes"
missing=""
for dt in "${dtype_list[@]}"; do
  [ -s "$work/$model-$(gguf_name "$dt").gguf" ] || missing=${missing:+$missing,}$dt
done
if [ -n "$missing" ]; then  # made once, before any timing, by the offline peer script
  bench/peer_llamacpp.sh --llama-cpp "$lcpp" --build "$build" --model "$model" --dtype "$missing" \
    --rounds 0 --work "$work" --bin "$bin" ${lock:+--lock "$lock"} > /dev/null
fi

# One served measurement: prints "tpot_p50 ttft_p50" (ms) of the level's measured requests.
served() {  # label server-command
  "$bin" load --server-cmd "$2" --concurrency 1 --input-len "$input" --output-len "$output" \
    --num-requests "$requests" --warmup-requests "$warmup" --ignore-eos --label "$1" \
    --db "$db" --format csv --quiet | /usr/bin/python3 -c '
import csv, sys
row = next(csv.DictReader(sys.stdin))
if int(row["failed"]) or int(row["requests"]) == 0:
    sys.exit("peer_llamaserver: %s: %s requests failed" % (sys.argv[1], row["failed"]))
print(row["tpot_ms_p50"], row["ttft_ms_p50"])' "$1"
}

results=$work/served-$$.txt
: > "$results"
printf '%-5s %-5s %11s %11s %7s %11s %11s %7s %s\n' round dtype tpot_ours tpot_theirs ratio \
  ttft_ours ttft_theirs ratio first
for ((r = 1; r <= rounds; ++r)); do
  for dt in "${dtype_list[@]}"; do
    ours_cmd="$bin serve --model $model --dtype $dt --threads $threads --port {port}"
    ours_cmd+=" > $work/serve-$dt.log 2>&1"
    theirs_cmd="$server -m $work/$model-$(gguf_name "$dt").gguf --host 127.0.0.1 --port {port}"
    theirs_cmd+=" -t $threads -tb $threads --no-mmap -np 1 -c $((input + output + 16))"
    theirs_cmd+=" > $work/llama-server-$dt.log 2>&1"
    lock_take
    if ((r % 2)); then
      first=llmbench
      a=$(served "llmbench-$dt" "$ours_cmd"); b=$(served "llama-server-$dt" "$theirs_cmd")
    else
      first=llama-server
      b=$(served "llama-server-$dt" "$theirs_cmd"); a=$(served "llmbench-$dt" "$ours_cmd")
    fi
    lock_give
    read -r tpot_a ttft_a <<< "$a"
    read -r tpot_b ttft_b <<< "$b"
    ratio=$(awk -v x="$tpot_a" -v y="$tpot_b" 'BEGIN { printf "%.3f", x / y }')
    ratio_ttft=$(awk -v x="$ttft_a" -v y="$ttft_b" 'BEGIN { printf "%.3f", x / y }')
    printf '%-5s %-5s %11.3f %11.3f %7s %11.2f %11.2f %7s %s\n' "$r" "$dt" "$tpot_a" "$tpot_b" \
      "$ratio" "$ttft_a" "$ttft_b" "$ratio_ttft" "$first"
    echo "$dt tpot $ratio" >> "$results"
    echo "$dt ttft $ratio_ttft" >> "$results"
  done
done
echo
echo "median ratio per dtype (llmbench serve / llama-server, p50 of each side; below 1: llmbench faster), over $rounds rounds:"
sort -k1,1 -k2,2 -k3,3n "$results" | awk '
  { key = $1 " " $2; v[key, ++n[key]] = $3; if (!(key in seen)) { seen[key] = 1; order[++k] = key } }
  END { for (i = 1; i <= k; ++i) { key = order[i]; m = n[key];
          med = (m % 2) ? v[key, (m + 1) / 2] : (v[key, m / 2] + v[key, m / 2 + 1]) / 2;
          printf "  %-12s %.3f  (min %.3f, max %.3f, %d rounds)\n", key, med, v[key, 1], v[key, m], m } }'
rm -f "$results"
