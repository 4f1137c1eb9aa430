#!/usr/bin/env python3
"""The GPU peer for llmbench's decode figures: Hugging Face transformers' LlamaForCausalLM with one
of llmbench's preset shapes (default llama2-7b) and random fp16 weights built on the GPU, timed as
`llmbench run --batch B --prompt-len 128 --max-new-tokens 128` times its own decode, two ways:

  eager     the model's forward with its default dynamic KV cache, one Python call per step;
  compiled  a static KV cache and the decode step under torch.compile(mode="reduce-overhead")
            (CUDA graphs), as gpt-fast does; the prefill stays eager, as transformers advises.

Then torch.profiler (Kineto over CUPTI) records a few decode steps of each variant and writes a
Chrome trace (.json.gz) that `llmbench import chrome` reads: every step inside a record_function
range `decode_step` and, in the eager trace, every nn.Linear inside a range named after its module
(q_proj, ..., lm_head), so llmbench's `peer_gemm_compare` query can put each GEMM's kernel time
beside llmbench's op of the same weights.

What is timed (per variant and batch): the prompt (128 random token ids, seeded) is prefilled, its
last position's greedy token is the first new token, then max_new_tokens - 1 decode steps each
feed the previous token. One decode step = perf_counter() from just after the previous step's
tokens reached the host to just after this step's tokens (argmax on the GPU, then copied to the
host, which waits for the GPU): llmbench's TPOT, a whole step with its launch overhead and one
synchronisation. TTFT = the same clock around the prefill. One untimed warm-up generation, then
--repeat timed ones; the summary is the median (and mean, p10, p90) over all timed steps.

Each variant runs in its own child process with its own time limit (the compiled one's bounds the
compile: if it has not finished by then it is killed and reported as not done), and every
exception is caught per variant, so the others are still measured and printed. It is not a
serving benchmark, does not download anything and does not check the tokens (weights are random).

  python3 scripts/gpu_torch_peer.py OUT_DIR [--model llama2-7b] [--repeat 3] [--batch 1,16]
      [--variants eager,compiled] [--eager-timeout-s 120] [--compiled-timeout-s 150]

Writes OUT_DIR/torch_peer.json (the figures), OUT_DIR/torch_eager_decode.json.gz and
OUT_DIR/torch_compiled_decode.json.gz (the traces), and prints one summary table.
"""
import argparse
import contextlib
import gzip
import inspect
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time

# llmbench's presets (engine/model/config.cpp): dim, layers, heads, kv heads, ffn, vocab, context,
# rope theta, rms eps, tied embeddings.
PRESETS = {
    "tiny": (64, 2, 4, 2, 160, 256, 256, 1e4, 1e-5, False),
    "tinyllama-1.1b": (2048, 22, 32, 4, 5632, 32000, 2048, 1e4, 1e-5, False),
    "llama2-7b": (4096, 32, 32, 32, 11008, 32000, 4096, 1e4, 1e-5, False),
}

# Linear modules of transformers' Llama, each annotated with a record_function range of its name.
LINEAR_NAMES = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj",
                "lm_head")

METHOD = ("greedy; prompt of random ids (seed 0); TTFT = prefill to first token ids on the host; "
          "each decode step timed with time.perf_counter() from the previous step's tokens on the "
          "host to this step's tokens on the host (argmax on the GPU, copy to the host waits for "
          "the GPU); 1 warm-up generation, then --repeat timed ones; statistics over all timed "
          "steps")


def percentile(sorted_values, q):
    """Linear-interpolated percentile (q in 0..100) of an already sorted list."""
    if not sorted_values:
        return None
    pos = (len(sorted_values) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def summarize_ms(samples_s):
    """Median, mean, p10, p90 and count of a list of durations in seconds, as milliseconds."""
    ms = sorted(s * 1e3 for s in samples_s)
    if not ms:
        return {"n": 0}
    return {"n": len(ms), "median": statistics.median(ms), "mean": statistics.fmean(ms),
            "p10": percentile(ms, 10), "p90": percentile(ms, 90), "min": ms[0], "max": ms[-1]}


def write_json_atomic(path, doc):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, path)


# ----------------------------------------------------------------------------------------------
# Child side: everything that imports torch.


class Child:
    """One variant's measurements in one process; writes its JSON after every result."""

    def __init__(self, args):
        self.args = args  # torch is imported by the variant itself, so a missing one is reported
        self.t_start = time.monotonic()
        self.path = os.path.join(args.out, "torch_peer_%s.json" % args.child)
        self.doc = {"variant": args.child, "status": "started", "results": [], "errors": [],
                    "method": METHOD}
        self.save()

    def save(self):
        write_json_atomic(self.path, self.doc)

    def left_s(self):
        return self.args.deadline_s - (time.monotonic() - self.t_start)

    def error(self, where, exc):
        import traceback
        msg = "%s: %s: %s" % (where, type(exc).__name__, exc)
        print("torch_peer: " + msg, flush=True)
        traceback.print_exc()
        self.doc["errors"].append(msg)
        self.save()


def build_model(args):
    """LlamaForCausalLM with the preset's shape, random weights (--dtype, default fp16), built on
    the device."""
    import torch
    import transformers
    from transformers import LlamaConfig, LlamaForCausalLM
    dim, layers, heads, kv, ffn, vocab, ctx, theta, eps, tied = PRESETS[args.model]
    kwargs = dict(vocab_size=vocab, hidden_size=dim, intermediate_size=ffn,
                  num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=kv,
                  max_position_embeddings=ctx, rms_norm_eps=eps, tie_word_embeddings=tied,
                  hidden_act="silu", attention_bias=False, mlp_bias=False)
    config = LlamaConfig(**kwargs)
    # transformers 5 keeps RoPE's theta in rope_parameters; 4.x in rope_theta.
    if isinstance(getattr(config, "rope_parameters", None), dict):
        config.rope_parameters = dict(config.rope_parameters, rope_type="default",
                                      rope_theta=theta)
    else:
        config.rope_theta = theta
    dtype = torch_dtype(args)
    torch.manual_seed(0)
    t0 = time.perf_counter()
    previous = torch.get_default_dtype()
    # torch >= 2 builds the weights on the device; an older one builds them on the CPU first.
    where = torch.device(args.device)
    on_device = where if hasattr(where, "__enter__") else contextlib.nullcontext()
    fallback = None
    try:
        torch.set_default_dtype(dtype)  # the weights are made in fp16 straight away
        with on_device:
            model = LlamaForCausalLM(config)
    except Exception as exc:  # then in fp32 (27 GB for 7B), converted below
        fallback = "%s: %s" % (type(exc).__name__, exc)
        print("torch_peer: building in %s failed (%s); building in fp32" % (args.dtype, fallback),
              flush=True)
        torch.set_default_dtype(previous)
        with on_device:
            model = LlamaForCausalLM(config)
    finally:
        torch.set_default_dtype(previous)
    p = next(model.parameters())
    if p.dtype != dtype or p.device.type != torch.device(args.device).type:
        model = model.to(device=args.device, dtype=dtype)
    model.eval()
    model.requires_grad_(False)
    sync(args)
    info = {
        "preset": args.model, "hidden": dim, "layers": layers, "heads": heads, "kv_heads": kv,
        "ffn": ffn, "vocab": vocab, "rope_theta": theta, "rms_eps": eps,
        "params": sum(t.numel() for t in model.parameters()),
        "dtype": args.dtype, "device": args.device,
        "attn_implementation": getattr(model.config, "_attn_implementation", None),
        "build_s": time.perf_counter() - t0,
        "torch": torch.__version__, "transformers": transformers.__version__,
        "build_fallback": fallback,
    }
    if args.device.startswith("cuda"):
        info["gpu"] = torch.cuda.get_device_name()
    return model, info


def torch_dtype(args):
    import torch
    return {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[args.dtype]


def sync(args):
    import torch
    if args.device.startswith("cuda"):
        torch.cuda.synchronize()


def forward_params(model):
    """The keyword arguments the installed transformers' forward accepts."""
    return set(inspect.signature(model.forward).parameters)


def prompt_ids(args, batch, vocab):
    import torch
    g = torch.Generator().manual_seed(1234 + batch)
    return torch.randint(0, vocab, (batch, args.prompt_len), generator=g).to(args.device)


def greedy(logits):
    return logits[:, -1, :].argmax(dim=-1, keepdim=True)


def generate_timed(args, prefill, step):
    """One generation: prefill() returns the first token (device); step(tok) the next one.
    Returns (ttft_s, [decode step seconds])."""
    sync(args)
    t0 = time.perf_counter()
    tok = prefill()
    tok.to("cpu")
    t1 = time.perf_counter()
    steps = []
    for _ in range(args.max_new_tokens - 1):
        s0 = time.perf_counter()
        tok = step(tok)
        tok.to("cpu")
        steps.append(time.perf_counter() - s0)
    return t1 - t0, steps


def measure(child, label, batch, prefill_factory, repeat):
    """Warm-up generation, then `repeat` timed ones; appends one result."""
    args = child.args
    result = {"variant": child.args.child, "batch": batch, "label": label,
              "prompt_len": args.prompt_len, "max_new_tokens": args.max_new_tokens}
    ttfts, steps = [], []
    for r in range(repeat + 1):
        prefill, step = prefill_factory()
        ttft, s = generate_timed(args, prefill, step)
        if r == 0:
            result["warmup_ttft_ms"] = ttft * 1e3
            result["warmup_tpot_ms_median"] = summarize_ms(s).get("median")
            continue
        ttfts.append(ttft)
        steps.extend(s)
    result["ttft_ms"] = summarize_ms(ttfts)
    result["tpot_ms"] = summarize_ms(steps)
    med = result["tpot_ms"].get("median")
    result["decode_tok_s"] = batch * 1e3 / med if med else None
    result["repeat"] = repeat
    child.doc["results"].append(result)
    child.save()
    print("torch_peer: %s batch %d: TPOT median %.3f ms (mean %.3f, p10 %.3f, p90 %.3f), "
          "TTFT median %.2f ms" % (label, batch, med, result["tpot_ms"]["mean"],
                                   result["tpot_ms"]["p10"], result["tpot_ms"]["p90"],
                                   result["ttft_ms"]["median"]), flush=True)
    return result


class LinearRanges:
    """record_function ranges around every nn.Linear, named after the module (q_proj, ...), so a
    trace ties each GEMM kernel to the weight it read. Only while profiling the eager model."""

    def __init__(self, model):
        import torch
        self.handles = []
        for name, module in model.named_modules():
            short = name.rsplit(".", 1)[-1]
            if isinstance(module, torch.nn.Linear) and short in LINEAR_NAMES:
                self.handles.append(module.register_forward_pre_hook(self._enter(short)))
                self.handles.append(module.register_forward_hook(self._exit))

    @staticmethod
    def _enter(short):
        import torch

        def hook(module, inputs):
            ctx = torch.profiler.record_function(short)
            ctx.__enter__()
            module._llmbench_range = ctx
        return hook

    @staticmethod
    def _exit(module, inputs, output):
        ctx = getattr(module, "_llmbench_range", None)
        if ctx is not None:
            module._llmbench_range = None
            ctx.__exit__(None, None, None)

    def remove(self):
        for h in self.handles:
            h.remove()


def profile_steps(child, name, first_token, step, n_steps):
    """torch.profiler over n_steps decode steps, each in a record_function 'decode_step'; the
    Chrome trace goes to OUT/<name>.json.gz."""
    import torch
    from torch.profiler import ProfilerActivity, profile, record_function
    args = child.args
    activities = [ProfilerActivity.CPU]
    if args.device.startswith("cuda"):
        activities.append(ProfilerActivity.CUDA)
    tok = first_token
    with profile(activities=activities, record_shapes=True) as prof:
        for _ in range(n_steps):
            with record_function("decode_step"):
                tok = step(tok)
                tok.to("cpu")
    raw = os.path.join(args.out, name + ".json")
    prof.export_chrome_trace(raw)
    with open(raw, "rb") as src, gzip.open(raw + ".gz", "wb", compresslevel=6) as dst:
        shutil.copyfileobj(src, dst)
    os.remove(raw)
    top = []
    try:
        for e in prof.key_averages():
            dev = getattr(e, "device_time_total", None)
            if dev is None:
                dev = getattr(e, "cuda_time_total", 0)
            top.append((dev, e.key, e.count))
        top.sort(reverse=True)
    except Exception as exc:  # the summary is a convenience; the trace is what counts
        child.error("key_averages", exc)
    child.doc.setdefault("traces", []).append({
        "file": name + ".json.gz", "decode_steps": n_steps,
        "bytes": os.path.getsize(raw + ".gz"),
        "top_device_us": [{"name": k, "calls": c, "device_us": d} for d, k, c in top[:12]]})
    child.save()
    print("torch_peer: wrote %s.json.gz (%d steps)" % (name, n_steps), flush=True)
    return tok


def run_eager(child):
    """Default dynamic cache, plain forward calls, greedy; then the profile of a few steps."""
    import torch
    args = child.args
    model, info = build_model(args)
    child.doc["model"] = info
    child.save()
    accepted = forward_params(model)
    keep = {"logits_to_keep": 1} if "logits_to_keep" in accepted else {}
    vocab = info["vocab"]

    def factory_for(batch):
        ids = prompt_ids(args, batch, vocab)

        def factory():
            state = {}

            def prefill():
                out = model(input_ids=ids, use_cache=True, **keep)
                state["cache"] = out.past_key_values
                return greedy(out.logits)

            def step(tok):
                out = model(input_ids=tok, past_key_values=state["cache"], use_cache=True)
                state["cache"] = out.past_key_values
                return greedy(out.logits)
            return prefill, step
        return factory

    with torch.no_grad():  # as generate() does
        for batch in args.batches:
            try:
                measure(child, "eager, dynamic cache", batch, factory_for(batch),
                        args.repeat if batch == 1 else max(1, args.repeat - 1))
            except Exception as exc:
                child.error("eager batch %d" % batch, exc)
        try:
            prefill, step = factory_for(1)()
            tok = prefill()
            for _ in range(args.profile_skip):  # profile steps in the middle of a generation
                tok = step(tok)
            ranges = LinearRanges(model)
            try:
                profile_steps(child, "torch_eager_decode", tok, step, args.profile_steps)
            finally:
                ranges.remove()
        except Exception as exc:
            child.error("eager profile", exc)


def make_static_cache(model, batch, max_len, args):
    """transformers' StaticCache across its signatures: 5.x (config, max_cache_len; lazy
    allocation at the first update) and 4.x (config, max_batch_size or batch_size, max_cache_len,
    device, dtype)."""
    import torch
    from transformers import StaticCache
    params = set(inspect.signature(StaticCache.__init__).parameters)
    kwargs = {"config": model.config, "max_cache_len": max_len}
    if "max_batch_size" in params:
        kwargs["max_batch_size"] = batch
    elif "batch_size" in params:
        kwargs["batch_size"] = batch
    if "device" in params:
        kwargs["device"] = args.device
    if "dtype" in params:
        kwargs["dtype"] = torch_dtype(args)
    return StaticCache(**kwargs)


def compiled_factory(child, model, batch, fullgraph):
    """gpt-fast's shape: an eager prefill into a static cache, then a compiled one-token decode
    step (forward + argmax) whose position tensors are advanced in place between calls."""
    import torch
    args = child.args
    accepted = forward_params(model)
    max_len = args.prompt_len + max(args.max_new_tokens, args.profile_skip + args.profile_steps) + 8
    cache = make_static_cache(model, batch, max_len, args)
    ids = prompt_ids(args, batch, child.doc["model"]["vocab"])
    dev = args.device
    pos_ids = torch.zeros((batch, 1), dtype=torch.long, device=dev)
    cache_pos = torch.zeros((1,), dtype=torch.long, device=dev)
    use_cache_pos = "cache_position" in accepted

    def decode_one(tok, position_ids, cache_position):
        kw = {"cache_position": cache_position} if use_cache_pos else {}
        out = model(input_ids=tok, position_ids=position_ids, past_key_values=cache,
                    use_cache=True, **kw)
        return greedy(out.logits)

    decode = torch.compile(decode_one, mode="reduce-overhead", fullgraph=fullgraph)
    mark_step = getattr(getattr(torch, "compiler", None), "cudagraph_mark_step_begin", None)

    def factory():
        def prefill():
            cache.reset()
            positions = torch.arange(args.prompt_len, device=dev)
            kw = {"cache_position": positions} if use_cache_pos else {}
            out = model(input_ids=ids, position_ids=positions.unsqueeze(0).expand(batch, -1),
                        past_key_values=cache, use_cache=True, **kw)
            pos_ids.fill_(args.prompt_len)
            cache_pos.fill_(args.prompt_len)
            return greedy(out.logits)

        def step(tok):
            if mark_step is not None:
                mark_step()
            nxt = decode(tok, pos_ids, cache_pos).clone()  # a graph's output is reused
            pos_ids.add_(1)
            cache_pos.add_(1)
            return nxt
        return prefill, step
    return factory


def run_compiled(child):
    """Static cache + torch.compile(mode="reduce-overhead"): compile time, then the timings, the
    profile, and batch 16 when the time left allows another compile."""
    import torch
    args = child.args
    model, info = build_model(args)
    child.doc["model"] = info
    child.save()
    import torch._dynamo
    torch._dynamo.config.automatic_dynamic_shapes = False  # one static graph per batch size
    for batch in args.batches:
        if batch != args.batches[0]:
            needed = 1.5 * child.doc.get("compile_s", {}).get(str(args.batches[0]), 60) + 20
            if child.left_s() < needed:
                child.doc["errors"].append("batch %d not run: %.0f s left, about %.0f s needed"
                                           % (batch, child.left_s(), needed))
                child.save()
                continue
        try:
            with torch.no_grad():
                compiled_batch(child, model, batch)
        except Exception as exc:
            child.error("compiled batch %d" % batch, exc)


def compiled_batch(child, model, batch):
    """Compile (fullgraph, else with graph breaks), time it, and profile it at the first batch."""
    args = child.args
    factory = None
    for fullgraph in (True, False):
        try:
            factory = compiled_factory(child, model, batch, fullgraph)
            prefill, step = factory()
            tok = prefill()
            t0 = time.perf_counter()
            tok = step(tok)  # dynamo traces and inductor compiles here
            tok.to("cpu")
            child.doc.setdefault("compile_s", {})[str(batch)] = time.perf_counter() - t0
            child.doc.setdefault("fullgraph", {})[str(batch)] = fullgraph
            child.save()
            print("torch_peer: compiled batch %d (fullgraph=%s) in %.1f s"
                  % (batch, fullgraph, time.perf_counter() - t0), flush=True)
            break
        except Exception as exc:
            child.error("compile batch %d fullgraph=%s" % (batch, fullgraph), exc)
            factory = None
            import torch._dynamo
            torch._dynamo.reset()
    if factory is None:
        return
    measure(child, "static cache + torch.compile reduce-overhead", batch, factory,
            args.repeat if batch == 1 else max(1, args.repeat - 1))
    if batch == args.batches[0]:
        try:
            prefill, step = factory()
            tok = prefill()
            for _ in range(args.profile_skip):
                tok = step(tok)
            profile_steps(child, "torch_compiled_decode", tok, step, args.profile_steps)
        except Exception as exc:
            child.error("compiled profile", exc)


def child_main(args):
    child = Child(args)
    try:
        if args.child == "eager":
            run_eager(child)
        else:
            run_compiled(child)
        child.doc["status"] = "done"
    except Exception as exc:
        child.error(args.child, exc)
        child.doc["status"] = "failed"
    child.doc["wall_s"] = time.monotonic() - child.t_start
    child.save()
    return 0


# ----------------------------------------------------------------------------------------------
# Parent side: no torch; runs each variant in a child with its own time limit.


def run_child(args, variant, timeout_s):
    """Runs one variant in its own process group, killed whole (inductor's compile workers too)
    at timeout_s. Returns (exit code or None, seconds)."""
    cmd = [sys.executable, os.path.abspath(__file__), args.out, "--child", variant,
           "--model", args.model, "--device", args.device, "--dtype", args.dtype,
           "--repeat", str(args.repeat),
           "--batch", ",".join(str(b) for b in args.batches),
           "--prompt-len", str(args.prompt_len), "--max-new-tokens", str(args.max_new_tokens),
           "--profile-steps", str(args.profile_steps), "--profile-skip", str(args.profile_skip),
           "--deadline-s", str(max(1.0, timeout_s - 5))]
    print("torch_peer: %s (limit %d s): %s" % (variant, timeout_s, " ".join(cmd)), flush=True)
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, start_new_session=True)

    def kill_group(*_):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def on_term(signum, _frame):  # an outer `timeout` stops us: take the child along
        kill_group()
        sys.exit(128 + signum)
    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        rc = proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        kill_group()
        proc.wait()
        rc = None
    finally:
        signal.signal(signal.SIGTERM, previous)
    kill_group()  # compile workers the child left behind
    return rc, time.monotonic() - t0


def fmt(v, spec):
    return format(v, spec) if isinstance(v, (int, float)) else "-"


def summary_table(doc):
    head = "%-10s %5s %9s %9s %9s %9s %10s %9s %9s  %s" % (
        "variant", "batch", "tpot_p50", "tpot_mean", "tpot_p10", "tpot_p90", "tok_s",
        "ttft_p50", "compile_s", "status")
    lines = [head, "-" * len(head)]
    for v in doc["variants"]:
        name = v["variant"]
        compile_s = v.get("compile_s", {})
        if not v.get("results"):
            lines.append("%-10s %5s %9s %9s %9s %9s %10s %9s %9s  %s" % (
                name, "-", "-", "-", "-", "-", "-", "-", "-", v.get("status")))
        for r in v.get("results", []):
            t = r["tpot_ms"]
            lines.append("%-10s %5d %9s %9s %9s %9s %10s %9s %9s  %s" % (
                name, r["batch"], fmt(t.get("median"), ".3f"), fmt(t.get("mean"), ".3f"),
                fmt(t.get("p10"), ".3f"), fmt(t.get("p90"), ".3f"),
                fmt(r.get("decode_tok_s"), ".1f"), fmt(r["ttft_ms"].get("median"), ".2f"),
                fmt(compile_s.get(str(r["batch"])), ".1f"), v.get("status")))
    return "\n".join(lines)


def parent_main(args):
    os.makedirs(args.out, exist_ok=True)
    doc = {"tool": "scripts/gpu_torch_peer.py", "method": METHOD,
           "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "variants": []}
    limits = {"eager": args.eager_timeout_s, "compiled": args.compiled_timeout_s}
    for variant in args.variants:
        path = os.path.join(args.out, "torch_peer_%s.json" % variant)
        if os.path.exists(path):
            os.remove(path)
        rc, wall = run_child(args, variant, limits[variant])
        try:
            with open(path) as f:
                part = json.load(f)
        except (OSError, ValueError) as exc:
            part = {"variant": variant, "results": [], "errors": ["no result file: %s" % exc]}
        if rc is None:
            part["status"] = "killed after %d s (not done)" % limits[variant]
        elif rc != 0:
            part["status"] = "exit code %d" % rc
        part["child_wall_s"] = wall
        doc["variants"].append(part)
        if os.path.exists(path):
            os.remove(path)
        write_json_atomic(os.path.join(args.out, "torch_peer.json"), doc)
    print("=== torch peer summary (%s, times in ms, compile in s)" % args.model)
    print(summary_table(doc))
    for v in doc["variants"]:
        for e in v.get("errors", []):
            print("  %s: %s" % (v["variant"], e))
    return 0 if any(v.get("results") for v in doc["variants"]) else 1


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out", help="output directory")
    p.add_argument("--model", default="llama2-7b", choices=sorted(PRESETS))
    p.add_argument("--device", default="cuda")
    p.add_argument("--dtype", default="fp16", choices=("fp16", "bf16", "fp32"))
    p.add_argument("--batch", default="1,16", help="comma-separated batch sizes")
    p.add_argument("--prompt-len", type=int, default=128)
    p.add_argument("--max-new-tokens", type=int, default=128)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--variants", default="eager,compiled")
    p.add_argument("--eager-timeout-s", type=int, default=120)
    p.add_argument("--compiled-timeout-s", type=int, default=150)
    p.add_argument("--profile-steps", type=int, default=5)
    p.add_argument("--profile-skip", type=int, default=8,
                   help="decode steps run before the profiled ones")
    p.add_argument("--child", choices=("eager", "compiled"), help=argparse.SUPPRESS)
    p.add_argument("--deadline-s", type=float, default=1e9, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    try:
        args.batches = [int(b) for b in args.batch.split(",") if b.strip()]
    except ValueError:
        p.error("--batch: expected a comma-separated list of integers, got %r" % args.batch)
    if not args.batches or min(args.batches) < 1:
        p.error("--batch: every batch size must be >= 1")
    args.variants = [v for v in args.variants.split(",") if v]
    for v in args.variants:
        if v not in ("eager", "compiled"):
            p.error("--variants: unknown variant %r (eager, compiled)" % v)
    if args.prompt_len < 1 or args.max_new_tokens < 2 or args.repeat < 1:
        p.error("--prompt-len >= 1, --max-new-tokens >= 2 and --repeat >= 1 are required")
    return args


if __name__ == "__main__":
    a = parse_args(sys.argv[1:])
    sys.exit(child_main(a) if a.child else parent_main(a))
