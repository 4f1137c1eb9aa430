#!/usr/bin/env python3
"""An independent numpy reference of the Llama forward pass, checked against llmbench's engine.

Reads a Hugging Face model directory (config.json + model.safetensors, as written by
`llmbench export-weights`) and the JSON written by tests/reference/dump_logits (prompts, and the
engine's logits and greedy tokens after prefill and after each decode step). Runs the same
prompts through prefill and the same number of decode steps, feeding back its own greedy tokens,
and requires at every stage: max |logit error| <= 1e-4 and identical greedy tokens.

Written from the Hugging Face modeling_llama / modeling_qwen2 definitions, in float64, one
sequence at a time with its own KV cache. Deliberately not: fast, or sharing any code with
llmbench (it imports nothing from it, and parses safetensors with json + numpy.frombuffer).

  llama_ref.py --weights DIR --llmbench-out FILE     exit 0: pass, 1: mismatch or error
"""
import argparse
import json
import math
import os
import struct
import sys

try:
    import numpy as np
except ImportError as e:
    print(f"llama_ref.py: cannot import numpy ({e}) with the Python interpreter {sys.executable} "
          f"(Python {sys.version.split()[0]}); the model reference check needs it: install "
          "Debian's python3-numpy (apt-get install python3-numpy) and run with /usr/bin/python3",
          file=sys.stderr)
    sys.exit(1)

LOGIT_ATOL = 1e-4  # max |logit error| allowed at every stage


class CheckFailed(Exception):
    pass


# ---- safetensors: 8-byte little-endian header length, JSON header, raw little-endian data ----

def load_safetensors(path):
    """Returns {name: float64 array} for every tensor in the file (F32, F16 or BF16)."""
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        raise CheckFailed(f"{path}: too short for a safetensors file")
    (header_len,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + header_len].decode("utf-8"))
    data = memoryview(blob)[8 + header_len:]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        shape = [int(d) for d in info["shape"]]
        raw = data[begin:end]
        dtype = info["dtype"]
        if dtype == "F32":
            values = np.frombuffer(raw, dtype="<f4")
        elif dtype == "F16":
            values = np.frombuffer(raw, dtype="<f2")
        elif dtype == "BF16":  # bf16 is the top half of an fp32
            values = (np.frombuffer(raw, dtype="<u2").astype("<u4") << 16).view("<f4")
        else:
            raise CheckFailed(f"{path}: tensor {name} has unsupported dtype {dtype}")
        if values.size != math.prod(shape) or end > len(data):
            raise CheckFailed(f"{path}: tensor {name}: data_offsets [{begin}, {end}) do not hold "
                              f"shape {shape} of {dtype}")
        tensors[name] = values.astype(np.float64).reshape(shape)
    return tensors


# ---- the model ----------------------------------------------------------------------------

class Llama:
    def __init__(self, config, tensors):
        self.dim = config["hidden_size"]
        self.n_layers = config["num_hidden_layers"]
        self.n_heads = config["num_attention_heads"]
        self.n_kv_heads = config.get("num_key_value_heads", self.n_heads)
        self.head_dim = config.get("head_dim") or self.dim // self.n_heads
        self.vocab = config["vocab_size"]
        self.eps = float(config["rms_norm_eps"])
        self.theta = float(config.get("rope_theta", 10000.0))
        if config.get("hidden_act", "silu") != "silu":
            raise CheckFailed(f"hidden_act {config['hidden_act']} is not silu")
        self.t = tensors
        self.embed = tensors["model.embed_tokens.weight"]                  # [V, D]
        tied = config.get("tie_word_embeddings", False)
        self.lm_head = self.embed if tied else tensors["lm_head.weight"]  # [V, D]
        # inv_freq[i] = theta^(-2i/head_dim), i = 0 .. head_dim/2 - 1
        self.inv_freq = self.theta ** (-np.arange(0, self.head_dim, 2, dtype=np.float64)
                                       / self.head_dim)

    def w(self, name):
        return self.t[name]

    def rmsnorm(self, x, weight):  # x: [T, D]
        return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + self.eps) * weight

    def rope(self, x, positions):
        """x: [T, heads, head_dim]; Hugging Face rotate_half layout (pairs i and i + half)."""
        angle = positions[:, None] * self.inv_freq[None, :]          # [T, half]
        emb = np.concatenate([angle, angle], axis=-1)                  # [T, head_dim]
        cos, sin = np.cos(emb)[:, None, :], np.sin(emb)[:, None, :]    # [T, 1, head_dim]
        half = self.head_dim // 2
        rotated = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)  # rotate_half(x)
        return x * cos + rotated * sin

    def linear(self, x, prefix):  # nn.Linear: x @ W^T (+ b)
        y = x @ self.w(prefix + ".weight").T
        bias = self.t.get(prefix + ".bias")
        return y if bias is None else y + bias

    def forward(self, tokens, cache):
        """Appends `tokens` (one sequence) after the cache; returns the last position's logits.

        cache: a list, per layer, of [K, V] arrays [cached_len, n_kv_heads, head_dim]."""
        T, H, KV, hd = len(tokens), self.n_heads, self.n_kv_heads, self.head_dim
        past = cache[0][0].shape[0]
        positions = np.arange(past, past + T, dtype=np.float64)
        x = self.embed[np.asarray(tokens)]                                  # [T, D]
        for l in range(self.n_layers):
            p = f"model.layers.{l}."
            # ---- attention ----
            h = self.rmsnorm(x, self.w(p + "input_layernorm.weight"))      # [T, D]
            q = self.linear(h, p + "self_attn.q_proj").reshape(T, H, hd)
            k = self.linear(h, p + "self_attn.k_proj").reshape(T, KV, hd)
            v = self.linear(h, p + "self_attn.v_proj").reshape(T, KV, hd)
            q, k = self.rope(q, positions), self.rope(k, positions)
            cache[l][0] = np.concatenate([cache[l][0], k])                 # [L, KV, hd]
            cache[l][1] = np.concatenate([cache[l][1], v])
            # repeat_kv: query head h reads kv head h // (H / KV)
            keys = np.repeat(cache[l][0], H // KV, axis=1)                 # [L, H, hd]
            values = np.repeat(cache[l][1], H // KV, axis=1)
            L = keys.shape[0]
            scores = np.einsum("thd,lhd->htl", q, keys) / math.sqrt(hd)    # [H, T, L]
            visible = np.arange(L)[None, :] <= (past + np.arange(T))[:, None]  # causal [T, L]
            scores = np.where(visible[None], scores, -np.inf)
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            probs = scores / scores.sum(axis=-1, keepdims=True)
            att = np.einsum("htl,lhd->thd", probs, values).reshape(T, H * hd)
            x = x + self.linear(att, p + "self_attn.o_proj")
            # ---- SwiGLU MLP ----
            h = self.rmsnorm(x, self.w(p + "post_attention_layernorm.weight"))
            gate = self.linear(h, p + "mlp.gate_proj")
            up = self.linear(h, p + "mlp.up_proj")
            silu = gate * 0.5 * (1.0 + np.tanh(0.5 * gate))  # gate * sigmoid(gate), no overflow
            x = x + self.linear(silu * up, p + "mlp.down_proj")
        last = self.rmsnorm(x[-1:], self.w("model.norm.weight"))            # [1, D]
        return (last @ self.lm_head.T)[0]                                   # [V]

    def new_cache(self):
        empty = np.zeros((0, self.n_kv_heads, self.head_dim))
        return [[empty, empty] for _ in range(self.n_layers)]


# ---- the check ----------------------------------------------------------------------------

def check(model, run):
    prompts = [list(p) for p in run["prompts"]]
    stages = run["stages"]
    batch = len(prompts)
    if batch < 2 or any(p == prompts[0] for p in prompts[1:]):
        raise CheckFailed("the engine's batch must hold at least two distinct prompts, so a mix-up "
                          f"between sequences shows; got {prompts}")
    print(f"{batch} prompts of {len(prompts[0])} tokens, {len(stages)} stages, "
          f"tolerance max |logit error| <= {LOGIT_ATOL:g}")

    caches = [model.new_cache() for _ in range(batch)]
    inputs = prompts  # per sequence, the tokens of the next forward pass
    worst_overall = 0.0
    for stage in stages:
        name = stage["stage"]
        engine = np.asarray(stage["logits"], dtype=np.float64)  # [batch, vocab]
        if engine.shape != (batch, model.vocab):
            raise CheckFailed(f"stage {name}: engine logits have shape {engine.shape}, expected "
                              f"({batch}, {model.vocab})")
        ref = np.stack([model.forward(inputs[b], caches[b]) for b in range(batch)])
        if not np.all(np.isfinite(engine)):
            b, v = np.argwhere(~np.isfinite(engine))[0]
            raise CheckFailed(f"stage {name}: engine logit [seq {b}, id {v}] is {engine[b, v]}")
        err = np.abs(engine - ref)
        b, v = np.unravel_index(np.argmax(err), err.shape)
        ref_tokens = [int(t) for t in np.argmax(ref, axis=-1)]
        engine_tokens = [int(t) for t in stage["tokens"]]
        print(f"  {name:<9} max |logit error| {err[b, v]:.3e} at [seq {b}, id {v}] "
              f"(max |logit| {np.abs(ref).max():.3f}); tokens engine {engine_tokens} "
              f"reference {ref_tokens}")
        if err[b, v] > LOGIT_ATOL:
            raise CheckFailed(f"stage {name}: logit [seq {b}, id {v}]: engine {engine[b, v]!r}, "
                              f"reference {ref[b, v]!r}, |error| {err[b, v]:.3e} > {LOGIT_ATOL:g}")
        if engine_tokens != ref_tokens:
            bad = next(i for i in range(batch) if engine_tokens[i] != ref_tokens[i])
            raise CheckFailed(
                f"stage {name}: greedy token of seq {bad}: engine {engine_tokens[bad]} "
                f"(reference logit {ref[bad, engine_tokens[bad]]!r}), reference {ref_tokens[bad]} "
                f"(reference logit {ref[bad, ref_tokens[bad]]!r})")
        worst_overall = max(worst_overall, float(err[b, v]))
        inputs = [[t] for t in ref_tokens]
    return worst_overall


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--weights", required=True,
                    help="directory with config.json and model.safetensors")
    ap.add_argument("--llmbench-out", required=True, help="JSON written by dump_logits")
    args = ap.parse_args()
    try:
        with open(os.path.join(args.weights, "config.json")) as f:
            config = json.load(f)
        tensors = load_safetensors(os.path.join(args.weights, "model.safetensors"))
        with open(args.llmbench_out) as f:
            run = json.load(f)
        worst = check(Llama(config, tensors), run)
    except CheckFailed as e:
        print(f"FAIL: {e}", file=sys.stderr)
        return 1
    except (OSError, KeyError, ValueError) as e:
        print(f"FAIL: cannot read the inputs: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    print(f"PASS: engine matches the numpy reference (max |logit error| {worst:.3e} "
          f"<= {LOGIT_ATOL:g}, greedy tokens equal at every stage)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
