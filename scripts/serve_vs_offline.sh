#!/usr/bin/env bash
# Serving vs offline throughput on one machine, interleaved (docs/serving.md, "Measured"):
#   offline: llmbench run --batch 16 --prompt-len 128 --max-new-tokens 64 (decode tok/s = 16 / TPOT)
#   served:  16 concurrent streaming requests (prompt 128 ids, 64 tokens, ignore_eos), a warm-up
#            round first; then 4 clients with staggered starts vs 1 client, 8 requests each.
# Usage: scripts/serve_vs_offline.sh MODEL VOCAB [ROUNDS]   (e.g. small 32000 2)
# Writes /tmp/llmbench_serve_cmp/<model>_*.{db,json}; prints one JSON line per measurement.
set -euo pipefail
model=${1:-tiny}; vocab=${2:-256}; rounds=${3:-2}
bin=$(cd "$(dirname "$0")/.." && pwd)/build/tools/llmbench
probe=$(cd "$(dirname "$0")" && pwd)/serve_probe.py
out=/tmp/llmbench_serve_cmp; mkdir -p "$out"
for r in $(seq 1 "$rounds"); do
  "$bin" run --model "$model" --batch 16 --prompt-len 128 --max-new-tokens 64 --trace off \
      --warmup 1 --repeat 3 --db "$out/${model}_offline.db" --format csv --quiet \
      > "$out/${model}_offline_$r.csv"
  python3 -c 'import csv, json, sys; r = list(csv.DictReader(open(sys.argv[1])))[0]; print(json.dumps({"round": int(sys.argv[2]), "offline": {k: r[k] for k in ("ttft_ms", "tpot_ms", "e2e_ms", "decode_tok_s", "throughput_tok_s")}}))' "$out/${model}_offline_$r.csv" "$r"
  log="$out/${model}_serve_$r.log"
  "$bin" serve --model "$model" --port 0 --db "$out/${model}_serve.db" 2> "$log" &
  pid=$!
  for _ in $(seq 1 120); do grep -q listening "$log" && break; sleep 0.5; done
  url="http://$(grep -o 'listening on http://[0-9.:]*' "$log" | sed 's/listening on http:\/\///')"
  python3 "$probe" --url "$url" --concurrency 16 --requests 16 --vocab "$vocab" --json > /dev/null
  echo "{\"round\": $r, \"c16\": $(python3 "$probe" --url "$url" --concurrency 16 --requests 16 --vocab "$vocab" --seed 1 --json)}"
  echo "{\"round\": $r, \"c1\": $(python3 "$probe" --url "$url" --concurrency 1 --requests 8 --vocab "$vocab" --seed 2 --json)}"
  echo "{\"round\": $r, \"c4_stagger\": $(python3 "$probe" --url "$url" --concurrency 4 --requests 8 --stagger-ms 100 --vocab "$vocab" --seed 3 --json)}"
  kill -TERM "$pid"; wait "$pid"
done
