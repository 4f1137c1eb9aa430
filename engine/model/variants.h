// Engine variants (--qkv, --kv-cache, --logits, --fuse, --timer, --cuda-graphs,
// --decode-attention, --kv-cache-dtype): per-case switches that make the engine do what naive
// inference engines do, each step traced as an op of its own name, so a benchmark can reproduce
// a known pathology next to the fast path and show what it costs (docs/variants.md); and
// --fuse, --cuda-graphs and
// --decode-attention, the other way: ways to a faster engine than the default (which the lead
// makes the CUDA default once a device has measured it). Every combination generates the same
// tokens as the defaults, but --kv-cache-dtype fp16 (KvDtype below).
// Not here: how the variants run (model.cpp, kv_cache.cpp, the backends' make_op_timer).
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "engine/model/trace.h"

namespace llmbench {

// fused: attention reads q, k and v straight from the fused projection's token-major rows.
// permute: q, k and v are each copied into head-major [batch, heads, seq, head_dim] (ops
// permute_q/k/v), the KV cache is head-major, and the attention output is copied back to rows
// (permute_out), as `x.view(B, T, H, D).transpose(1, 2).contiguous()` engines do.
enum class QkvLayout { kFused, kPermute };

// prealloc: one cache per layer for the whole case, written in place (kv_write_k/v).
// concat: no preallocated cache; every pass allocates a cache of length past + new and copies
// the old cache and the new k/v into it (torch.cat; ops kv_concat_k/v).
// paged: fixed-size blocks and a block table per sequence (kv_write_paged_k/v); attention reads
// through the table (paged_attention).
// paged_gather: the same blocks, gathered into a contiguous scratch cache every pass
// (kv_gather_k/v) for the ordinary attention kernel.
enum class KvCacheKind { kPrealloc, kConcat, kPaged, kPagedGather };

// device: LM head on each sequence's last position, argmax on the device, token ids to the host.
// last: the last position's logits [batch, vocab] to the host (logits_to_host), argmax there
// (argmax_host).
// all: final norm and LM head on every position (as a Hugging Face-style forward does), all
// [batch * new tokens, vocab] logits to the host, argmax of each sequence's last row there.
enum class LogitsMode { kDevice, kLast, kAll };

// none: every op of the layer body its own kernel, as the trace names them.
// small: the small ops a decode step's trace shows beside the GEMMs, fused (docs/variants.md):
// residual add + RMSNorm (attn_residual_norm, ffn_residual_norm), RoPE on q and k with the KV
// write (rope_kv_write; only on the default cache, --kv-cache prealloc with --qkv fused: the other
// caches keep rope_q, rope_k and their own writes), and SwiGLU into the down projection
// (swiglu_down). The same tokens as none.
enum class FuseMode { kNone, kSmall };

// Which CUDA kernel runs the attention calls that do not go through cuBLAS: decode steps and
// prefills of fewer than 32 tokens (every call of the paged cache and of a captured step).
// tiled: the kernel that walks each query's keys in shared-memory tiles; the default.
// streamed: each warp streams its own key and value rows, with the softmax in registers
// (kernels/cuda/attention.cuh, AttentionKernel; a call of a head size or layout it has no form
// for runs tiled).
// CUDA only: the CPU backend has one attention and runs it for both, so the tokens are the same.
enum class DecodeAttention { kTiled, kStreamed };

// The element type of the KV cache. fp32: as every engine variant above. fp16: keys and values
// rounded to IEEE binary16 as they are written (nearest even) and widened exactly in attention
// (kernels/cpu/kv_f16.h): half the bytes a decode step reads from the cache. On the default
// cache (--kv-cache prealloc, --qkv fused; check_kv_dtype) and on the continuous-batching pool
// of ragged cases and serve (engine/model/ragged_forward.h). The one variant
// that changes the numbers: the tokens are those of the fp32 model over a rounded cache, which
// greedy decoding usually but not always turns into the same tokens (docs/variants.md).
enum class KvDtype { kFp32, kFp16 };

struct Variants {
  QkvLayout qkv = QkvLayout::kFused;
  KvCacheKind kv_cache = KvCacheKind::kPrealloc;
  int kv_cache_block = 16;  // tokens per block of the paged caches
  LogitsMode logits = LogitsMode::kDevice;
  TimerMode timer = TimerMode::kDevice;  // how traced ops are timed (trace.h)
  FuseMode fuse = FuseMode::kNone;
  // Ragged offline batches (--prompt-len-stddev, --output-len-stddev): when either is above 0,
  // each sequence's prompt and output length is drawn from a seeded normal distribution around
  // the case's prompt_len and max_new_tokens, and the case runs through the continuous-batching
  // scheduler (engine/bench/ragged_case.h) instead of the static Session. 0 and 0: the static path.
  double prompt_len_stddev = 0;
  double output_len_stddev = 0;
  // --cuda-graphs on: each decode step shape captured once as a CUDA graph and replayed
  // (engine/model/cuda_graph.h); only where the backend can capture and the KV cache, q/k/v
  // layout and logits are the fast paths, else the steps run eagerly with a note. Off: every
  // kernel launched one by one, as always.
  bool cuda_graphs = false;
  DecodeAttention decode_attention = DecodeAttention::kTiled;  // --decode-attention
  KvDtype kv_dtype = KvDtype::kFp32;                            // --kv-cache-dtype

  bool ragged() const { return prompt_len_stddev > 0 || output_len_stddev > 0; }

  bool paged() const {
    return kv_cache == KvCacheKind::kPaged || kv_cache == KvCacheKind::kPagedGather;
  }
  // True when every variant is the default (the block size counts only for paged caches).
  bool is_default() const;
  // The non-default variants as "qkv=permute kv_cache=paged/16 timer=host-nosync" (and
  // "prompt_len_stddev=32 output_len_stddev=8" for ragged cases); "" when all are default. How
  // labels and the run table name them.
  std::string describe() const;
  bool operator==(const Variants&) const = default;
};

std::string_view qkv_layout_name(QkvLayout v);
std::string_view kv_cache_kind_name(KvCacheKind v);
std::string_view logits_mode_name(LogitsMode v);
std::string_view fuse_mode_name(FuseMode v);
std::string_view decode_attention_name(DecodeAttention v);
std::string_view kv_dtype_name(KvDtype v);
// Bytes of one cached key or value element.
inline int kv_dtype_bytes(KvDtype v) { return v == KvDtype::kFp16 ? 2 : 4; }
std::optional<QkvLayout> parse_qkv_layout(std::string_view s);
std::optional<KvCacheKind> parse_kv_cache_kind(std::string_view s);
std::optional<LogitsMode> parse_logits_mode(std::string_view s);
std::optional<FuseMode> parse_fuse_mode(std::string_view s);
std::optional<DecodeAttention> parse_decode_attention(std::string_view s);
std::optional<KvDtype> parse_kv_dtype(std::string_view s);

// BadInput naming the flags when `v` asks for an fp16 KV cache where there is none: a static
// cache other than --kv-cache prealloc with --qkv fused (a ragged case's pool, which has one,
// keeps those defaults).
void check_kv_dtype(const Variants& v);

}  // namespace llmbench
