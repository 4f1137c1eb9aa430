#!/usr/bin/env python3
"""Checks `llmbench serve --backend cuda` end to end (run by scripts/gpu_validate.sh).

Starts the server on 127.0.0.1 with an ephemeral port, sends each prompt alone, then all of them
at once, and checks that every request gets the same greedy tokens either way (continuous
batching must not change a request's tokens). It does this twice, with automatic prefix caching
on (the default) and off (`--no-prefix-caching`); the prompts include six that share a 48-token
prefix, so with the cache on the later ones reuse the first one's KV blocks, and the second pass
of every prompt is a full cache hit. Every request must get the same tokens in all four passes.
Prints the timings it saw and exits non-zero on a mismatch or an error. Bounded: 120 s for each
server to come up, 60 s per request.
"""
import concurrent.futures
import json
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request

llmbench, model = sys.argv[1], sys.argv[2]
backend = sys.argv[3] if len(sys.argv) > 3 else "cuda"


def start_server(extra):
    server = subprocess.Popen([llmbench, "serve", "--model", model, "--backend", backend, "--port",
                               "0", "--host", "127.0.0.1", *extra], stderr=subprocess.PIPE, text=True)
    port = None
    deadline = time.time() + 120
    lines = []
    while time.time() < deadline and port is None:
        line = server.stderr.readline()
        if not line:
            break
        lines.append(line)
        m = re.search(r"127\.0\.0\.1:(\d+)", line)
        if m:
            port = int(m.group(1))
    if port is None:
        server.kill()
        sys.exit("server did not report its port:\n" + "".join(lines))
    return server, f"http://127.0.0.1:{port}"


def complete(base, prompt_ids, max_tokens):
    body = json.dumps({"model": model, "prompt": prompt_ids, "max_tokens": max_tokens,
                       "temperature": 0, "ignore_eos": True}).encode()
    req = urllib.request.Request(base + "/v1/completions", data=body,
                                 headers={"Content-Type": "application/json"})
    t0 = time.time()
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            out = json.load(r)
    except urllib.error.HTTPError as e:
        sys.exit(f"HTTP {e.code}: {e.read().decode(errors='replace')}")
    return out["choices"][0]["token_ids"], time.time() - t0


def passes(extra, prompts):
    """Each prompt alone, then all together, on a fresh server started with `extra` flags."""
    server, base = start_server(extra)
    try:
        for _ in range(240):
            try:
                urllib.request.urlopen(base + "/health", timeout=1).read()
                break
            except Exception:
                time.sleep(0.5)
        alone = [complete(base, p, 24) for p in prompts]
        with concurrent.futures.ThreadPoolExecutor(len(prompts)) as pool:
            together = list(pool.map(lambda p: complete(base, p, 24), prompts))
        text = urllib.request.urlopen(base + "/metrics", timeout=5).read().decode()
        m = re.search(r"^llmbench_prefix_cache_hits_total(?:\{[^}]*\})? ([0-9.e+]+)$", text, re.M)
        hits = float(m.group(1)) if m else -1.0
        return alone, together, hits
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()


distinct = [[(7 * i + 3 * j) % 199 + 1 for j in range(16 + 20 * i)] for i in range(6)]
shared = [(11 * j) % 197 + 2 for j in range(48)]
sharing = [shared + [(13 * i + 5 * j) % 191 + 3 for j in range(8 + 9 * i)] for i in range(6)]
prompts = distinct + sharing
runs = {}
for name, extra in (("prefix caching on", []), ("prefix caching off", ["--no-prefix-caching"])):
    alone, together, hits = passes(extra, prompts)
    runs[name] = (alone, together)
    print(f"serve --backend {backend} {model}, {name}: {len(prompts)} requests, alone "
          f"{sum(t for _, t in alone):.3f} s in sequence, together "
          f"{max(t for _, t in together):.3f} s; prefix-cache hit tokens {hits:.0f}")
    if (hits > 0) != (not extra):
        sys.exit(f"{name}: llmbench_prefix_cache_hits_total is {hits:.0f} on /metrics")
reference = runs["prefix caching off"][0]
bad = []
for name, (alone, together) in runs.items():
    for label, got in (("alone", alone), ("together", together)):
        for i in range(len(prompts)):
            if got[i][0] != reference[i][0]:
                bad.append(f"{name}/{label}/prompt {i}")
print(f"token mismatches against caching off, alone: {bad}")
sys.exit(1 if bad else 0)
