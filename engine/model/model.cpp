// The forward pass. Shapes: B sequences, T new tokens each (the prompt length in prefill, 1 in
// decode), R = B * T rows, P = tokens already cached. Rows are sequence-major: row b * T + t.
// With default Variants this is the fast path; each variant replaces a step by what a naive
// engine does, traced under its own op name (docs/variants.md).
#include "engine/model/model.h"

#include <string>

#include "kernels/common/error.h"
#include "engine/model/finite.h"
#include "engine/model/op_work.h"
#include "kernels/cpu/argmax.h"

namespace llmbench {

namespace {

// The config, once the Session's sizes are checked against it (before anything is allocated).
const ModelConfig& checked(const ModelConfig& c, int batch, int max_prefill, int max_len) {
  if (batch <= 0 || max_prefill <= 0 || max_len < max_prefill)
    throw BadInput("session: batch and lengths must be positive");
  if (max_len > c.max_seq_len)
    throw BadInput("prompt plus new tokens (" + std::to_string(max_len) +
                   ") exceeds the context length of model '" + c.name + "' (" +
                   std::to_string(c.max_seq_len) + ")");
  return c;
}

}  // namespace

Session::Session(const Model& model, int batch, int max_prefill, int max_len,
                 const Variants& variants)
    : model_(model), c_(checked(model.config(), batch, max_prefill, max_len)),
      be_(model.backend()), batch_(batch), max_prefill_(max_prefill), max_len_(max_len),
      variants_(variants), kv_(be_, c_, batch, max_len, variants) {
  const std::size_t f = sizeof(float), rows = std::size_t(batch) * max_prefill;
  x_ = be_.alloc(rows * c_.dim * f);
  h_ = be_.alloc(rows * c_.dim * f);
  qkv_ = be_.alloc(rows * c_.qkv_dim() * f);
  att_ = be_.alloc(rows * c_.q_dim() * f);
  proj_ = be_.alloc(rows * c_.dim * f);
  gate_up_ = be_.alloc(rows * 2 * c_.ffn_dim * f);
  act_ = be_.alloc(rows * c_.ffn_dim * f);
  if (variants.qkv == QkvLayout::kPermute) {
    q_hm_ = be_.alloc(rows * c_.q_dim() * f);
    att_hm_ = be_.alloc(rows * c_.q_dim() * f);
    k_hm_ = be_.alloc(rows * c_.kv_dim() * f);
    v_hm_ = be_.alloc(rows * c_.kv_dim() * f);
  }
  last_ = be_.alloc(std::size_t(batch) * c_.dim * f);
  const std::size_t logit_rows = variants.logits == LogitsMode::kAll ? rows : std::size_t(batch);
  logits_ = be_.alloc(logit_rows * c_.vocab_size * f);
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
  const std::size_t V = std::size_t(c_.vocab_size);
  std::vector<float> out(std::size_t(batch_) * V);
  if (variants_.logits != LogitsMode::kAll) {
    be_.to_host(out.data(), logits_.data(), out.size() * sizeof(float));
    return out;
  }
  // --logits all: [B * T, V]; sequence b's last position is row b * T + T - 1.
  const std::size_t T = std::size_t(last_pass_tokens_);
  for (std::size_t b = 0; b < std::size_t(batch_); ++b)
    be_.to_host(out.data() + b * V, logits_.f32() + (b * T + T - 1) * V, V * sizeof(float));
  return out;
}

void Session::check_output(const char* op, int layer, const float* out,
                           std::int64_t count) const {
  if (!check_ops_) return;
  std::vector<float> host;
  const float* values = out;
  if (!be_.host_visible()) {
    host.resize(std::size_t(count));
    be_.to_host(host.data(), out, std::size_t(count) * sizeof(float));
    values = host.data();
  }
  const std::int64_t at = first_non_finite(values, count);
  if (at < 0) return;
  const std::string where = layer >= 0 ? "layer " + std::to_string(layer) + ", op " + op
                                       : std::string("op ") + op;
  const std::string when =
      decode_step_ == 0 ? "prefill" : "decode step " + std::to_string(decode_step_);
  throw NonFiniteOutput(float_text(values[at]) + " first appears in " + where + " (" + when +
                        ", element " + std::to_string(at) + " of its output)");
}

void Session::forward(int T, Phase phase) {
  const Weights& w = model_.weights();
  const int B = batch_, R = B * T, P = length_, D = c_.dim, F = c_.ffn_dim;
  Tracer* tr = tracer_;
  if (tr) tr->set_phase(phase, decode_step_);
  using C = OpCategory;
  OpScope step(tr, phase == Phase::kPrefill ? "prefill" : "decode_step", C::kRange, -1, 0, 0,
               /*step_range=*/true);

  // Token ids, positions and each sequence's last row: host-computed, small uploads.
  run_op(tr, "tokens_to_device", C::kTransfer, -1, {0, 4 * R}, [&] {
    be_.to_device(tokens_.data(), host_tokens_.data(), std::size_t(R) * sizeof(std::int32_t));
  });
  run_op(tr, "positions_to_device", C::kTransfer, -1, {0, 4 * (R + B)}, [&] {
    host_rows_.resize(std::size_t(R));
    for (int r = 0; r < R; ++r) host_rows_[r] = P + r % T;
    be_.to_device(positions_.data(), host_rows_.data(), std::size_t(R) * sizeof(std::int32_t));
    for (int b = 0; b < B; ++b) host_rows_[b] = b * T + (T - 1);
    be_.to_device(last_rows_.data(), host_rows_.data(), std::size_t(B) * sizeof(std::int32_t));
  });
  kv_.begin_pass(tr, P, T);  // paged caches map blocks here (block_table_to_device)

  float *x = x_.f32(), *h = h_.f32(), *att = att_.f32();
  float *proj = proj_.f32(), *gate_up = gate_up_.f32(), *act = act_.f32();
  const std::int64_t RD = std::int64_t(R) * D;
  const DType wb = w.head().dtype;  // the weight matrices' dtype (gemm_work counts its bytes)

  const std::int64_t embed_bytes = dtype_bytes_for(w.embed.dtype, RD) + 4 * RD;
  run_op(tr, "embedding", C::kCopy, -1, {0, embed_bytes}, [&] {
    be_.embedding_weights(x, w.embed.ref(), tokens_.as<std::int32_t>(), R, c_.vocab_size,
                          D);  // x: [R, D]
  });
  check_output("embedding", -1, x, RD);
  for (int l = 0; l < c_.n_layers; ++l) {
    const LayerWeights& lw = w.layers[l];
    OpScope layer(tr, "layer", C::kRange, l);
    // ---- attention block ----
    run_op(tr, "attn_norm", C::kNorm, l, elementwise_work(RD, 4, 1, 1), [&] {
      be_.rmsnorm(h, x, lw.attn_norm.f32(), R, D, c_.norm_eps);          // h:    [R, D]
    });
    check_output("attn_norm", l, h, RD);
    attention_block(l, T);                                                // att:  [R, Q]
    run_op(tr, "o_proj", C::kGemm, l, gemm_work(R, D, c_.q_dim(), wb), [&] {
      be_.matmul_weights(proj, att, lw.wo.ref(), R, D, c_.q_dim(), c_.q_dim());   // proj: [R, D]
    });
    check_output("o_proj", l, proj, RD);
    run_op(tr, "attn_residual", C::kElementwise, l, elementwise_work(RD, 1, 2, 1), [&] {
      be_.add_inplace(x, proj, std::size_t(RD));                          // x += proj
    });
    check_output("attn_residual", l, x, RD);
    // ---- MLP block ----
    run_op(tr, "ffn_norm", C::kNorm, l, elementwise_work(RD, 4, 1, 1), [&] {
      be_.rmsnorm(h, x, lw.ffn_norm.f32(), R, D, c_.norm_eps);           // h:   [R, D]
    });
    check_output("ffn_norm", l, h, RD);
    run_op(tr, "gate_up_proj", C::kGemm, l, gemm_work(R, 2 * F, D, wb), [&] {
      be_.matmul_weights(gate_up, h, lw.w_gate_up.ref(), R, 2 * F, D, D);  // gate_up: [R, F | F]
    });
    const std::int64_t RF = std::int64_t(R) * F;
    check_output("gate_up_proj", l, gate_up, 2 * RF);
    run_op(tr, "swiglu", C::kElementwise, l, {5 * RF, 4 * 3 * RF}, [&] {
      be_.swiglu(act, gate_up, R, F);                                     // act: [R, F]
    });
    check_output("swiglu", l, act, RF);
    run_op(tr, "down_proj", C::kGemm, l, gemm_work(R, D, F, wb), [&] {
      be_.matmul_weights(proj, act, lw.w_down.ref(), R, D, F, F);         // proj: [R, D]
    });
    check_output("down_proj", l, proj, RD);
    run_op(tr, "ffn_residual", C::kElementwise, l, elementwise_work(RD, 1, 2, 1), [&] {
      be_.add_inplace(x, proj, std::size_t(RD));                          // x += proj
    });
    check_output("ffn_residual", l, x, RD);
  }
  head(T);
  length_ = P + T;
  last_pass_tokens_ = T;
}

void Session::attention_block(int l, int T) {
  const LayerWeights& lw = model_.weights().layers[l];
  const int B = batch_, R = B * T, P = length_, D = c_.dim, HD = c_.head_dim();
  const int Q = c_.q_dim(), KV = c_.kv_dim(), QKV = c_.qkv_dim();
  Tracer* tr = tracer_;
  using C = OpCategory;
  float* qkv = qkv_.f32();
  const auto* positions = positions_.as<std::int32_t>();

  const DType wb = lw.wqkv.dtype;
  run_op(tr, "qkv_proj", C::kGemm, l, gemm_work(R, QKV, D, wb), [&] {
    be_.matmul_weights(qkv, h_.f32(), lw.wqkv.ref(), R, QKV, D, D);  // qkv: [R, Q | KV | KV]
  });
  const std::int64_t RQKV = std::int64_t(R) * QKV;
  check_output("qkv_proj", l, qkv, RQKV);
  if (c_.qkv_bias)
    run_op(tr, "qkv_bias", C::kElementwise, l, elementwise_work(std::int64_t(R) * QKV, 1, 1, 1),
           [&] { be_.add_bias_rows(qkv, R, QKV, lw.bqkv.f32(), QKV); });
  if (c_.qkv_bias) check_output("qkv_bias", l, qkv, RQKV);
  run_op(tr, "rope_q", C::kElementwise, l, elementwise_work(std::int64_t(R) * Q, 3, 1, 1), [&] {
    be_.rope(qkv, R, QKV, c_.n_heads, HD, positions, c_.rope_theta);
  });
  check_output("rope_q", l, qkv, RQKV);
  run_op(tr, "rope_k", C::kElementwise, l, elementwise_work(std::int64_t(R) * KV, 3, 1, 1), [&] {
    be_.rope(qkv + Q, R, QKV, c_.n_kv_heads, HD, positions, c_.rope_theta);
  });
  check_output("rope_k", l, qkv, RQKV);

  // Where q, k, v and the attention output live: the fused rows (fast path), or head-major
  // copies (--qkv permute).
  const HeadStrides rows = token_major(T, QKV, HD);
  if (variants_.qkv == QkvLayout::kFused) {
    kv_.append(tr, l, qkv + Q, qkv + Q + KV, rows, P, T);
    kv_.attend(tr, l, att_.f32(), token_major(T, Q, HD), qkv, rows, P, T);  // att: [R, Q]
    check_output("attention", l, att_.f32(), std::int64_t(R) * Q);
    return;
  }
  const HeadStrides q_hm = head_major(c_.n_heads, T, HD);
  const HeadStrides kv_hm = head_major(c_.n_kv_heads, T, HD);
  run_op(tr, "permute_q", C::kCopy, l, copy_work(std::int64_t(R) * Q), [&] {
    be_.copy_heads(q_hm_.f32(), q_hm, qkv, rows, B, T, c_.n_heads, HD);   // [B, H, T, HD]
  });
  run_op(tr, "permute_k", C::kCopy, l, copy_work(std::int64_t(R) * KV), [&] {
    be_.copy_heads(k_hm_.f32(), kv_hm, qkv + Q, rows, B, T, c_.n_kv_heads, HD);
  });
  run_op(tr, "permute_v", C::kCopy, l, copy_work(std::int64_t(R) * KV), [&] {
    be_.copy_heads(v_hm_.f32(), kv_hm, qkv + Q + KV, rows, B, T, c_.n_kv_heads, HD);
  });
  kv_.append(tr, l, k_hm_.f32(), v_hm_.f32(), kv_hm, P, T);
  kv_.attend(tr, l, att_hm_.f32(), q_hm, q_hm_.f32(), q_hm, P, T);      // [B, H, T, HD]
  check_output("attention", l, att_hm_.f32(), std::int64_t(R) * Q);
  // attn_output.transpose(1, 2).contiguous(): back to rows for o_proj.
  run_op(tr, "permute_out", C::kCopy, l, copy_work(std::int64_t(R) * Q), [&] {
    be_.copy_heads(att_.f32(), token_major(T, Q, HD), att_hm_.f32(), q_hm, B, T,
                   c_.n_heads, HD);                                       // att: [R, Q]
  });
}

void Session::head(int T) {
  const Weights& w = model_.weights();
  const int B = batch_, R = B * T, D = c_.dim, V = c_.vocab_size;
  Tracer* tr = tracer_;
  using C = OpCategory;
  float* logits = logits_.f32();
  // --logits all runs the head on every row, as a Hugging Face-style forward does; the others
  // only on each sequence's last position, gathered first.
  const bool all = variants_.logits == LogitsMode::kAll;
  const int rows = all ? R : B;
  float* hidden = all ? h_.f32() : last_.f32();
  const std::int64_t RD = std::int64_t(rows) * D, RV = std::int64_t(rows) * V;
  if (!all)
    run_op(tr, "gather_last", C::kCopy, -1, {0, 2 * 4 * RD}, [&] {
      be_.gather_rows(hidden, x_.f32(), last_rows_.as<std::int32_t>(), B, D);  // last: [B, D]
    });
  if (!all) check_output("gather_last", -1, hidden, RD);
  run_op(tr, "final_norm", C::kNorm, -1, elementwise_work(RD, 4, 1, 1), [&] {
    be_.rmsnorm(hidden, all ? x_.f32() : hidden, w.final_norm.f32(), rows, D, c_.norm_eps);
  });
  check_output("final_norm", -1, hidden, RD);
  const DType wb = w.head().dtype;
  run_op(tr, "lm_head", C::kGemm, -1, gemm_work(rows, V, D, wb), [&] {
    be_.matmul_weights(logits, hidden, w.head(), rows, V, D, D);          // logits: [rows, V]
  });
  check_output("lm_head", -1, logits, RV);
  if (variants_.logits == LogitsMode::kDevice) {
    run_op(tr, "argmax", C::kSample, -1, {RV, 4 * RV}, [&] {
      be_.argmax_rows(next_.as<std::int32_t>(), logits, B, V);
    });
    run_op(tr, "tokens_to_host", C::kTransfer, -1, {0, 4 * B}, [&] {
      be_.to_host(next_host_.data(), next_.data(), std::size_t(B) * sizeof(std::int32_t));
    });
    return;
  }
  // --logits last|all: every computed logit to the host, argmax there (logits.cpu().argmax()).
  logits_host_.resize(std::size_t(RV));
  run_op(tr, "logits_to_host", C::kTransfer, -1, {0, 4 * RV}, [&] {
    be_.to_host(logits_host_.data(), logits, std::size_t(RV) * sizeof(float));
  });
  const std::int64_t BV = std::int64_t(B) * V;
  run_op(tr, "argmax_host", C::kSample, -1, {BV, 4 * BV}, [&] {
    const int per_seq = rows / B;  // 1, or T with --logits all: the last of them
    for (int b = 0; b < B; ++b)
      cpu::argmax_rows(&next_host_[std::size_t(b)],
                       logits_host_.data() + (std::size_t(b) * per_seq + per_seq - 1) * V, 1, V);
  });
}

}  // namespace llmbench
