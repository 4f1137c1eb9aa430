#!/usr/bin/env python3
"""The two serving targets of issue 32 on one backend, with `llmbench serve` and `llmbench load`:

  (i)  16 requests arriving together (prompt 128 token ids, 128 new tokens, ignore_eos): their
       decode rate, 16 / the mean per-request TPOT ((E2EL - TTFT) / (tokens - 1), client clock),
       against the offline batch-16 decode rate of `llmbench run --batch 16 --prompt-len 128
       --max-new-tokens 128` (decode_tok_s = 16 / mean TPOT): like for like, both count decode
       steps only. Target >= 0.8. Beside it: the server's own 16-row decode steps
       (serve --db, serve_step) as a rate, and the whole-run rates (served output tok/s over the
       offline throughput_tok_s, prefill included on both sides).
  (ii) one client sending requests in sequence (concurrency 1) against 4 clients (concurrency 4),
       same requests: output tok/s ratio. Target >= 3.

One server for all levels, started here on 127.0.0.1 with an ephemeral port and prefix caching
off (the levels reuse the seeded prompts; a cached prefix would hide prefills), stopped at the end
(SIGTERM, SIGKILL after 15 s). Every command has a time limit. It does not check tokens
(scripts/gpu_serve_check.py does) and is not a sweep.

  python3 scripts/gpu_serve_load.py LLMBENCH OUT_DIR [--model tinyllama-1.1b] [--dtype fp16]
      [--backend cuda] [--prompt-len 128] [--gen-len 128] [--requests 8]

Writes OUT_DIR/serve_load.json and prints one table; exit 0 when every command ran and was read
(whether or not a target is met; a ratio whose divisor came out 0 prints as '-'), 1 otherwise.
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time


def run_json(cmd, timeout_s, what):
    """Runs an llmbench command that prints JSON on stdout; returns the parsed document."""
    print("gpu_serve_load: %s: %s" % (what, " ".join(cmd)), flush=True)
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise RuntimeError("%s: no answer within %d s" % (what, timeout_s))
    if p.returncode != 0:
        raise RuntimeError("%s: exit code %d: %s" % (what, p.returncode, p.stderr.strip()[-400:]))
    print("gpu_serve_load: %s took %.1f s" % (what, time.monotonic() - t0), flush=True)
    return json.loads(p.stdout)


class Server:
    """`llmbench serve` on 127.0.0.1:0 in its own process group; its stderr goes to a log file."""

    def __init__(self, args):
        self.log_path = os.path.join(args.out, "serve.log")
        self.db = os.path.join(args.out, "serve_steps.db")
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(self.db + suffix):
                os.remove(self.db + suffix)
        cmd = [args.llmbench, "serve", "--backend", args.backend, "--model", args.model,
               "--dtype", args.dtype, "--host", "127.0.0.1", "--port", "0",
               "--no-prefix-caching", "--db", self.db]
        print("gpu_serve_load: server: %s" % " ".join(cmd), flush=True)
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=self.log,
                                     start_new_session=True)
        self.url = self._wait_listening(args.server_timeout_s)

    def _wait_listening(self, timeout_s):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("server exited with code %d: %s"
                                   % (self.proc.returncode, self.tail()))
            with open(self.log_path) as f:
                m = re.search(r"listening on (http://127\.0\.0\.1:\d+)", f.read())
            if m:
                return m.group(1)
            time.sleep(0.2)
        raise RuntimeError("server not listening within %d s: %s" % (timeout_s, self.tail()))

    def tail(self):
        with open(self.log_path) as f:
            return f.read().strip()[-400:]

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.close()
        return self.proc.returncode


def level(doc, concurrency):
    for lv in doc["levels"]:
        if lv["concurrency"] == concurrency:
            return lv
    raise RuntimeError("no level at concurrency %d in load's output" % concurrency)


def load_cmd(args, url, concurrency, requests, warmup):
    return [args.llmbench, "load", "--url", url, "--model", args.model,
            "--concurrency", concurrency, "--num-requests", str(requests),
            "--warmup-requests", str(warmup), "--input-len", str(args.prompt_len),
            "--output-len", str(args.gen_len), "--ignore-eos",
            "--db", args.db, "--format", "json", "--quiet"]


def measure(args, doc):
    """The offline case, then the server and its two loads; fills doc as figures arrive."""
    off = run_json([args.llmbench, "run", "--backend", args.backend, "--model", args.model,
                    "--dtype", args.dtype, "--batch", "16", "--prompt-len", str(args.prompt_len),
                    "--max-new-tokens", str(args.gen_len), "--trace", "off", "--warmup", "1",
                    "--repeat", "3", "--db", args.db, "--format", "json", "--quiet"],
                   args.step_timeout_s, "offline batch 16")
    case = off["cases"][0] if isinstance(off, dict) and "cases" in off else off[0]
    doc["offline"] = {k: case[k] for k in ("tpot_ms_mean", "tpot_ms_p50", "decode_tok_s",
                                            "throughput_tok_s", "ttft_ms_p50")}
    server = Server(args)
    try:
        doc["url"] = server.url
        c16 = run_json(load_cmd(args, server.url, "16", 16, 16), args.step_timeout_s,
                       "16 requests together")
        doc["c16"] = pick(level(c16, 16))
        both = run_json(load_cmd(args, server.url, "1,4", args.requests, 2),
                        args.step_timeout_s, "1 client, then 4 clients")
        doc["c1"] = pick(level(both, 1))
        doc["c4"] = pick(level(both, 4))
    finally:
        doc["server_exit_code"] = server.stop()
    steps = run_json([args.llmbench, "query", server.db,
                      "SELECT COUNT(*) AS n, median(dur_ns) / 1e6 AS step_ms_p50, "
                      "median(forward_ns) / 1e6 AS forward_ms_p50 FROM serve_step "
                      "WHERE decode_rows = 16 AND prefill_tokens = 0", "--format", "json"],
                     60, "the server's 16-row decode steps")
    doc["engine_16row_steps"] = steps[0] if steps else None


def pick(lv):
    keys = ("requests", "ok", "failed", "duration_s", "output_tokens", "output_tok_s",
            "ttft_ms_p50", "tpot_ms_mean", "tpot_ms_p50", "e2el_ms_p50")
    return {k: lv[k] for k in keys}  # a renamed field is an error, not a silent '-'


def ratios(doc):
    """The targets' ratios from what was measured (None where a side is missing)."""
    def div(a, b):
        return a / b if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b else None
    off, c16 = doc.get("offline", {}), doc.get("c16", {})
    served_decode = div(16e3, c16.get("tpot_ms_mean"))
    steps = doc.get("engine_16row_steps") or {}
    engine_decode = div(16e3, steps.get("step_ms_p50"))
    return {
        "served_decode_tok_s": served_decode,
        "i_served_over_offline_decode": div(served_decode, off.get("decode_tok_s")),
        "engine_16row_decode_tok_s": engine_decode,
        "engine_16row_over_offline_decode": div(engine_decode, off.get("decode_tok_s")),
        "whole_run_served_over_offline": div(c16.get("output_tok_s"),
                                             off.get("throughput_tok_s")),
        "ii_c4_over_c1": div(doc.get("c4", {}).get("output_tok_s"),
                             doc.get("c1", {}).get("output_tok_s")),
    }


def fmt(v, spec=".3f"):
    return format(v, spec) if isinstance(v, (int, float)) else "-"


def print_summary(doc):
    r, off = doc["ratios"], doc.get("offline", {})
    c16, c1, c4 = doc.get("c16", {}), doc.get("c1", {}), doc.get("c4", {})
    print("=== serving targets (%s %s on %s, prompt %d, %d new)"
          % (doc["model"], doc["dtype"], doc["backend"], doc["prompt_len"], doc["gen_len"]))
    rows = [
        ("offline b16: TPOT mean ms / decode tok/s", "%s / %s" % (
            fmt(off.get("tpot_ms_mean")), fmt(off.get("decode_tok_s"), ".1f")), ""),
        ("served 16 together: TPOT mean ms / decode tok/s", "%s / %s" % (
            fmt(c16.get("tpot_ms_mean")), fmt(r["served_decode_tok_s"], ".1f")), ""),
        ("(i) served / offline decode rate", fmt(r["i_served_over_offline_decode"]),
         "target >= 0.8: %s" % met(r["i_served_over_offline_decode"], 0.8)),
        ("engine's 16-row decode step / offline decode rate",
         fmt(r["engine_16row_over_offline_decode"]), ""),
        ("whole run: served output tok/s / offline throughput",
         fmt(r["whole_run_served_over_offline"]), ""),
        ("1 client / 4 clients: output tok/s", "%s / %s" % (
            fmt(c1.get("output_tok_s"), ".1f"), fmt(c4.get("output_tok_s"), ".1f")), ""),
        ("(ii) 4 clients / 1 client", fmt(r["ii_c4_over_c1"]),
         "target >= 3: %s" % met(r["ii_c4_over_c1"], 3.0)),
    ]
    for name, value, note in rows:
        print("%-52s %18s  %s" % (name, value, note))
    for e in doc["errors"]:
        print("  error: " + e)


def met(v, target):
    return "-" if v is None else ("met" if v >= target else "missed")


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("llmbench", help="the llmbench binary")
    p.add_argument("out", help="output directory")
    p.add_argument("--model", default="tinyllama-1.1b")
    p.add_argument("--dtype", default="fp16")
    p.add_argument("--backend", default="cuda")
    p.add_argument("--prompt-len", type=int, default=128)
    p.add_argument("--gen-len", type=int, default=128)
    p.add_argument("--requests", type=int, default=8, help="requests per level of (ii)")
    p.add_argument("--step-timeout-s", type=int, default=120)
    p.add_argument("--server-timeout-s", type=int, default=120)
    args = p.parse_args(argv)
    if args.prompt_len < 1 or args.gen_len < 2 or args.requests < 4:
        p.error("--prompt-len >= 1, --gen-len >= 2 and --requests >= 4 are required")
    args.llmbench = os.path.abspath(args.llmbench)
    os.makedirs(args.out, exist_ok=True)
    args.db = os.path.join(args.out, "serve_load.db")
    doc = {"tool": "scripts/gpu_serve_load.py", "model": args.model, "dtype": args.dtype,
           "backend": args.backend, "prompt_len": args.prompt_len, "gen_len": args.gen_len,
           "requests_per_level_ii": args.requests, "errors": []}
    try:
        measure(args, doc)
    except (RuntimeError, OSError, ValueError, KeyError, IndexError) as exc:
        doc["errors"].append("%s: %s" % (type(exc).__name__, exc))
    doc["ratios"] = ratios(doc)
    with open(os.path.join(args.out, "serve_load.json"), "w") as f:
        json.dump(doc, f, indent=1)
    print_summary(doc)
    return 0 if not doc["errors"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
