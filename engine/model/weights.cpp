// Tensor naming, random initialisation, and the fused layout of weights in backend memory.
#include "engine/model/weights.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string_view>

#include "kernels/common/error.h"
#include "kernels/common/half.h"
#include "engine/model/finite.h"
#include "engine/model/rng.h"

namespace llmbench {

std::int64_t TensorSpec::numel() const {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::vector<TensorSpec> hf_tensor_specs(const ModelConfig& c) {
  const std::int64_t d = c.dim, q = c.q_dim(), kv = c.kv_dim(), f = c.ffn_dim;
  std::vector<TensorSpec> specs;
  specs.push_back({"model.embed_tokens.weight", {c.vocab_size, d}});
  for (int l = 0; l < c.n_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    specs.push_back({p + "input_layernorm.weight", {d}});
    specs.push_back({p + "self_attn.q_proj.weight", {q, d}});
    specs.push_back({p + "self_attn.k_proj.weight", {kv, d}});
    specs.push_back({p + "self_attn.v_proj.weight", {kv, d}});
    if (c.qkv_bias) {
      specs.push_back({p + "self_attn.q_proj.bias", {q}});
      specs.push_back({p + "self_attn.k_proj.bias", {kv}});
      specs.push_back({p + "self_attn.v_proj.bias", {kv}});
    }
    specs.push_back({p + "self_attn.o_proj.weight", {d, q}});
    specs.push_back({p + "post_attention_layernorm.weight", {d}});
    specs.push_back({p + "mlp.gate_proj.weight", {f, d}});
    specs.push_back({p + "mlp.up_proj.weight", {f, d}});
    specs.push_back({p + "mlp.down_proj.weight", {d, f}});
  }
  specs.push_back({"model.norm.weight", {d}});
  if (!c.tied_embeddings) specs.push_back({"lm_head.weight", {c.vocab_size, d}});
  return specs;
}

void RandomWeights::fill(const TensorSpec& spec, float* dst) const {
  const std::uint64_t key = stream_key(seed_, fnv1a64(spec.name));
  const std::int64_t n = spec.numel();
  const bool is_bias = std::string_view(spec.name).ends_with(".bias");
  if (spec.shape.size() == 2) {
    const float a = std::sqrt(3.0f / float(spec.shape[1]));
#pragma omp parallel for schedule(static) if (n > 65536)
    for (std::int64_t i = 0; i < n; ++i) dst[i] = (2.0f * stream_uniform(key, i) - 1.0f) * a;
  } else if (is_bias) {
    const float a = 0.02f * std::sqrt(3.0f);
    for (std::int64_t i = 0; i < n; ++i) dst[i] = (2.0f * stream_uniform(key, i) - 1.0f) * a;
  } else {  // RMSNorm weight: near 1, not exactly 1, so a mix-up of norms shows in tests
    for (std::int64_t i = 0; i < n; ++i)
      dst[i] = 1.0f + 0.1f * (2.0f * stream_uniform(key, i) - 1.0f);
  }
}

namespace {

// Fills `dst` with `spec`'s values from `source` and refuses a NaN or Inf among them, naming
// the tensor: one +Inf in a q_proj or an all-NaN embedding otherwise runs with status ok and
// generates token 0 everywhere.
void fill_checked(const TensorSpec& spec, const WeightSource& source, float* dst) {
  source.fill(spec, dst);
  const std::int64_t n = spec.numel();
  const std::int64_t at = first_non_finite(dst, n);
  if (at >= 0)
    throw BadInput("weights: tensor '" + spec.name + "' holds " + float_text(dst[at]) +
                   " at element " + std::to_string(at) + " of " + std::to_string(n) +
                   " (non-finite weights make every logit NaN or Inf)");
}

// Fills `parts` (in order) into one backend buffer, row blocks stacked.
Buffer load_stacked(const std::vector<TensorSpec>& parts, const WeightSource& source,
                    Backend& backend) {
  std::int64_t total = 0;
  for (const auto& p : parts) total += p.numel();
  Buffer buf = backend.alloc(std::size_t(total) * sizeof(float));
  std::vector<float> staging;
  float* dst = buf.f32();
  if (!backend.host_visible()) {
    staging.resize(std::size_t(total));
    dst = staging.data();
  }
  std::int64_t offset = 0;
  for (const auto& p : parts) {
    fill_checked(p, source, dst + offset);
    offset += p.numel();
  }
  if (!backend.host_visible()) backend.to_device(buf.data(), staging.data(), buf.bytes());
  return buf;
}

// A weight matrix's fp32 values (parts stacked row-wise, one inner dimension) quantised into
// int8/int4 blocks of 32 along the input dimension (kernels/cpu/quant.h; deterministic: a pure
// function of the values). CPU only, and the inner dimension must be a multiple of 32.
WeightMatrix quantize_matrix(const std::vector<TensorSpec>& parts, const std::vector<float>& values,
                             Backend& backend, DType dtype) {
  const std::string what = "--dtype " + std::string(dtype_name(dtype));
  if (!backend.host_visible()) throw BadInput(what + " is CPU-only for now");
  const std::int64_t k = parts[0].shape.back();
  if (k % kQuantBlock != 0)
    throw BadInput(what + ": tensor '" + parts[0].name + "' has " + std::to_string(k) +
                   " input features, not a multiple of the block size " +
                   std::to_string(kQuantBlock));
  const std::int64_t rows = std::int64_t(values.size()) / k;
  // A block's fp16 scale is fp16(max|x| / Q), Q = 127 (int8) or 7 (int4) (kernels/cpu/quant.h):
  // finite weights beyond about 8.3e6 (int8) or 4.6e5 (int4) would make it Inf. Checked on the
  // values, before the backend stores the blocks in its own layout; the first such block named.
  const std::int64_t blocks = rows * k / kQuantBlock;
  const float q_max = dtype == DType::kInt8 ? 127.0f : 7.0f;
  std::int64_t first = blocks;
#pragma omp parallel for reduction(min : first) schedule(static) if (blocks > 4096)
  for (std::int64_t b = 0; b < blocks; ++b) {
    float amax = 0.0f;
    for (int j = 0; j < kQuantBlock; ++j)
      amax = std::max(amax, std::fabs(values[std::size_t(b * kQuantBlock + j)]));
    if ((fp32_to_fp16(amax / q_max) & 0x7C00u) == 0x7C00u) first = std::min(first, b);
  }
  if (first < blocks) {
    std::int64_t row = first * kQuantBlock / k, part = 0;
    while (row >= parts[std::size_t(part)].shape[0]) row -= parts[std::size_t(part++)].shape[0];
    throw BadInput("weights: tensor '" + parts[std::size_t(part)].name + "' row " +
                   std::to_string(row) + " is too large for " + what +
                   " (its block scale exceeds the fp16 range); load it as bf16 or fp32");
  }
  WeightMatrix m{backend.alloc(std::size_t(dtype_bytes_for(dtype, rows * k))), dtype};
  backend.quantize_weights(m.buf.data(), values.data(), dtype, rows, int(k));
  return m;
}

// The same for a weight matrix stored as `dtype`: filled in fp32 on the host, then narrowed
// (bf16/fp16) or quantised (int8/int4).
WeightMatrix load_matrix(const std::vector<TensorSpec>& parts, const WeightSource& source,
                         Backend& backend, DType dtype) {
  if (dtype == DType::kFp32) return {load_stacked(parts, source, backend), dtype};
  std::int64_t total = 0;
  for (const auto& p : parts) total += p.numel();
  std::vector<float> values(static_cast<std::size_t>(total));
  std::int64_t offset = 0;
  for (const auto& p : parts) {
    fill_checked(p, source, values.data() + offset);
    offset += p.numel();
  }
  if (dtype_is_quantized(dtype)) return quantize_matrix(parts, values, backend, dtype);
  WeightMatrix m{backend.alloc(std::size_t(total) * sizeof(std::uint16_t)), dtype};
  std::vector<std::uint16_t> staging;
  auto* dst = m.buf.as<std::uint16_t>();
  if (!backend.host_visible()) {
    staging.resize(std::size_t(total));
    dst = staging.data();
  }
  const bool bf16 = dtype == DType::kBf16;
#pragma omp parallel for schedule(static) if (total > 65536)
  for (std::int64_t i = 0; i < total; ++i)
    dst[i] = bf16 ? fp32_to_bf16(values[std::size_t(i)]) : fp32_to_fp16(values[std::size_t(i)]);
  // Finite fp32 values beyond the fp16 range (|x| > 65504) become Inf when narrowed.
  if (!bf16) {
    int any = 0;
#pragma omp parallel for reduction(| : any) schedule(static) if (total > 65536)
    for (std::int64_t i = 0; i < total; ++i) any |= int((dst[i] & 0x7C00u) == 0x7C00u);
    if (any) {
      std::int64_t i = 0;
      while ((dst[i] & 0x7C00u) != 0x7C00u) ++i;
      std::int64_t offset = 0;
      std::size_t part = 0;
      while (offset + parts[part].numel() <= i) offset += parts[part++].numel();
      throw BadInput("weights: tensor '" + parts[part].name + "' holds " +
                     float_text(values[std::size_t(i)]) + " at element " +
                     std::to_string(i - offset) + ", beyond the fp16 range (65504): it would "
                     "become Inf; load it as bf16 or fp32");
    }
  }
  if (!backend.host_visible()) backend.to_device(m.buf.data(), staging.data(), m.buf.bytes());
  return m;
}

}  // namespace

std::int64_t Weights::bytes() const {
  std::int64_t b = std::int64_t(embed.buf.bytes() + final_norm.bytes() + lm_head.buf.bytes());
  for (const auto& l : layers)
    b += std::int64_t(l.attn_norm.bytes() + l.wqkv.buf.bytes() + l.bqkv.bytes() +
                      l.wo.buf.bytes() + l.ffn_norm.bytes() + l.w_gate_up.buf.bytes() +
                      l.w_down.buf.bytes());
  return b;
}

Weights load_weights(const ModelConfig& c, const WeightSource& source, Backend& backend,
                     DType dtype) {
  c.validate();
  // Index the specs by name so the fused layout below reads as a list of names.
  const auto specs = hf_tensor_specs(c);
  auto spec = [&](const std::string& name) -> const TensorSpec& {
    for (const auto& s : specs)
      if (s.name == name) return s;
    throw Error("no tensor named " + name);
  };
  auto one = [&](const std::string& name) { return load_stacked({spec(name)}, source, backend); };
  auto matrix = [&](const std::vector<std::string>& names) {
    std::vector<TensorSpec> parts;
    for (const auto& n : names) parts.push_back(spec(n));
    return load_matrix(parts, source, backend, dtype);
  };

  Weights w;
  // Quantised dtypes are weight-only formats for the GEMM matrices: the token embedding (a
  // gather, not a GEMM) stays fp32, and a tied LM head gets its own quantised copy of it.
  const bool quantized = dtype_is_quantized(dtype);
  w.embed = quantized ? WeightMatrix{one("model.embed_tokens.weight"), DType::kFp32}
                      : matrix({"model.embed_tokens.weight"});
  for (int l = 0; l < c.n_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    LayerWeights lw;
    lw.attn_norm = one(p + "input_layernorm.weight");
    lw.wqkv = matrix({p + "self_attn.q_proj.weight", p + "self_attn.k_proj.weight",
                      p + "self_attn.v_proj.weight"});
    if (c.qkv_bias)
      lw.bqkv = load_stacked({spec(p + "self_attn.q_proj.bias"), spec(p + "self_attn.k_proj.bias"),
                              spec(p + "self_attn.v_proj.bias")},
                             source, backend);
    lw.wo = matrix({p + "self_attn.o_proj.weight"});
    lw.ffn_norm = one(p + "post_attention_layernorm.weight");
    lw.w_gate_up = matrix({p + "mlp.gate_proj.weight", p + "mlp.up_proj.weight"});
    lw.w_down = matrix({p + "mlp.down_proj.weight"});
    w.layers.push_back(std::move(lw));
  }
  w.final_norm = one("model.norm.weight");
  if (!c.tied_embeddings)
    w.lm_head = matrix({"lm_head.weight"});
  else if (quantized)
    w.lm_head = matrix({"model.embed_tokens.weight"});
  return w;
}

}  // namespace llmbench
