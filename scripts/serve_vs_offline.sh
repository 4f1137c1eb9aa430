#!/usr/bin/env bash
# Serving vs offline throughput on one machine, interleaved round by round (docs/serving.md,
# "Measured"). Each round:
#   offline: llmbench run --batch 16 --prompt-len 128 --max-new-tokens 64 (decode_tok_s = 16 / TPOT)
#   served:  a fresh server (--db), a warm-up round, then 16 concurrent requests (prompt 128 ids,
#            64 tokens, ignore_eos) streamed and not streamed; then 8 requests one at a time
#            (1 client) and by 4 clients with starts staggered STAGGER_MS (default 100) ms apart.
#   steps:   from the session's serve_step rows, the scheduler's host time (step - forward) of the
#            steps with 16 decode rows and nothing else, and its share of the step.
# Usage: scripts/serve_vs_offline.sh MODEL VOCAB [ROUNDS]   (e.g. small 32000 3)
# Writes /tmp/llmbench_serve_cmp/<model>_*; prints one JSON line per measurement. Every client
# call is bounded (timeout), and each server is stopped with SIGTERM.
set -euo pipefail
model=${1:-tiny}; vocab=${2:-256}; rounds=${3:-2}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/build/tools/llmbench
probe=$root/scripts/serve_probe.py
out=/tmp/llmbench_serve_cmp; mkdir -p "$out"
for r in $(seq 1 "$rounds"); do
  rm -f "$out/${model}_offline_$r.db"* "$out/${model}_serve_$r.db"*
  timeout 900 "$bin" run --model "$model" --batch 16 --prompt-len 128 --max-new-tokens 64 \
      --trace off --warmup 1 --repeat 3 --db "$out/${model}_offline_$r.db" --format csv --quiet \
      > "$out/${model}_offline_$r.csv"
  python3 -c 'import csv, json, sys; r = list(csv.DictReader(open(sys.argv[1])))[0]; print(json.dumps({"round": int(sys.argv[2]), "offline": {k: float(r[k]) for k in ("ttft_ms_p50", "tpot_ms_mean", "e2e_ms_p50", "decode_tok_s", "throughput_tok_s")}}))' "$out/${model}_offline_$r.csv" "$r"
  log="$out/${model}_serve_$r.log"
  "$bin" serve --model "$model" --port 0 --db "$out/${model}_serve_$r.db" 2> "$log" &
  pid=$!
  for _ in $(seq 1 120); do grep -q listening "$log" && break; sleep 0.5; done
  url="http://$(grep -o 'listening on http://[0-9.:]*' "$log" | sed 's/listening on http:\/\///')"
  p() { timeout 900 python3 "$probe" --url "$url" --vocab "$vocab" --json "$@"; }
  p --concurrency 16 --requests 16 > /dev/null   # warm-up
  echo "{\"round\": $r, \"c16_stream\": $(p --concurrency 16 --requests 16 --seed 1)}"
  echo "{\"round\": $r, \"c16_nostream\": $(p --concurrency 16 --requests 16 --seed 4 --no-stream)}"
  echo "{\"round\": $r, \"c1\": $(p --concurrency 1 --requests 8 --seed 2)}"
  echo "{\"round\": $r, \"c4_stagger\": $(p --concurrency 4 --requests 8 --stagger-ms "${STAGGER_MS:-100}" --seed 3)}"
  kill -TERM "$pid"; wait "$pid"
  echo "{\"round\": $r, \"steps16\": $("$bin" query "$out/${model}_serve_$r.db" "SELECT COUNT(*) AS n, median(dur_ns) / 1e6 AS step_ms_p50, median(dur_ns - forward_ns) / 1e3 AS host_us_p50, CAST(SUM(dur_ns - forward_ns) AS REAL) / SUM(dur_ns) AS host_share FROM serve_step WHERE decode_rows = 16 AND prefill_tokens = 0" --format json)}"
done
