#!/usr/bin/env python3
"""Ratios of scripts/serve_vs_offline.sh's JSON lines (stdin), per round and their medians.

  (a) served output tok/s (16 requests at once, whole run incl. prefill) over the offline
      decode rate (16 / TPOT, the issue's ratio) and over the offline throughput (16 x 64 / e2e,
      also incl. prefill); streamed and not streamed; and the engine's own 16-row decode step
      rate (16 / median step of serve_step) over the offline decode rate.
  (b) 4 staggered clients' output tok/s over 1 client's (8 requests each).
  (c) host time of the 16-row decode steps: median us and share of the step time.
"""
import json
import statistics
import sys
from collections import defaultdict

rounds = defaultdict(dict)
pending = ""  # `llmbench query --format json` spreads the steps16 object over several lines
for line in sys.stdin:
    pending += line
    try:
        j = json.loads(pending)
    except json.JSONDecodeError:
        continue
    pending = ""
    r = j.pop("round")
    rounds[r].update(j)

rows = []
for r, m in sorted(rounds.items()):
    off, s16 = m["offline"], m["steps16"][0]
    engine_decode = 16 / (s16["step_ms_p50"] / 1e3)
    rows.append({
        "round": r,
        "a_stream_over_offline_decode": m["c16_stream"]["output_tok_s"] / off["decode_tok_s"],
        "a_nostream_over_offline_decode": m["c16_nostream"]["output_tok_s"] / off["decode_tok_s"],
        "a_stream_over_offline_throughput": m["c16_stream"]["output_tok_s"] / off["throughput_tok_s"],
        "a_nostream_over_offline_throughput": m["c16_nostream"]["output_tok_s"] / off["throughput_tok_s"],
        "a_engine_16row_decode_over_offline_decode": engine_decode / off["decode_tok_s"],
        "b_c4_stagger_over_c1": m["c4_stagger"]["output_tok_s"] / m["c1"]["output_tok_s"],
        "c_host_us_p50_16rows": s16["host_us_p50"],
        "c_host_share_16rows": s16["host_share"],
    })
for row in rows:
    print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()}))
keys = [k for k in rows[0] if k != "round"]
print(json.dumps({"median": {k: round(statistics.median(r[k] for r in rows), 4) for k in keys}}))
