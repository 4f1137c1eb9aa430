#!/usr/bin/env python3
"""Device checks of per-op truth without stalls (issue 44 section 2;
`scripts/gpu_validate.sh BIN OUT stalls`).

  gpu_stall_check.py DB [--dry-run]

For every traced case of the run database (docs/metrics.md, "Op timer"):
  - kernels: how many kernels, copies and sets the CUPTI timer stored as children of the ops
    (docs/schema.md, version 16); a CUDA case traced with the CUPTI timer must have some;
  - trace_overhead_tpot: at batch 1 it must be at most 1.02;
  - stalls: per traced decode step the largest gap between consecutive ops (an op's start minus
    the latest end before it, on the op track, as the bundled query op_gaps computes gaps); a
    step whose largest gap is over 0.5 ms fails unless the untraced repetitions have the same
    step at least 0.5 ms over their median step (a stall the untraced run has too).

--dry-run (a CPU database, on a machine without a GPU): the same figures, no case is required to
have kernels, and the exit status is 0 whatever the figures say; it checks that the script reads
the database it will be given. Prints the figures as one JSON document and exits 1 when a check
fails, 2 on bad arguments. Every number comes from the database llmbench wrote.
"""
import json
import sqlite3
import statistics
import sys

MAX_OVERHEAD_TPOT = 1.02   # at batch 1
MAX_GAP_NS = 500_000       # 0.5 ms


def step_gaps(con, case_id):
    """{decode step: (largest gap ns, the op after it, its layer)} of the case's traced ops."""
    rows = con.execute(
        """
        SELECT step, name, layer, gap FROM (
          SELECT s.step, s.name, s.layer,
                 s.ts - MAX(s.ts + s.dur) OVER (PARTITION BY s.track_id, s.rep, s.step
                     ORDER BY s.ts, s.id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS gap
          FROM event AS s JOIN track AS t ON t.id = s.track_id
          WHERE t.case_id = ? AND t.type = 'thread' AND s.phase = 'decode'
            AND s.category IS NOT 'range')
        WHERE gap IS NOT NULL""", (case_id,)).fetchall()
    out = {}
    for step, name, layer, gap in rows:
        if step not in out or gap > out[step][0]:
            out[step] = (gap, name, layer)
    return out


def untraced_steps(con, case_id):
    """{decode step: [decode_ns of each untraced repetition]}."""
    out = {}
    for step, ns in con.execute(
            "SELECT st.step, st.decode_ns FROM bench_step AS st"
            " JOIN bench_sample AS sm ON sm.id = st.sample_id WHERE sm.case_id = ?", (case_id,)):
        out.setdefault(step, []).append(ns)
    return out


def check_case(con, case, dry_run):
    case_id, model, dtype, backend, batch, overhead = case
    kernels = con.execute(
        "SELECT COUNT(*) FROM event AS e JOIN track AS t ON t.id = e.track_id"
        " WHERE t.case_id = ? AND t.type = 'gpu'", (case_id,)).fetchone()[0]
    gaps = step_gaps(con, case_id)
    untraced = untraced_steps(con, case_id)
    all_untraced = [ns for v in untraced.values() for ns in v]
    median = statistics.median(all_untraced) if all_untraced else None
    stalls = []
    for step, (gap, next_op, layer) in sorted(gaps.items()):
        if gap <= MAX_GAP_NS:
            continue
        worst = max(untraced.get(step, [0]))
        shared = median is not None and worst - median >= MAX_GAP_NS
        stalls.append({"step": step, "gap_us": gap / 1e3, "before_op": next_op, "layer": layer,
                       "untraced_step_over_median_us":
                           None if median is None else (worst - median) / 1e3,
                       "untraced_has_it": shared})
    findings = []
    if backend == "cuda" and kernels == 0 and not dry_run:
        findings.append("no kernels stored (not traced with the CUPTI timer?)")
    if batch == 1 and overhead is not None and overhead > MAX_OVERHEAD_TPOT:
        findings.append(f"trace_overhead_tpot {overhead:.3f} > {MAX_OVERHEAD_TPOT}")
    for s in stalls:
        if not s["untraced_has_it"]:
            findings.append(f"step {s['step']}: gap {s['gap_us']:.0f} us before {s['before_op']}"
                            f" (layer {s['layer']}) that the untraced steps lack")
    largest = max(gaps.values(), default=(None, None, None))
    return {"case_id": case_id, "model": model, "dtype": dtype, "backend": backend,
            "batch": batch, "trace_overhead_tpot": overhead, "kernels": kernels,
            "traced_decode_steps": len(gaps),
            "largest_gap_us": None if largest[0] is None else largest[0] / 1e3,
            "steps_with_gap_over_0_5_ms": stalls, "findings": findings}


def main(argv):
    args = [a for a in argv[1:] if a != "--dry-run"]
    dry_run = len(args) != len(argv) - 1
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    con = sqlite3.connect(f"file:{args[0]}?mode=ro", uri=True)
    cases = con.execute(
        "SELECT c.id, c.model, c.dtype, c.backend, c.batch, c.trace_overhead_tpot"
        " FROM bench_case AS c WHERE c.status = 'ok'"
        " AND EXISTS (SELECT 1 FROM track AS t WHERE t.case_id = c.id) ORDER BY c.id").fetchall()
    report = {"dry_run": dry_run, "cases": [check_case(con, c, dry_run) for c in cases]}
    failed = [f"case {c['case_id']}: {f}" for c in report["cases"] for f in c["findings"]]
    if not cases:
        failed.append("no traced case in the database")
    report["failed"] = failed
    print(json.dumps(report, indent=1))
    return 0 if dry_run or not failed else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
