#!/usr/bin/env python3
"""A latency spike on purpose, for the serve_latency_spikes query (docs/queries.md).

Against a running `llmbench serve --db ...`: 4 streaming clients decode (short prompts), then one
request with a long prompt arrives, then, shortly after, a short request: its first token waits
for the long prompt's prefill step. Python standard library only; every request is bounded
(socket timeout) and the count is fixed.

  scripts/serve_spike.py --url http://127.0.0.1:PORT [--vocab 32000] [--long 1536]
"""
import argparse
import http.client
import json
import random
import threading
import time
import urllib.parse


def request(url, prompt, max_tokens, out, key):
    u = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=300)
    body = {"prompt": prompt, "max_tokens": max_tokens, "stream": True, "ignore_eos": True}
    t0 = time.monotonic()
    conn.request("POST", "/v1/completions", json.dumps(body), {"Content-Type": "application/json"})
    resp = conn.getresponse()
    first = None
    while True:
        line = resp.readline()
        if not line or line.strip() == b"data: [DONE]":
            break
        if line.startswith(b"data: ") and first is None:
            first = time.monotonic() - t0
    conn.close()
    out[key] = {"status": resp.status, "ttft_ms": round(1000 * first, 1) if first else None,
                "e2e_ms": round(1000 * (time.monotonic() - t0), 1)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--long", type=int, default=1536)
    a = ap.parse_args()
    rng = random.Random(0)
    ids = lambda n: [rng.randrange(a.vocab) for _ in range(n)]
    out, threads = {}, []

    def launch(key, prompt, max_tokens, delay_s):
        time.sleep(delay_s)
        t = threading.Thread(target=request, args=(a.url, prompt, max_tokens, out, key))
        t.start()
        threads.append(t)

    for i in range(4):
        launch(f"decode_{i}", ids(32), 48, 0.05)
    launch("long_prompt", ids(a.long), 8, 1.0)
    launch("short_after_long", ids(16), 8, 0.2)
    for t in threads:
        t.join()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
