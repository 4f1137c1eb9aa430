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
  be_.to_device(tokens_.data(), tokens.data(), tokens.size() * sizeof(std::int32_t));
  forward(prompt_len);
  return next_host_;
}

const std::vector<std::int32_t>& Session::decode_step(const std::vector<std::int32_t>& tokens) {
  if (tokens.size() != std::size_t(batch_))
    throw BadInput("decode_step: expected one token per sequence");
  if (length_ == 0) throw Error("decode_step before prefill");
  if (length_ + 1 > max_len_)
    throw Error("decode_step: the KV cache holds " + std::to_string(max_len_) + " positions");
  be_.to_device(tokens_.data(), tokens.data(), tokens.size() * sizeof(std::int32_t));
  forward(1);
  return next_host_;
}

std::vector<float> Session::last_logits() const {
  std::vector<float> out(std::size_t(batch_) * c_.vocab_size);
  be_.to_host(out.data(), logits_.data(), out.size() * sizeof(float));
  return out;
}

void Session::forward(int T) {
  const Weights& w = model_.weights();
  const int B = batch_, R = B * T, P = length_;
  const int D = c_.dim, Q = c_.q_dim(), KV = c_.kv_dim(), QKV = c_.qkv_dim(), F = c_.ffn_dim;

  // Positions and the rows holding each sequence's last token (host-computed, tiny uploads).
  host_rows_.resize(std::size_t(R));
  for (int r = 0; r < R; ++r) host_rows_[r] = P + r % T;
  be_.to_device(positions_.data(), host_rows_.data(), std::size_t(R) * sizeof(std::int32_t));
  for (int b = 0; b < B; ++b) host_rows_[b] = b * T + (T - 1);
  be_.to_device(last_rows_.data(), host_rows_.data(), std::size_t(B) * sizeof(std::int32_t));

  const auto* tokens = tokens_.as<std::int32_t>();
  const auto* positions = positions_.as<std::int32_t>();
  float *x = x_.f32(), *h = h_.f32(), *qkv = qkv_.f32(), *att = att_.f32();
  float *proj = proj_.f32(), *gate_up = gate_up_.f32(), *act = act_.f32();

  be_.embedding(x, w.embed.f32(), tokens, R, D);                        // x: [R, D]
  for (int l = 0; l < c_.n_layers; ++l) {
    const LayerWeights& lw = w.layers[l];
    // ---- attention block ----
    be_.rmsnorm(h, x, lw.attn_norm.f32(), R, D, c_.norm_eps);          // h:   [R, D]
    be_.matmul(qkv, h, lw.wqkv.f32(), R, QKV, D, D);                    // qkv: [R, Q | KV | KV]
    if (c_.qkv_bias) be_.add_bias_rows(qkv, R, QKV, lw.bqkv.f32(), QKV);
    be_.rope(qkv, R, QKV, c_.n_heads, c_.head_dim(), positions, c_.rope_theta);           // q
    be_.rope(qkv + Q, R, QKV, c_.n_kv_heads, c_.head_dim(), positions, c_.rope_theta);    // k
    be_.kv_cache_write(k_cache_[l].f32(), qkv + Q, QKV, B, T, P, max_len_, KV);  // [B, L, KV]
    be_.kv_cache_write(v_cache_[l].f32(), qkv + Q + KV, QKV, B, T, P, max_len_, KV);
    const AttentionShape shape{B, T, P, c_.n_heads, c_.n_kv_heads, c_.head_dim(), QKV, Q,
                               max_len_};
    be_.attention(att, qkv, k_cache_[l].f32(), v_cache_[l].f32(), shape);  // att: [R, Q]
    be_.matmul(proj, att, lw.wo.f32(), R, D, Q, Q);                     // proj: [R, D]
    be_.add_inplace(x, proj, std::size_t(R) * D);                       // x += proj
    // ---- MLP block ----
    be_.rmsnorm(h, x, lw.ffn_norm.f32(), R, D, c_.norm_eps);           // h:   [R, D]
    be_.matmul(gate_up, h, lw.w_gate_up.f32(), R, 2 * F, D, D);         // gate_up: [R, F | F]
    be_.swiglu(act, gate_up, R, F);                                     // act: [R, F]
    be_.matmul(proj, act, lw.w_down.f32(), R, D, F, F);                 // proj: [R, D]
    be_.add_inplace(x, proj, std::size_t(R) * D);                       // x += proj
  }
  // Only each sequence's last position produces a token: gather those rows before the head.
  float* last = last_.f32();
  be_.gather_rows(last, x, last_rows_.as<std::int32_t>(), B, D);        // last: [B, D]
  be_.rmsnorm(last, last, w.final_norm.f32(), B, D, c_.norm_eps);
  be_.matmul(logits_.f32(), last, w.head(), B, c_.vocab_size, D, D);    // logits: [B, V]
  be_.argmax_rows(next_.as<std::int32_t>(), logits_.f32(), B, c_.vocab_size);
  be_.to_host(next_host_.data(), next_.data(), std::size_t(B) * sizeof(std::int32_t));
  length_ = P + T;
}

}  // namespace llmbench
