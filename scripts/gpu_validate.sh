#!/usr/bin/env bash
# GPU validation of the CUDA backend (docs/gpu-validation.md), in one pass that fits a short
# lease on a machine with an NVIDIA GPU.
#
#   scripts/gpu_validate.sh BIN_DIR OUT_DIR [core|extra|all|check|tests|cupti|energy|stalls|peer]
#
# BIN_DIR holds llmbench, test_cuda_kernels, test_cuda_forward and bench_cuda_kernels built with
# -DCMAKE_CUDA_ARCHITECTURES=90 (a lib/ beside it may hold the shared libraries that machine
# lacks). PART picks the steps: core (tests, roofline, tinyllama, the llama2-7b targets, serve on
# CUDA, kernel bench), extra (the case studies, KV-cache variants and the 16-bit sweep), all, or
# check (tests, serve and one llama2-7b decode: a short re-check after changes), tests (the
# two CUDA test binaries alone: what a lease of a few minutes allows), cupti (the tests, then
# llama2-7b fp16 decode traced with --timer events and with the default timer side by side, and
# op_coverage / top_ops over the result: about 90 s), energy (issue 44 section 3: llama2-7b
# fp16 decode at batch 1 and 16 and a prefill with the board's energy counter, checked by
# scripts/gpu_energy_check.py -- watts between idle and the power limit, batch 16 cheaper per
# decode token than batch 1 -- then serve's J per output token; about 300 s), stalls (issue 44
# section 2: llama2-7b fp16 decode at batch 1 and 16 traced with the CUPTI timer, checked by
# scripts/gpu_stall_check.py -- trace_overhead_tpot <= 1.02 at batch 1, no traced step with a
# gap over 0.5 ms that the untraced steps lack, kernels stored -- then op_gaps and the three
# kernel queries on llmbench's own trace; about 200 s), or peer (issue 32's PyTorch peer:
# scripts/gpu_torch_peer.py, its traces imported beside llmbench's own and compared by
# peer_gemm_compare, and scripts/gpu_serve_load.py's serving targets; about 240 s,
# docs/gpu-validation.md). Every step has
# its own time limit; the log goes to OUT_DIR/validate-PART.log and the databases to OUT_DIR.
set -u
BIN=$(cd "$1" && pwd)
OUT=$(mkdir -p "$2" && cd "$2" && pwd)
PART=${3:-core}
LOG=$OUT/validate-$PART.log
export LD_LIBRARY_PATH="$BIN/../lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
if ! ldconfig -p | grep -q libcublas.so.13 && [ ! -e /usr/local/cuda/lib64/libcublas.so.13 ]; then
  dir=$(dirname "$(find / -name 'libcublas.so.13' -not -path '/proc/*' 2>/dev/null | head -1)")
  export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$dir"
fi
export XDG_CACHE_HOME=$OUT/cache  # the roofline cache; removed at the end
LB=$BIN/llmbench
summary=()

step() {  # step NAME LIMIT_S COMMAND...
  local name=$1 limit=$2; shift 2
  echo "=== $name: $*" | tee -a "$LOG"
  local t0; t0=$(date +%s%N)
  timeout "$limit" "$@" >>"$LOG" 2>&1
  local rc=$?
  local dt=$(( ($(date +%s%N) - t0) / 1000000 ))
  echo "=== $name rc=$rc ${dt} ms" | tee -a "$LOG"
  summary+=("$name rc=$rc ${dt} ms")
}

{
  date -u; nvidia-smi; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv
  ldd "$LB" | grep -E 'not found|cublas|cudart'
} >>"$LOG" 2>&1

if [ "$PART" = core ] || [ "$PART" = all ]; then
  step test_cuda_kernels 150 "$BIN/test_cuda_kernels"
  step test_cuda_forward 200 "$BIN/test_cuda_forward"
  step roofline 90 "$LB" roofline --backend cuda
  step tinyllama 90 "$LB" run --backend cuda --model tinyllama-1.1b --batch 1,16 \
      --prompt-len 128 --max-new-tokens 32 --db "$OUT/tiny.db"
  step llama7b_decode 180 "$LB" run --backend cuda --model llama2-7b --dtype fp16 --batch 1,4 \
      --prompt-len 128 --max-new-tokens 128 --repeat 5 --db "$OUT/targets.db"
  step llama7b_prefill 120 "$LB" run --backend cuda --model llama2-7b --dtype fp16 --batch 16 \
      --prompt-len 512 --max-new-tokens 1 --repeat 5 --db "$OUT/targets.db"
  step serve_cuda 120 python3 "$(dirname "$0")/gpu_serve_check.py" "$LB" tinyllama-1.1b cuda
  step bench_cuda_kernels 150 "$BIN/bench_cuda_kernels" \
      --benchmark_filter='BM_(gemv_f16|gemm/f16/m:(1|4|16)/|attention|rmsnorm|rope|kv_cache_write|swiglu|add_inplace|argmax)'
fi
if [ "$PART" = check ]; then  # a short re-check: the tests, serve, one llama2-7b decode
  step test_cuda_kernels 150 "$BIN/test_cuda_kernels"
  step test_cuda_forward 200 "$BIN/test_cuda_forward"
  step roofline 90 "$LB" roofline --backend cuda
  step serve_cuda 120 python3 "$(dirname "$0")/gpu_serve_check.py" "$LB" tinyllama-1.1b cuda
  step llama7b_decode 150 "$LB" run --backend cuda --model llama2-7b --dtype fp16 --batch 1 \
      --prompt-len 128 --max-new-tokens 128 --repeat 5 --db "$OUT/targets.db"
fi
if [ "$PART" = tests ]; then  # the shortest re-check: the CUDA tests alone
  step test_cuda_kernels 150 "$BIN/test_cuda_kernels"
  step test_cuda_forward 200 "$BIN/test_cuda_forward"
fi
if [ "$PART" = cupti ]; then  # the CUPTI op timer against the event pairs (issue 32, part 1)
  step test_cuda_kernels 150 "$BIN/test_cuda_kernels"
  step test_cuda_forward 200 "$BIN/test_cuda_forward"
  step cupti_timer 180 "$LB" run --backend cuda --model llama2-7b --dtype fp16 --batch 1,16 \
      --prompt-len 128 --max-new-tokens 128 --repeat 5 --timer events,device --trace ops \
      --db "$OUT/cupti.db"
  cp "$OUT/cupti.db" /tmp/cupti-copy.db
  step op_coverage 30 "$LB" query /tmp/cupti-copy.db op_coverage
  for c in 1 2 3 4; do
    step "top_ops_case$c" 30 "$LB" query /tmp/cupti-copy.db top_ops --param case_id=$c \
        --param phase=decode --param top_n=16
  done
  step op_gaps_cupti 30 "$LB" query /tmp/cupti-copy.db op_gaps --param case_id=3 \
      --param phase=decode --param top_n=5
  # --trace steps under both timers: the step ranges alone, each spanning its kernels.
  step cupti_steps 60 "$LB" run --backend cuda --model tinyllama-1.1b --batch 1 --prompt-len 32 \
      --max-new-tokens 16 --repeat 2 --trace steps --timer events,device --db "$OUT/steps.db"
  cp "$OUT/steps.db" /tmp/steps-copy.db
  step op_coverage_steps 30 "$LB" query /tmp/steps-copy.db op_coverage
fi
if [ "$PART" = energy ]; then  # issue 44 section 3: energy per phase through NVML
  here=$(dirname "$0")
  # Decode long enough that each repetition's decode span covers many counter updates; the
  # prefill at 512 tokens x 16 sequences so its span is not shorter than one.
  step energy_decode 200 "$LB" run --backend cuda --model llama2-7b --dtype fp16 --batch 1,16 \
      --prompt-len 512 --max-new-tokens 256 --repeat 5 --trace off --db "$OUT/energy.db"
  cp "$OUT/energy.db" /tmp/energy-copy.db
  step energy_run_check 30 python3 "$here/gpu_energy_check.py" run /tmp/energy-copy.db
  step energy_cases 30 "$LB" query /tmp/energy-copy.db "SELECT batch, prefill_j_per_token,
      decode_j_per_token, prefill_w, decode_w, idle_w, power_limit_w, energy_update_ms,
      energy_check FROM bench_case"
  step energy_serve 300 python3 "$here/gpu_energy_check.py" serve "$LB" \
      "${SERVE_MODEL:-tinyllama-1.1b}" "$OUT"
fi
if [ "$PART" = stalls ]; then  # issue 44 section 2: CUPTI's buffers off the launching thread
  here=$(dirname "$0")
  step test_cuda_forward 200 "$BIN/test_cuda_forward"
  # The shape of the second and third calls of 2026-11-26 (trace_overhead_tpot 1.033 and 1.039
  # at batch 1, ~4 ms stalls every ~33 steps), now with the pooled buffers.
  step stalls_run 200 "$LB" run --backend cuda --model llama2-7b --dtype fp16 --batch 1,16 \
      --prompt-len 128 --max-new-tokens 128 --repeat 5 --timer device --trace ops \
      --db "$OUT/stalls.db"
  cp "$OUT/stalls.db" /tmp/stalls-copy.db
  step stall_check 30 python3 "$here/gpu_stall_check.py" /tmp/stalls-copy.db
  step op_coverage_stalls 30 "$LB" query /tmp/stalls-copy.db op_coverage
  step op_gaps_b1 30 "$LB" query /tmp/stalls-copy.db op_gaps --param case_id=1 \
      --param phase=decode --param top_n=5
  # Kernels as child slices: the device queries on llmbench's own trace (case 1, batch 1).
  step own_kernel_summary 30 "$LB" query /tmp/stalls-copy.db kernel_summary --param case_id=1 \
      --param top_n=15
  step own_kernel_by_range 30 "$LB" query /tmp/stalls-copy.db kernel_by_nvtx_range \
      --param case_id=1
  step own_launch_overhead 30 "$LB" query /tmp/stalls-copy.db launch_overhead --param case_id=1
fi
if [ "$PART" = extra ] || [ "$PART" = all ]; then
  step case_study 90 "$LB" run --config batch16-single-token --backend cuda --db "$OUT/case.db"
  step case_nosync 90 "$LB" run --config batch16-single-token --backend cuda --db "$OUT/case.db" \
      --timer host-nosync --variants naive --batch 8,16 --repeat 1
  step op_batch_fit 30 "$LB" query "$OUT/case.db" op_batch_fit --param run_id=1 --param max_new_tokens=1
  step kv_variants 90 "$LB" run --backend cuda --model small --batch 4 --prompt-len 256 \
      --max-new-tokens 8 --kv-cache prealloc,concat,paged,paged-gather --repeat 5 --db "$OUT/kv.db"
  step halfs 200 "$LB" run --backend cuda --model llama2-7b --dtype fp16,bf16 --batch 1,8,32 \
      --prompt-len 512 --max-new-tokens 64 --trace ops --db "$OUT/halfs.db"
  cp "$OUT/halfs.db" /tmp/halfs-copy.db
  step top_ops 30 "$LB" query /tmp/halfs-copy.db top_ops
fi

if [ "$PART" = peer ]; then  # issue 32 section 3: the PyTorch peer, its profile, serving targets
  here=$(dirname "$0")
  export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TORCHINDUCTOR_CACHE_DIR=/tmp/llmbench-inductor
  # llmbench's own per-op trace of the shape the peer runs (the GEMM comparison's left side):
  # case 1 timed with event pairs, case 2 with CUPTI (kernel sums, as Kineto's kernels are).
  step llama7b_trace 100 "$LB" run --backend cuda --model llama2-7b --dtype fp16 --batch 1 \
      --prompt-len 128 --max-new-tokens 16 --warmup 1 --repeat 1 --trace ops --timer events,cupti \
      --db "$OUT/peer.db"
  step serve_load 100 python3 "$here/gpu_serve_load.py" "$LB" "$OUT" --model "${SERVE_MODEL:-tinyllama-1.1b}" \
      --dtype fp16 --backend cuda --step-timeout-s 60 --server-timeout-s 60
  # The peer: eager and compiled each in a child with its own limit (the compile's bound).
  # TORCH_PEER_ARGS may add flags (later ones win), e.g. "--repeat 2 --batch 1".
  # shellcheck disable=SC2086
  step torch_peer 215 python3 "$here/gpu_torch_peer.py" "$OUT" --model llama2-7b \
      --eager-timeout-s 80 --compiled-timeout-s 125 ${TORCH_PEER_ARGS:-}
  # The compiled trace first, so the eager one is the latest import: the queries' default.
  for t in compiled eager; do
    [ -f "$OUT/torch_${t}_decode.json.gz" ] &&
      step "import_$t" 60 "$LB" import chrome "$OUT/torch_${t}_decode.json.gz" --db "$OUT/peer.db"
  done
  cp "$OUT/peer.db" /tmp/peer-copy.db  # queries read a copy: the archive below takes the original
  step peer_cases 30 "$LB" query /tmp/peer-copy.db "SELECT id, variants, status FROM bench_case"
  step peer_gemm_compare 30 "$LB" query /tmp/peer-copy.db peer_gemm_compare --param case_id=2
  step peer_gemm_compare_events 30 "$LB" query /tmp/peer-copy.db peer_gemm_compare \
      --param case_id=1
  step kernels_latest 30 "$LB" query /tmp/peer-copy.db kernel_summary --param top_n=15
  step launch_overhead 30 "$LB" query /tmp/peer-copy.db launch_overhead
  if [ -f "$OUT/torch_compiled_decode.json.gz" ] && [ -f "$OUT/torch_eager_decode.json.gz" ]; then
    step kernels_compiled 30 "$LB" query /tmp/peer-copy.db kernel_summary --param import_id=1 \
        --param top_n=15
  fi
  # Few files come back: this log, peer.json (both scripts' figures), the eager trace and the
  # databases (peer.db holds both imported traces, so the compiled trace's file goes).
  cat "$OUT/serve.log" >>"$LOG" 2>/dev/null
  python3 -c 'import json, sys
doc = {}
for name in sys.argv[2:]:
    try:
        doc[name.rsplit("/", 1)[-1][:-5]] = json.load(open(name))
    except (OSError, ValueError) as exc:
        doc[name] = "missing: %s" % exc
json.dump(doc, open(sys.argv[1], "w"), indent=1)' "$OUT/peer.json" "$OUT/torch_peer.json" "$OUT/serve_load.json"
  rm -f "$OUT/serve.log" "$OUT/torch_peer.json" "$OUT/serve_load.json" "$OUT/torch_compiled_decode.json.gz"
  # The three tables on stdout too, where the device tool's output tail shows them.
  sed -n '/^=== torch peer summary/,/^=== torch_peer rc=/p; /^=== serving targets/,/^=== serve_load rc=/p;
          /^=== peer_cases:/,/^=== peer_gemm_compare_events rc=/p' "$LOG"
fi

# What comes back from a lease is a few files: the log and one archive of the databases, named
# after the part, so parts run one after the other in one call keep each other's.
(cd "$OUT" && ls ./*.db >/dev/null 2>&1 && tar czf "databases-$PART.tgz" ./*.db* && rm -f ./*.db ./*.db-wal ./*.db-shm)
rm -rf "$OUT/cache"

echo "=== test results"
grep -E '^\[  (FAILED|PASSED|SKIPPED) |^\[  FAILED  \]' "$LOG" | sort | uniq -c | head -40
echo "=== summary ($PART)"
printf '%s\n' "${summary[@]}"
