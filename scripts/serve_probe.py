#!/usr/bin/env python3
"""A small serving probe for `llmbench serve` (until `llmbench load`, issue 18, exists).

Sends streaming /v1/completions requests with token-id prompts and ignore_eos, and reports
output tokens/s over the whole run, TTFT and the decode-phase rate, from client-side
time.monotonic() stamps. Python standard library only.

  scripts/serve_probe.py --url http://127.0.0.1:8000 --concurrency 16 --requests 16 \
      --prompt-len 128 --max-tokens 64 [--stagger-ms 0] [--model NAME] [--json]

--concurrency C runs C client threads; each takes the next request when its previous one is
done. --stagger-ms S delays the start of client i by i * S ms (staggered arrivals).
"""
import argparse
import http.client
import json
import random
import threading
import time
import urllib.parse


def one_request(url, model, prompt, max_tokens, stream=True):
    u = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=600)
    body = {"prompt": prompt, "max_tokens": max_tokens, "temperature": 0, "stream": stream,
            "ignore_eos": True}
    if stream:
        body["stream_options"] = {"include_usage": True}
    if model:
        body["model"] = model
    t0 = time.monotonic()
    conn.request("POST", "/v1/completions", json.dumps(body),
                 {"Content-Type": "application/json"})
    resp = conn.getresponse()
    if resp.status != 200:
        raise RuntimeError(f"HTTP {resp.status}: {resp.read()[:200]!r}")
    if not stream:  # one response at the end: every token stamped then (no TTFT)
        n = len(json.loads(resp.read())["choices"][0]["token_ids"])
        end = time.monotonic()
        conn.close()
        return {"start": t0, "end": end, "stamps": [end] * n, "tokens": n}
    stamps, tokens, buf = [], 0, b""
    while True:
        line = resp.readline()
        if not line:
            break
        line = line.strip()
        if not line.startswith(b"data: "):
            continue
        payload = line[6:]
        if payload == b"[DONE]":
            break
        chunk = json.loads(payload)
        for choice in chunk.get("choices", []):
            n = len(choice.get("token_ids", []))
            if n:
                tokens += n
                stamps.append(time.monotonic())
    conn.close()
    return {"start": t0, "end": time.monotonic(), "stamps": stamps, "tokens": tokens}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", default="http://127.0.0.1:8000")
    ap.add_argument("--model", default="")
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--requests", type=int, default=16)
    ap.add_argument("--prompt-len", type=int, default=128)
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--vocab", type=int, default=256, help="prompt ids drawn below this")
    ap.add_argument("--stagger-ms", type=float, default=0.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-stream", action="store_true",
                    help="stream: false (one response per request; TTFT is then the e2e time)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    prompts = [[rng.randrange(a.vocab) for _ in range(a.prompt_len)] for _ in range(a.requests)]
    results, lock, next_i = [], threading.Lock(), [0]

    def client(k):
        time.sleep(k * a.stagger_ms / 1000.0)
        while True:
            with lock:
                i = next_i[0]
                next_i[0] += 1
            if i >= a.requests:
                return
            r = one_request(a.url, a.model, prompts[i], a.max_tokens, not a.no_stream)
            with lock:
                results.append(r)

    t0 = time.monotonic()
    threads = [threading.Thread(target=client, args=(k,)) for k in range(a.concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - t0
    tokens = sum(r["tokens"] for r in results)
    ttft = sorted(r["stamps"][0] - r["start"] for r in results)
    # Decode phase: from the first token of any request to the last token of all.
    first = min(r["stamps"][0] for r in results)
    last = max(r["stamps"][-1] for r in results)
    decode_tokens = sum(r["tokens"] - 1 for r in results)
    out = {
        "requests": len(results), "concurrency": a.concurrency, "prompt_len": a.prompt_len,
        "max_tokens": a.max_tokens, "stagger_ms": a.stagger_ms, "stream": not a.no_stream,
        "wall_s": round(wall, 3),
        "output_tokens": tokens, "output_tok_s": round(tokens / wall, 2),
        "decode_tok_s": round(decode_tokens / (last - first), 2) if last > first else None,
        "ttft_ms_p50": round(1000 * ttft[len(ttft) // 2], 1),
        "ttft_ms_max": round(1000 * ttft[-1], 1),
        "e2e_s_mean": round(sum(r["end"] - r["start"] for r in results) / len(results), 3),
    }
    if a.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k:>14}: {v}")


if __name__ == "__main__":
    main()
