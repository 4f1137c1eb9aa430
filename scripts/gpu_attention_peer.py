#!/usr/bin/env python3
"""Decode attention beside PyTorch's: issue 44 section 1's kernel target ("a decode attention kernel
at least as fast as cuDNN's at 128-4096 cached positions"), on the device, in one call.

  gpu_attention_peer.py OUT_DIR --bench-json FILE [--iters 50]
  gpu_attention_peer.py --self-test

FILE is bench_cuda_kernels' --benchmark_out (JSON) with BM_attention's decode cases: llama2-7b's
attention shape (32 query heads, 32 kv heads, head_dim 128), one new token, `past` cached
positions (so past + 1 keys), path 1 (the tiled kernel as the CUDA backend runs it, split over
keys) and path 2 (the streamed kernel, the same split), each event-timed with L2 flushed before
each iteration. For every (batch, past) there, this script times
torch.nn.functional.scaled_dot_product_attention on the same shape (q [batch, 32, 1, 128], k and
v [batch, 32, past + 1, 128], contiguous) with each backend PyTorch offers for it:
  cudnn_fp16      SDPBackend.CUDNN_ATTENTION on fp16 tensors (what the compiled peer's decode ran,
                  8.3 us a layer at 128-255 positions on the H200, docs/gpu-validation.md);
  flash_fp16      SDPBackend.FLASH_ATTENTION on fp16;
  efficient_fp32  SDPBackend.EFFICIENT_ATTENTION on fp32 (llmbench's cache is fp32: the same bytes).
Each the same way: CUDA events around the call, a 256 MiB buffer zeroed before each iteration
(L2 flushed), one warm-up call, then the median of --iters. A backend that refuses the shape is
recorded as such, never replaced by another.

Writes OUT_DIR/attention_peer.json and prints one table per batch: llmbench's two paths, torch's
backends, and streamed / cudnn_fp16 and streamed / tiled; the target is streamed / cudnn_fp16 <= 1
at every past in 128..4096 (printed as met or missed per row; exit 0 either way once measured;
1 when torch or the bench file is missing; 2 on bad arguments). Every figure is measured in this
call; none is estimated. Note the bytes: llmbench reads an fp32 cache, cuDNN an fp16 one, so at
long contexts llmbench reads twice the bytes (printed as GB/s for both).

--self-test: the bench-file reading and the comparison on synthetic documents (no torch, no GPU).
"""
import argparse
import json
import os
import re
import statistics
import sys

HEADS = 32
HEAD_DIM = 128
TARGET_PASTS = (128, 4096)  # the range of cached positions
BENCH_NAME = re.compile(r"^BM_attention/batch:(\d+)/n_new:1/past:(\d+)/path:(\d+)")


def read_bench(path):
    """{(batch, past): {"tiled_us": .., "streamed_us": ..}} from bench_cuda_kernels' JSON."""
    with open(path) as f:
        doc = json.load(f)
    out = {}
    for b in doc.get("benchmarks", []):
        m = BENCH_NAME.match(b.get("name", ""))
        if not m or b.get("run_type", "iteration") != "iteration" or b.get("error_occurred"):
            continue
        batch, past, path = (int(x) for x in m.groups())
        if path not in (1, 2):
            continue
        t = float(b["real_time"])
        unit = b.get("time_unit", "us")
        t = t * {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[unit]
        out.setdefault((batch, past), {})["tiled_us" if path == 1 else "streamed_us"] = t
    return out


def kv_bytes(batch, past, elem):
    return 2.0 * batch * HEADS * (past + 1) * HEAD_DIM * elem


def time_torch(shapes, iters):
    """{(batch, past): {backend: us or "refused: ..."}} measured with torch on the GPU."""
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    backends = [("cudnn_fp16", "CUDNN_ATTENTION", torch.float16),
                ("flash_fp16", "FLASH_ATTENTION", torch.float16),
                ("efficient_fp32", "EFFICIENT_ATTENTION", torch.float32)]
    flush = torch.empty(64 << 20, dtype=torch.float32, device="cuda")
    gen = torch.Generator(device="cuda").manual_seed(0)
    out = {}
    for batch, past in shapes:
        row = {}
        for name, backend_name, dtype in backends:
            backend = getattr(SDPBackend, backend_name, None)
            if backend is None:
                row[name] = "refused: this torch has no SDPBackend.%s" % backend_name
                continue
            q = torch.randn(batch, HEADS, 1, HEAD_DIM, device="cuda", dtype=dtype, generator=gen)
            k = torch.randn(batch, HEADS, past + 1, HEAD_DIM, device="cuda", dtype=dtype,
                            generator=gen)
            v = torch.randn_like(k)
            try:
                with sdpa_kernel([backend]):
                    F.scaled_dot_product_attention(q, k, v)
                    torch.cuda.synchronize()
                    times = []
                    for _ in range(iters):
                        flush.zero_()
                        start = torch.cuda.Event(enable_timing=True)
                        end = torch.cuda.Event(enable_timing=True)
                        start.record()
                        F.scaled_dot_product_attention(q, k, v)
                        end.record()
                        end.synchronize()
                        times.append(start.elapsed_time(end) * 1e3)
                row[name] = statistics.median(times)
            except RuntimeError as exc:  # the backend does not take this shape or dtype
                row[name] = "refused: %s" % str(exc).splitlines()[0][:160]
            del q, k, v
        out[(batch, past)] = row
    return out, {"torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
                 "device": torch.cuda.get_device_name()}


def compare(bench, peer):
    """Rows of the comparison, one per (batch, past) that both sides measured."""
    rows = []
    for key in sorted(bench):
        batch, past = key
        ours, theirs = bench[key], peer.get(key, {})
        row = {"batch": batch, "past": past, **ours,
               **{k: v for k, v in theirs.items()}}
        cudnn = theirs.get("cudnn_fp16")
        streamed, tiled = ours.get("streamed_us"), ours.get("tiled_us")
        if isinstance(cudnn, float) and streamed:
            row["streamed_over_cudnn_fp16"] = round(streamed / cudnn, 4)
            if TARGET_PASTS[0] <= past <= TARGET_PASTS[1]:
                row["target"] = "met" if streamed <= cudnn else "missed"
        if streamed and tiled:
            row["streamed_over_tiled"] = round(streamed / tiled, 4)
        if streamed:
            row["streamed_gbps"] = round(kv_bytes(batch, past, 4) / streamed / 1e3, 1)
        if isinstance(cudnn, float):
            row["cudnn_fp16_gbps"] = round(kv_bytes(batch, past, 2) / cudnn / 1e3, 1)
        rows.append(row)
    return rows


def fmt(x):
    if isinstance(x, float):
        return "%.2f" % x
    return "-" if x is None else str(x)[:10]


def print_table(rows):
    cols = ["batch", "past", "tiled_us", "streamed_us", "cudnn_fp16", "flash_fp16",
            "efficient_fp32", "streamed_over_cudnn_fp16", "streamed_over_tiled", "streamed_gbps",
            "cudnn_fp16_gbps", "target"]
    print(" | ".join(cols))
    for r in rows:
        print(" | ".join(fmt(r.get(c)) for c in cols))


def self_test():
    import tempfile
    d = tempfile.mkdtemp()
    bench = os.path.join(d, "b.json")
    with open(bench, "w") as f:
        json.dump({"benchmarks": [
            {"name": "BM_attention/batch:1/n_new:1/past:256/path:0/manual_time",
             "run_type": "iteration", "real_time": 50.0, "time_unit": "us"},
            {"name": "BM_attention/batch:1/n_new:1/past:256/path:1/manual_time",
             "run_type": "iteration", "real_time": 20.0, "time_unit": "us"},
            {"name": "BM_attention/batch:1/n_new:1/past:256/path:2/manual_time",
             "run_type": "iteration", "real_time": 8000.0, "time_unit": "ns"},
            {"name": "BM_attention/batch:1/n_new:1/past:256/path:2/manual_time_mean",
             "run_type": "aggregate", "real_time": 1.0, "time_unit": "us"},
            {"name": "BM_attention/batch:1/n_new:512/past:0/path:1/manual_time",
             "run_type": "iteration", "real_time": 100.0, "time_unit": "us"},
            {"name": "BM_attention/batch:16/n_new:1/past:4096/path:2/manual_time",
             "run_type": "iteration", "real_time": 900.0, "time_unit": "us"}]}, f)
    b = read_bench(bench)
    peer = {(1, 256): {"cudnn_fp16": 9.0, "flash_fp16": "refused: no"},
            (16, 4096): {"cudnn_fp16": 600.0}}
    rows = {(r["batch"], r["past"]): r for r in compare(b, peer)}
    expect = [
        (sorted(b) == [(1, 256), (16, 4096)], "decode cases of paths 1 and 2 only"),
        (b[(1, 256)] == {"tiled_us": 20.0, "streamed_us": 8.0}, "ns converted to us"),
        (rows[(1, 256)]["streamed_over_cudnn_fp16"] == round(8 / 9, 4), "ratio against cuDNN"),
        (rows[(1, 256)]["target"] == "met", "8 us against 9 us is met"),
        (rows[(1, 256)]["streamed_over_tiled"] == 0.4, "streamed against tiled"),
        (rows[(16, 4096)]["target"] == "missed", "900 us against 600 us is missed"),
        ("streamed_over_tiled" not in rows[(16, 4096)], "no tiled figure, no ratio"),
        (rows[(1, 256)]["streamed_gbps"] == round(kv_bytes(1, 256, 4) / 8.0 / 1e3, 1),
         "GB/s of the fp32 cache"),
    ]
    failed = [what for good, what in expect if not good]
    for what in failed:
        print("self-test failed: " + what)
    print("self-test: %d of %d checks passed" % (len(expect) - len(failed), len(expect)))
    return 0 if not failed else 1


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--bench-json", required=True)
    ap.add_argument("--iters", type=int, default=50)
    args = ap.parse_args()
    if args.iters < 1:
        ap.error("--iters: expected a positive count")
    try:
        bench = read_bench(args.bench_json)
    except (OSError, ValueError, KeyError) as exc:
        print("gpu_attention_peer.py: cannot read %s: %s" % (args.bench_json, exc))
        return 1
    if not bench:
        print("gpu_attention_peer.py: no decode BM_attention case of path 1 or 2 in %s"
              % args.bench_json)
        return 1
    try:
        peer, versions = time_torch(sorted(bench), args.iters)
    except ImportError as exc:
        print("gpu_attention_peer.py: torch is not available: %s" % exc)
        return 1
    rows = compare(bench, peer)
    os.makedirs(args.out_dir, exist_ok=True)
    with open(os.path.join(args.out_dir, "attention_peer.json"), "w") as f:
        json.dump({"versions": versions, "iters": args.iters, "rows": rows}, f, indent=1)
    print("=== attention peer (%s, torch %s, cuDNN %s; us, medians)"
          % (versions["device"], versions["torch"], versions["cudnn"]))
    print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
