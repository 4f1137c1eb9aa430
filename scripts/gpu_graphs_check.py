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
  - both cases must have status ok, and at least one pair must exist.
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
        " tpot_ms_mean, tpot_ms_p50, generated_ids FROM bench_case ORDER BY id").fetchall()
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
        pairs.append(pair)
    if not pairs:
        failures.append("no case ran with --cuda-graphs on beside one with it off")
    return {"cases": len(rows), "pairs": pairs, "failures": failures}, failures


def self_test():
    con = sqlite3.connect(":memory:")
    con.execute("CREATE TABLE bench_case (id INTEGER PRIMARY KEY, model TEXT, dtype TEXT,"
                " batch INTEGER, prompt_len INTEGER, max_new_tokens INTEGER, variants TEXT,"
                " status TEXT, tpot_ms_mean REAL, tpot_ms_p50 REAL, generated_ids TEXT)")
    base = '{"kv_cache":"prealloc","logits":"device","qkv":"fused","timer":"device"}'
    on = base[:-1] + ',"cuda_graphs":"on"}'
    rows = [(1, base, 6.0, "[[1,2]]"), (1, on, 5.4, "[[1,2]]"),
            (16, base, 8.0, "[[1,2]]"), (16, on, 7.0, "[[1,3]]")]
    for i, (batch, variants, tpot, ids) in enumerate(rows, 1):
        con.execute("INSERT INTO bench_case VALUES (?, 'llama2-7b', 'fp16', ?, 128, 128, ?,"
                    " 'ok', ?, ?, ?)", (i, batch, variants, tpot, tpot, ids))
    doc, failures = check(con)
    ok = (len(doc["pairs"]) == 2 and doc["pairs"][0]["same_tokens"]
          and not doc["pairs"][1]["same_tokens"] and len(failures) == 1
          and "b16" in failures[0] and abs(doc["pairs"][0]["tpot_ratio_on_off"] - 0.9) < 1e-12)
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
