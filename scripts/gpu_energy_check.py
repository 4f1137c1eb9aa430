#!/usr/bin/env python3
"""Device checks of energy per phase (issue 44 section 3; `scripts/gpu_validate.sh BIN OUT energy`).

  gpu_energy_check.py run DB
      The CUDA cases of a run database (docs/metrics.md, "Energy per phase"): every case has
      energy (NVML was found); each metered phase's watts lie between the idle power and the
      board's power limit (10% tolerance, as energy_check); and for each (model, dtype,
      prompt_len, max_new_tokens) the decode J per token of the largest batch is below batch 1's.
  gpu_energy_check.py serve LLMBENCH MODEL OUT_DIR
      Serves MODEL on CUDA with --db, drives it with `llmbench load` (concurrency 1 then 16),
      stops it with SIGTERM and checks its session: J per output token present, watts between
      idle and the limit, and serve's shutdown line.

Prints the figures as one JSON document and exits 1 when a check fails, 2 on bad arguments.
Nothing here is a figure of its own: every number comes from the database llmbench wrote.
"""
import json
import re
import signal
import sqlite3
import subprocess
import sys
import time

TOLERANCE = 0.10  # engine/bench/energy.h, kEnergyTolerance


def within(watts, idle, limit):
    """Findings for one phase's watts against the idle power and the limit ([] when inside)."""
    out = []
    if watts is None:
        return ["no watts"]
    if idle is not None and watts < idle * (1 - TOLERANCE):
        out.append(f"{watts:.1f} W < idle {idle:.1f} W")
    if limit is not None and watts > limit * (1 + TOLERANCE):
        out.append(f"{watts:.1f} W > limit {limit:.1f} W")
    return out


def check_run(db):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    con.row_factory = sqlite3.Row
    rows = con.execute(
        "SELECT id, model, dtype, batch, prompt_len, max_new_tokens, prefill_j_per_token,"
        " decode_j_per_token, prefill_w, decode_w, idle_w, power_limit_w, energy_update_ms,"
        " prefill_energy_ms, decode_energy_ms, energy_check FROM bench_case"
        " WHERE backend = 'cuda' AND status = 'ok' ORDER BY id").fetchall()
    cases, failures = [], []
    if not rows:
        failures.append("no ok CUDA case in " + db)
    for r in rows:
        c = dict(r)
        cases.append(c)
        name = f"case {r['id']} {r['model']} {r['dtype']} b{r['batch']} p{r['prompt_len']} n{r['max_new_tokens']}"
        if r["prefill_w"] is None:
            failures.append(f"{name}: no energy ({r['energy_check']})")
            continue
        for phase in ("prefill", "decode"):
            w = r[f"{phase}_w"]
            if phase == "decode" and r["max_new_tokens"] <= 1:
                continue
            for f in within(w, r["idle_w"], r["power_limit_w"]):
                # A phase shorter than the counter's update is smeared: reported, not failed.
                span = r[f"{phase}_energy_ms"]
                short = r["energy_update_ms"] is not None and span is not None and \
                    span < r["energy_update_ms"] * 5
                (cases[-1].setdefault("notes", []) if short else failures).append(
                    f"{name}: {phase} {f}")
    # Batching amortises the weight reads: a larger batch costs less per decode token.
    groups = {}
    for c in cases:
        if c["decode_j_per_token"] is not None:
            groups.setdefault((c["model"], c["dtype"], c["prompt_len"], c["max_new_tokens"]),
                              {})[c["batch"]] = c["decode_j_per_token"]
    ratios = {}
    for key, by_batch in groups.items():
        if 1 in by_batch and len(by_batch) > 1:
            top = max(by_batch)
            ratio = by_batch[top] / by_batch[1]
            ratios[f"{key[0]} {key[1]} p{key[2]} n{key[3]}: b{top}/b1"] = ratio
            if ratio >= 1:
                failures.append(f"{key}: decode J/token at batch {top} ({by_batch[top]:.4f}) is "
                                f"not below batch 1's ({by_batch[1]:.4f})")
    return {"cases": cases, "decode_j_per_token_ratio": ratios}, failures


def check_serve(llmbench, model, out):
    db = f"{out}/serve_energy.db"
    server = subprocess.Popen([llmbench, "serve", "--model", model, "--backend", "cuda", "--dtype",
                               "fp16", "--port", "0", "--host", "127.0.0.1", "--db", db],
                              stderr=subprocess.PIPE, text=True)
    lines, port, deadline = [], None, time.time() + 180
    while time.time() < deadline and port is None:
        line = server.stderr.readline()
        if not line:
            break
        lines.append(line)
        m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
        if m:
            port = int(m.group(1))
    failures = []
    if port is None:
        server.kill()
        return {"server": "".join(lines)}, ["server did not report its port"]
    load = subprocess.run([llmbench, "load", "--url", f"http://127.0.0.1:{port}", "--model", model,
                           "--concurrency", "1,16", "--num-requests", "32", "--input-len", "128",
                           "--output-len", "128", "--ignore-eos", "--quiet"],
                          capture_output=True, text=True, timeout=240)
    if load.returncode != 0:
        failures.append("load failed: " + load.stderr.strip()[-500:])
    server.send_signal(signal.SIGTERM)
    try:
        rest = server.communicate(timeout=60)[1]
    except subprocess.TimeoutExpired:
        server.kill()
        rest = server.communicate()[1]
    lines.append(rest)
    energy_line = [l for l in "".join(lines).splitlines() if l.startswith("serve: energy:")]
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    con.row_factory = sqlite3.Row
    row = con.execute("SELECT energy_j, energy_ms, energy_output_tokens, j_per_output_token, energy_w,"
                      " energy_update_ms, idle_w, power_limit_w, energy_note FROM serve_session"
                      " ORDER BY id DESC LIMIT 1").fetchone()
    session = dict(row) if row else {}
    if not energy_line:
        failures.append("serve printed no energy line")
    if not row or row["j_per_output_token"] is None:
        failures.append(f"serve stored no J per output token ({session.get('energy_note')})")
    else:
        failures += [f"serve {f}" for f in within(row["energy_w"], row["idle_w"], row["power_limit_w"])]
    return {"session": session, "line": energy_line}, failures


def main(argv):
    if len(argv) == 3 and argv[1] == "run":
        doc, failures = check_run(argv[2])
    elif len(argv) == 5 and argv[1] == "serve":
        doc, failures = check_serve(argv[2], argv[3], argv[4])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    doc["failures"] = failures
    print(json.dumps(doc, indent=1, default=str))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
