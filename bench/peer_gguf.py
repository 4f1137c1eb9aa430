#!/usr/bin/env python3
# Writes a GGUF file (llama.cpp's model format) holding exactly the tensors of a Hugging Face
# directory made by `llmbench export-weights`: the same shapes, values and storage dtype, so
# llama.cpp and llmbench stream the same bytes per token. Used by bench/peer_llamacpp.sh.
#
# Why not llama.cpp's convert_hf_to_gguf.py: it imports torch and a tokenizer library, neither of
# which is installed here. This script needs only numpy, PyYAML (Debian's python3 has both) and
# llama.cpp's own gguf-py (its tree is given on the command line; nothing of llama.cpp is copied
# into llmbench); sentencepiece, which gguf-py imports but this script never uses, is stubbed
# when it is missing.
# Deliberately not: a general converter. It reads the llama-family layout export-weights writes
# (one model.safetensors, fp32/fp16/bf16) and writes F32, F16 or BF16 tensors; llama-quantize
# makes the Q8_0/Q4_0 files from the F32 one.
#
# The vocabulary is synthetic (llmbench's token ids are synthetic too): a SentencePiece-type
# list of vocab_size entries with the byte tokens llama.cpp expects, so llama-bench can sample
# random ids. q_proj/k_proj rows are permuted as convert_hf_to_gguf.py does (llama.cpp's RoPE
# pairs neighbouring elements, Hugging Face's pairs the two halves); timing does not depend on
# it, but the GGUF model then computes the same function as the checkpoint.
import argparse
import json
import os
import struct
import sys
import types

import numpy as np


def read_safetensors(path):
    """name -> (dtype string, shape, numpy view of the raw bits) of a .safetensors file."""
    with open(path, "rb") as f:
        (header_len,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(header_len))
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + header_len)
    raw = {"F32": np.float32, "F16": np.float16, "BF16": np.uint16}
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] not in raw:
            sys.exit(f"peer_gguf: {path}: tensor {name} has dtype {info['dtype']}, "
                     "expected F32, F16 or BF16")
        begin, end = info["data_offsets"]
        view = data[begin:end].view(raw[info["dtype"]]).reshape(info["shape"])
        out[name] = (info["dtype"], info["shape"], view)
    return out


def to_f32(dtype, bits):
    if dtype == "BF16":
        return (bits.astype(np.uint32) << 16).view(np.float32)
    return np.asarray(bits, dtype=np.float32)


def permute_rope_rows(w, n_head):
    """convert_hf_to_gguf.py's LlamaModel.permute: halves-paired rows -> neighbour-paired rows."""
    rows = w.shape[0]
    return (w.reshape(n_head, 2, rows // n_head // 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


def synthetic_vocab(n):
    """SentencePiece-style entries: <unk> <s> </s>, the 256 byte tokens, then plain pieces."""
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    types = [2, 3, 3] + [6] * 256  # UNKNOWN, CONTROL, BYTE (gguf.TokenType)
    if n < len(tokens):
        sys.exit(f"peer_gguf: vocab_size {n} is below the {len(tokens)} entries a "
                 "SentencePiece vocabulary needs")
    tokens += [f"tok{i}" for i in range(len(tokens), n)]
    types += [1] * (n - len(types))  # NORMAL
    return [t.encode() for t in tokens], [0.0] * n, types


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--llama-cpp", required=True, help="llama.cpp source tree (for gguf-py)")
    ap.add_argument("--hf-dir", required=True, help="directory from llmbench export-weights")
    ap.add_argument("--out", required=True, help="GGUF file to write")
    a = ap.parse_args()
    sys.path.insert(0, os.path.join(a.llama_cpp, "gguf-py"))
    if "sentencepiece" not in sys.modules:
        try:
            import sentencepiece  # noqa: F401
        except ImportError:
            # gguf-py's vocab module imports it at package import; this script never reads a
            # tokenizer, so an empty stand-in module is enough when the library is absent.
            stub = types.ModuleType("sentencepiece")
            stub.SentencePieceProcessor = None
            sys.modules["sentencepiece"] = stub
    import gguf  # noqa: E402 (llama.cpp's package, found through --llama-cpp)

    with open(os.path.join(a.hf_dir, "config.json")) as f:
        cfg = json.load(f)
    if cfg.get("attention_bias") or "qwen" in cfg.get("model_type", ""):
        sys.exit("peer_gguf: only bias-free llama-family presets are supported")
    tensors = read_safetensors(os.path.join(a.hf_dir, "model.safetensors"))
    n_head, n_kv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    dim = cfg["hidden_size"]
    store = tensors["model.embed_tokens.weight"][0]
    qtype = {"F32": gguf.GGMLQuantizationType.F32, "F16": gguf.GGMLQuantizationType.F16,
             "BF16": gguf.GGMLQuantizationType.BF16}[store]
    ftype = {"F32": gguf.LlamaFileType.ALL_F32, "F16": gguf.LlamaFileType.MOSTLY_F16,
             "BF16": gguf.LlamaFileType.MOSTLY_BF16}[store]

    w = gguf.GGUFWriter(a.out, "llama")
    w.add_name(os.path.basename(os.path.normpath(a.hf_dir)))
    w.add_block_count(cfg["num_hidden_layers"])
    w.add_context_length(cfg["max_position_embeddings"])
    w.add_embedding_length(dim)
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_head_count(n_head)
    w.add_head_count_kv(n_kv)
    w.add_rope_dimension_count(dim // n_head)
    w.add_rope_freq_base(float(cfg.get("rope_theta", 10000.0)))
    w.add_layer_norm_rms_eps(float(cfg["rms_norm_eps"]))
    w.add_vocab_size(cfg["vocab_size"])
    w.add_file_type(ftype)
    tokens, scores, token_types = synthetic_vocab(cfg["vocab_size"])
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(token_types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)

    names = {"model.embed_tokens.weight": "token_embd.weight", "model.norm.weight":
             "output_norm.weight", "lm_head.weight": "output.weight"}
    per_layer = {"input_layernorm": "attn_norm", "self_attn.q_proj": "attn_q",
                 "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v",
                 "self_attn.o_proj": "attn_output", "post_attention_layernorm": "ffn_norm",
                 "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down"}
    for l in range(cfg["num_hidden_layers"]):
        for hf, gg in per_layer.items():
            names[f"model.layers.{l}.{hf}.weight"] = f"blk.{l}.{gg}.weight"
    for hf_name, (dtype, shape, bits) in tensors.items():
        if hf_name not in names:
            sys.exit(f"peer_gguf: unexpected tensor {hf_name}")
        if dtype != store:
            sys.exit(f"peer_gguf: {hf_name} is {dtype}, the embedding is {store}")
        if len(shape) == 1:  # norms stay fp32, as llama.cpp's converter keeps them
            w.add_tensor(names[hf_name], np.ascontiguousarray(to_f32(dtype, bits)))
            continue
        if hf_name.endswith("q_proj.weight"):
            bits = permute_rope_rows(bits, n_head)
        elif hf_name.endswith("k_proj.weight"):
            bits = permute_rope_rows(bits, n_kv)
        w.add_tensor(names[hf_name], np.ascontiguousarray(bits), raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    print(f"wrote {a.out} ({store}, {len(tensors)} tensors)")


if __name__ == "__main__":
    main()
