#!/usr/bin/env python3
"""Checks `llmbench serve --backend cuda` end to end (run by scripts/gpu_validate.sh).

Starts the server on 127.0.0.1 with an ephemeral port, sends each prompt alone, then all of them
at once, and checks that every request gets the same greedy tokens either way (continuous
batching must not change a request's tokens). Prints the timings it saw and exits non-zero on a
mismatch or an error. Bounded: 120 s for the server to come up, 60 s per request.
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
server = subprocess.Popen([llmbench, "serve", "--model", model, "--backend", backend, "--port", "0",
                           "--host", "127.0.0.1"], stderr=subprocess.PIPE, text=True)
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
base = f"http://127.0.0.1:{port}"


def complete(prompt_ids, max_tokens):
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


try:
    for _ in range(240):
        try:
            urllib.request.urlopen(base + "/health", timeout=1).read()
            break
        except Exception:
            time.sleep(0.5)
    prompts = [[(7 * i + 3 * j) % 199 + 1 for j in range(16 + 20 * i)] for i in range(6)]
    alone = [complete(p, 24) for p in prompts]
    with concurrent.futures.ThreadPoolExecutor(len(prompts)) as pool:
        together = list(pool.map(lambda p: complete(p, 24), prompts))
    bad = [i for i in range(len(prompts)) if alone[i][0] != together[i][0]]
    print(f"serve --backend {backend} {model}: {len(prompts)} requests, alone "
          f"{sum(t for _, t in alone):.3f} s in sequence, together "
          f"{max(t for _, t in together):.3f} s; token mismatches: {bad}")
    sys.exit(1 if bad else 0)
finally:
    server.terminate()
    try:
        server.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.kill()
