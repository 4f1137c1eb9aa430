#!/usr/bin/env python3
"""Device check of CUDA-graph decode (issue 44 section 1; `scripts/gpu_validate.sh BIN OUT graphs`).

  gpu_graphs_check.py DB [--dry-run]
  gpu_graphs_check.py --self-test

DB is a run database with cases run with `--cuda-graphs off,on`. Every case with graphs on is
paired with the case of the same model, dtype, batch, prompt length, new tokens and other
variants with graphs off; for each pair:
  - tokens: the generated ids (bench_case.generated_ids) must be equal;
  - tpot: mean and p50 TPOT of both and the ratio on / off (printed, not judged: whether graphs
    win is what the lead decides from these figures);
  - both cases must have status ok, and at least one pair must exist;
  - graphs: the graphs-on case's cuda_graph_steps, cuda_graph_eager_steps and cuda_graph_note
    (schema version 18) are printed; a note is not a failure by itself;
  - traced pairs (trace ops, the CUPTI timer): the graphs-on case's traced decode steps must have
    replayed graphs (cuda_graph_traced_steps > 0), no replayed kernel may be unmatched
    (trace_unmatched_graph_nodes = 0), and every decode op must have as many kernels, copies and
    sets stored under it as in the graphs-off case (the op of each graph node, recorded at
    capture, is the op that launched the kernel eagerly).
Prints one JSON document and exits 1 when a check fails, 2 on bad arguments.

--dry-run (a CPU database, on a machine without a GPU, where `--cuda-graphs on` is refused so
there are no pairs): the same reading and printing, exit status 0 whatever the figures say.
--self-test: builds a small database in memory with two pairs (one whose tokens differ) and
checks that the script finds exactly that; exit 0 when it does.
Every number comes from the database llmbench wrote.
"""
import json
import sqlite3
import sys


def key_of(row):
    """The pairing key: the case without its cuda_graphs variant."""
    variants = json.loads(row["variants"] or "{}")
    graphs = variants.pop("cuda_graphs", "off") == "on"
    key = (row["model"], row["dtype"], row["batch"], row["prompt_len"], row["max_new_tokens"],
           json.dumps(variants, sort_keys=True))
    return key, graphs


def check(con):
    con.row_factory = sqlite3.Row
    rows = con.execute(
        "SELECT id, model, dtype, batch, prompt_len, max_new_tokens, variants, status,"
        " tpot_ms_mean, tpot_ms_p50, generated_ids, trace, cuda_graph_steps,"
        " cuda_graph_eager_steps, cuda_graph_traced_steps, cuda_graph_note,"
        " trace_unmatched_graph_nodes FROM bench_case ORDER BY id").fetchall()
    cases = {}
    for row in rows:
        key, graphs = key_of(row)
        cases.setdefault(key, {})[graphs] = row
    pairs, failures = [], []
    for key, both in cases.items():
        if True not in both:
            continue
        on = both[True]
        off = both.get(False)
        name = "%s %s b%d p%d n%d %s" % key
        if off is None:
            failures.append("%s: graphs on without a graphs-off case to compare" % name)
            continue
        pair = {"case": name, "case_ids": [off["id"], on["id"]],
                "status": [off["status"], on["status"]],
                "tpot_ms_mean": [off["tpot_ms_mean"], on["tpot_ms_mean"]],
                "tpot_ms_p50": [off["tpot_ms_p50"], on["tpot_ms_p50"]]}
        if off["tpot_ms_mean"] and on["tpot_ms_mean"]:
            pair["tpot_ratio_on_off"] = on["tpot_ms_mean"] / off["tpot_ms_mean"]
        if off["status"] != "ok" or on["status"] != "ok":
            failures.append("%s: status %s (off) / %s (on)" % (name, off["status"], on["status"]))
        same = off["generated_ids"] == on["generated_ids"] and off["generated_ids"] is not None
        pair["same_tokens"] = same
        if not same:
            failures.append("%s: graphs on generated other tokens than graphs off" % name)
        for col in ("cuda_graph_steps", "cuda_graph_eager_steps", "cuda_graph_note"):
            pair[col] = on[col]
        if on["trace"] != "off" and off["trace"] != "off":
            check_traced(con, name, off, on, pair, failures)
        pairs.append(pair)
    if not pairs:
        failures.append("no case ran with --cuda-graphs on beside one with it off")
    return {"cases": len(rows), "pairs": pairs, "failures": failures}, failures


def kernels_per_op(con, case_id):
    """{decode op name: device records stored under its events} of one case."""
    return dict(con.execute(
        "SELECT o.name, COUNT(*) FROM event AS k JOIN event AS o ON o.id = k.parent_id"
        " WHERE o.case_id = ? AND o.phase = 'decode'"
        " AND k.category IN ('kernel', 'gpu_memcpy', 'gpu_memset') GROUP BY o.name",
        (case_id,)).fetchall())


def check_traced(con, name, off, on, pair, failures):
    """A traced pair: the graphs-on case's replayed kernels stored under the eager ops."""
    pair["cuda_graph_traced_steps"] = on["cuda_graph_traced_steps"]
    pair["trace_unmatched_graph_nodes"] = on["trace_unmatched_graph_nodes"]
    if not on["cuda_graph_traced_steps"]:
        failures.append("%s: no traced decode step replayed a graph (%s)"
                        % (name, on["cuda_graph_note"]))
    if on["trace_unmatched_graph_nodes"]:
        failures.append("%s: %s replayed kernels matched no op"
                        % (name, on["trace_unmatched_graph_nodes"]))
    eager, graphs = kernels_per_op(con, off["id"]), kernels_per_op(con, on["id"])
    differ = sorted(op for op in set(eager) | set(graphs) if eager.get(op) != graphs.get(op))
    pair["decode_ops_with_kernels"] = [len(eager), len(graphs)]
    pair["ops_whose_kernels_differ"] = [[op, eager.get(op), graphs.get(op)] for op in differ[:8]]
    if not eager:
        failures.append("%s: the graphs-off case stored no kernels (not the CUPTI timer?)" % name)
    elif differ:
        failures.append("%s: %d decode ops have other kernel counts with graphs on (%s)"
                        % (name, len(differ), ", ".join(differ[:4])))


def self_test():
    con = sqlite3.connect(":memory:")
    con.execute("CREATE TABLE bench_case (id INTEGER PRIMARY KEY, model TEXT, dtype TEXT,"
                " batch INTEGER, prompt_len INTEGER, max_new_tokens INTEGER, variants TEXT,"
                " status TEXT, tpot_ms_mean REAL, tpot_ms_p50 REAL, generated_ids TEXT,"
                " trace TEXT, cuda_graph_steps INTEGER, cuda_graph_eager_steps INTEGER,"
                " cuda_graph_traced_steps INTEGER, cuda_graph_note TEXT,"
                " trace_unmatched_graph_nodes INTEGER)")
    con.execute("CREATE TABLE event (id INTEGER PRIMARY KEY, name TEXT, category TEXT,"
                " parent_id INTEGER, case_id INTEGER, phase TEXT)")
    base = '{"kv_cache":"prealloc","logits":"device","qkv":"fused","timer":"device"}'
    on = base[:-1] + ',"cuda_graphs":"on"}'
    # Batch 1 and 16 untraced (16's tokens differ); batch 2 traced twice: in pair (5, 6) the
    # replay matches, in pair (7, 8) one kernel went to another op and one was unmatched.
    rows = [(1, base, 6.0, "[[1,2]]", "off", None), (1, on, 5.4, "[[1,2]]", "off", (20, 2, 0, 0)),
            (16, base, 8.0, "[[1,2]]", "off", None), (16, on, 7.0, "[[1,3]]", "off", (20, 2, 0, 0)),
            (2, base, 6.0, "[[1,2]]", "ops", None), (2, on, 5.5, "[[1,2]]", "ops", (20, 2, 8, 0)),
            (3, base, 6.0, "[[1,2]]", "ops", None), (3, on, 5.5, "[[1,2]]", "ops", (20, 2, 8, 1))]
    for i, (batch, variants, tpot, ids, trace, graphs) in enumerate(rows, 1):
        steps, eager, traced, unmatched = graphs or (None, None, None, None)
        con.execute("INSERT INTO bench_case VALUES (?, 'llama2-7b', 'fp16', ?, 128, 128, ?,"
                    " 'ok', ?, ?, ?, ?, ?, ?, ?, NULL, ?)",
                    (i, batch, variants, tpot, tpot, ids, trace, steps, eager, traced, unmatched))
    # Each traced case: a decode op "gemv" with two kernels and "argmax" with one; case 8 gives
    # argmax's kernel to gemv.
    next_id = [1]

    def add(name, category, parent, case_id, phase):
        next_id[0] += 1
        con.execute("INSERT INTO event VALUES (?, ?, ?, ?, ?, ?)",
                    (next_id[0], name, category, parent, case_id, phase))
        return next_id[0]
    for case_id in (5, 6, 7, 8):
        gemv = add("gemv", "gemm", None, case_id, "decode")
        argmax = add("argmax", "sample", None, case_id, "decode")
        for parent in (gemv, gemv, gemv if case_id == 8 else argmax):
            add("k", "kernel", parent, None, None)
    doc, failures = check(con)
    pairs = {p["case_ids"][1]: p for p in doc["pairs"]}
    ok = (len(doc["pairs"]) == 4 and pairs[2]["same_tokens"] and not pairs[4]["same_tokens"]
          and abs(pairs[2]["tpot_ratio_on_off"] - 0.9) < 1e-12
          and pairs[6]["ops_whose_kernels_differ"] == []
          and pairs[8]["ops_whose_kernels_differ"] == [["argmax", 1, None], ["gemv", 2, 3]]
          and len(failures) == 3 and "b16" in failures[0]
          and all("b3" in f for f in failures[1:]) and "matched no op" in failures[1])
    print(json.dumps(doc, indent=1))
    print("self-test", "ok" if ok else "FAILED")
    return 0 if ok else 1


def main(argv):
    if "--self-test" in argv[1:]:
        return self_test()
    args = [a for a in argv[1:] if a != "--dry-run"]
    dry_run = len(args) != len(argv) - 1
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    doc, failures = check(sqlite3.connect("file:%s?mode=ro" % args[0], uri=True))
    print(json.dumps(doc, indent=1))
    return 0 if dry_run or not failures else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
