// The forward pass. Shapes: B sequences, T new tokens each (the prompt length in prefill, 1 in
// decode), R = B * T rows, P = tokens already cached. Rows are sequence-major: row b * T + t.
#include "engine/model.h"

#include <string>

#include "engine/error.h"

namespace llmbench {

Session::Session(const Model& model, int batch, int max_prefill, int max_len)
    : model_(model), c_(model.config()), be_(model.backend()), batch_(batch),
      max_prefill_(max_prefill), max_len_(max_len) {
  if (batch <= 0 || max_prefill <= 0 || max_len < max_prefill)
    throw BadInput("session: batch and lengths must be positive");
  if (max_len > c_.max_seq_len)
    throw BadInput("prompt plus new tokens (" + std::to_string(max_len) +
                   ") exceeds the context length of model '" + c_.name + "' (" +
                   std::to_string(c_.max_seq_len) + ")");
  const std::size_t f = sizeof(float), rows = std::size_t(batch) * max_prefill;
  const std::size_t cache_bytes = std::size_t(batch) * max_len * c_.kv_dim() * f;
  for (int l = 0; l < c_.n_layers; ++l) {
    k_cache_.push_back(be_.alloc(cache_bytes));
    v_cache_.push_back(be_.alloc(cache_bytes));
  }
  x_ = be_.alloc(rows * c_.dim * f);
  h_ = be_.alloc(rows * c_.dim * f);
  qkv_ = be_.alloc(rows * c_.qkv_dim() * f);
  att_ = be_.alloc(rows * c_.q_dim() * f);
  proj_ = be_.alloc(rows * c_.dim * f);
  gate_up_ = be_.alloc(rows * 2 * c_.ffn_dim * f);
  act_ = be_.alloc(rows * c_.ffn_dim * f);
  last_ = be_.alloc(std::size_t(batch) * c_.dim * f);
  logits_ = be_.alloc(std::size_t(batch) * c_.vocab_size * f);
  tokens_ = be_.alloc(rows * sizeof(std::int32_t));
  positions_ = be_.alloc(rows * sizeof(std::int32_t));
  last_rows_ = be_.alloc(std::size_t(batch) * sizeof(std::int32_t));
  next_ = be_.alloc(std::size_t(batch) * sizeof(std::int32_t));
  next_host_.resize(std::size_t(batch));
}

const std::vector<std::int32_t>& Session::prefill(const std::vector<std::int32_t>& tokens,
                                                  int prompt_len) {
  if (prompt_len <= 0 || prompt_len > max_prefill_ ||
      tokens.size() != std::size_t(batch_) * prompt_len)
    throw BadInput("prefill: expected " + std::to_string(batch_) + " x " +
                   std::to_string(prompt_len) + " token ids");
  for (auto t : tokens)
    if (t < 0 || t >= c_.vocab_size)
      throw BadInput("prompt token id " + std::to_string(t) + " is outside the vocabulary [0, " +
                     std::to_string(c_.vocab_size) + ")");
  length_ = 0;
  decode_step_ = 0;
  host_tokens_ = tokens;
  forward(prompt_len, Phase::kPrefill);
  if (tracer_) tracer_->resolve();  // the pass ended with the tokens on the host: synchronised
  return next_host_;
}

const std::vector<std::int32_t>& Session::decode_step(const std::vector<std::int32_t>& tokens) {
  if (tokens.size() != std::size_t(batch_))
    throw BadInput("decode_step: expected one token per sequence");
  if (length_ == 0) throw Error("decode_step before prefill");
  if (length_ + 1 > max_len_)
    throw Error("decode_step: the KV cache holds " + std::to_string(max_len_) + " positions");
  ++decode_step_;
  host_tokens_ = tokens;
  forward(1, Phase::kDecode);
  if (tracer_) tracer_->resolve();
  return next_host_;
}

std::vector<float> Session::last_logits() const {
  std::vector<float> out(std::size_t(batch_) * c_.vocab_size);
  be_.to_host(out.data(), logits_.data(), out.size() * sizeof(float));
  return out;
}

namespace {

// Analytic work of one op: FLOPs (a multiply-add is 2) and bytes read + written (fp32).
struct Work {
  std::int64_t flops = 0, bytes = 0;
};

// out[m, n] = x[m, k] . w[n, k]
Work gemm_work(std::int64_t m, std::int64_t n, std::int64_t k) {
  return {2 * m * n * k, 4 * (m * k + n * k + m * n)};
}

// An op over `elems` values that reads `reads` and writes `writes` arrays of that size.
Work elementwise_work(std::int64_t elems, std::int64_t flops_per_elem, int reads, int writes) {
  return {flops_per_elem * elems, 4 * elems * (reads + writes)};
}

// Causal attention of B x T queries after P cached positions: q.k and p.v over t + 1 keys;
// reads q, the cached k and v of each sequence once, writes the output.
Work attention_work(const ModelConfig& c, std::int64_t B, std::int64_t T, std::int64_t P) {
  const std::int64_t keys = T * P + T * (T + 1) / 2;  // sum over queries of visible keys
  return {4 * B * c.n_heads * c.head_dim() * keys,
          4 * (2 * B * T * c.q_dim() + 2 * B * (P + T) * c.kv_dim())};
}

}  // namespace

void Session::forward(int T, Phase phase) {
  const Weights& w = model_.weights();
  const int B = batch_, R = B * T, P = length_;
  const int D = c_.dim, Q = c_.q_dim(), KV = c_.kv_dim(), QKV = c_.qkv_dim(), F = c_.ffn_dim;
  const int V = c_.vocab_size;
  Tracer* tr = tracer_;
  if (tr) tr->set_phase(phase, decode_step_);
  // Runs one op inside its scope (NVTX range + timer pair when traced).
  auto op = [tr](const char* name, OpCategory category, int layer, Work work, auto&& run) {
    OpScope scope(tr, name, category, layer, work.flops, work.bytes);
    run();
  };
  using C = OpCategory;
  OpScope step(tr, phase == Phase::kPrefill ? "prefill" : "decode_step", C::kRange, -1, 0, 0,
               /*step_range=*/true);

  // Token ids, positions and each sequence's last row: host-computed, small uploads.
  op("tokens_to_device", C::kTransfer, -1, {0, 4 * R}, [&] {
    be_.to_device(tokens_.data(), host_tokens_.data(), std::size_t(R) * sizeof(std::int32_t));
  });
  op("positions_to_device", C::kTransfer, -1, {0, 4 * (R + B)}, [&] {
    host_rows_.resize(std::size_t(R));
    for (int r = 0; r < R; ++r) host_rows_[r] = P + r % T;
    be_.to_device(positions_.data(), host_rows_.data(), std::size_t(R) * sizeof(std::int32_t));
    for (int b = 0; b < B; ++b) host_rows_[b] = b * T + (T - 1);
    be_.to_device(last_rows_.data(), host_rows_.data(), std::size_t(B) * sizeof(std::int32_t));
  });

  const auto* tokens = tokens_.as<std::int32_t>();
  const auto* positions = positions_.as<std::int32_t>();
  float *x = x_.f32(), *h = h_.f32(), *qkv = qkv_.f32(), *att = att_.f32();
  float *proj = proj_.f32(), *gate_up = gate_up_.f32(), *act = act_.f32();
  const std::int64_t RD = std::int64_t(R) * D;

  op("embedding", C::kCopy, -1, {0, 2 * 4 * RD}, [&] {
    be_.embedding(x, w.embed.f32(), tokens, R, D);                        // x: [R, D]
  });
  for (int l = 0; l < c_.n_layers; ++l) {
    const LayerWeights& lw = w.layers[l];
    OpScope layer(tr, "layer", C::kRange, l);
    // ---- attention block ----
    op("attn_norm", C::kNorm, l, elementwise_work(RD, 4, 1, 1), [&] {
      be_.rmsnorm(h, x, lw.attn_norm.f32(), R, D, c_.norm_eps);          // h:   [R, D]
    });
    op("qkv_proj", C::kGemm, l, gemm_work(R, QKV, D), [&] {
      be_.matmul(qkv, h, lw.wqkv.f32(), R, QKV, D, D);                    // qkv: [R, Q | KV | KV]
    });
    if (c_.qkv_bias)
      op("qkv_bias", C::kElementwise, l, elementwise_work(std::int64_t(R) * QKV, 1, 1, 1), [&] {
        be_.add_bias_rows(qkv, R, QKV, lw.bqkv.f32(), QKV);
      });
    op("rope_q", C::kElementwise, l, elementwise_work(std::int64_t(R) * Q, 3, 1, 1), [&] {
      be_.rope(qkv, R, QKV, c_.n_heads, c_.head_dim(), positions, c_.rope_theta);
    });
    op("rope_k", C::kElementwise, l, elementwise_work(std::int64_t(R) * KV, 3, 1, 1), [&] {
      be_.rope(qkv + Q, R, QKV, c_.n_kv_heads, c_.head_dim(), positions, c_.rope_theta);
    });
    op("kv_write_k", C::kCopy, l, elementwise_work(std::int64_t(R) * KV, 0, 1, 1), [&] {
      be_.kv_cache_write(k_cache_[l].f32(), qkv + Q, QKV, B, T, P, max_len_, KV);  // [B, L, KV]
    });
    op("kv_write_v", C::kCopy, l, elementwise_work(std::int64_t(R) * KV, 0, 1, 1), [&] {
      be_.kv_cache_write(v_cache_[l].f32(), qkv + Q + KV, QKV, B, T, P, max_len_, KV);
    });
    op("attention", C::kAttention, l, attention_work(c_, B, T, P), [&] {
      const AttentionShape shape{B, T, P, c_.n_heads, c_.n_kv_heads, c_.head_dim(), QKV, Q,
                                 max_len_};
      be_.attention(att, qkv, k_cache_[l].f32(), v_cache_[l].f32(), shape);  // att: [R, Q]
    });
    op("o_proj", C::kGemm, l, gemm_work(R, D, Q), [&] {
      be_.matmul(proj, att, lw.wo.f32(), R, D, Q, Q);                     // proj: [R, D]
    });
    op("attn_residual", C::kElementwise, l, elementwise_work(RD, 1, 2, 1), [&] {
      be_.add_inplace(x, proj, std::size_t(RD));                          // x += proj
    });
    // ---- MLP block ----
    op("ffn_norm", C::kNorm, l, elementwise_work(RD, 4, 1, 1), [&] {
      be_.rmsnorm(h, x, lw.ffn_norm.f32(), R, D, c_.norm_eps);           // h:   [R, D]
    });
    op("gate_up_proj", C::kGemm, l, gemm_work(R, 2 * F, D), [&] {
      be_.matmul(gate_up, h, lw.w_gate_up.f32(), R, 2 * F, D, D);         // gate_up: [R, F | F]
    });
    op("swiglu", C::kElementwise, l, {5 * std::int64_t(R) * F, 4 * 3 * std::int64_t(R) * F}, [&] {
      be_.swiglu(act, gate_up, R, F);                                     // act: [R, F]
    });
    op("down_proj", C::kGemm, l, gemm_work(R, D, F), [&] {
      be_.matmul(proj, act, lw.w_down.f32(), R, D, F, F);                 // proj: [R, D]
    });
    op("ffn_residual", C::kElementwise, l, elementwise_work(RD, 1, 2, 1), [&] {
      be_.add_inplace(x, proj, std::size_t(RD));                          // x += proj
    });
  }
  // Only each sequence's last position produces a token: gather those rows before the head.
  float* last = last_.f32();
  const std::int64_t BD = std::int64_t(B) * D;
  op("gather_last", C::kCopy, -1, {0, 2 * 4 * BD}, [&] {
    be_.gather_rows(last, x, last_rows_.as<std::int32_t>(), B, D);        // last: [B, D]
  });
  op("final_norm", C::kNorm, -1, elementwise_work(BD, 4, 1, 1), [&] {
    be_.rmsnorm(last, last, w.final_norm.f32(), B, D, c_.norm_eps);
  });
  op("lm_head", C::kGemm, -1, gemm_work(B, V, D), [&] {
    be_.matmul(logits_.f32(), last, w.head(), B, V, D, D);                // logits: [B, V]
  });
  op("argmax", C::kSample, -1, {std::int64_t(B) * V, 4 * std::int64_t(B) * V}, [&] {
    be_.argmax_rows(next_.as<std::int32_t>(), logits_.f32(), B, V);
  });
  op("tokens_to_host", C::kTransfer, -1, {0, 4 * B}, [&] {
    be_.to_host(next_host_.data(), next_.data(), std::size_t(B) * sizeof(std::int32_t));
  });
  length_ = P + T;
}

}  // namespace llmbench
