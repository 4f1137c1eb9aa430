// The decoder body. Shapes: R rows of the current pass (Session: B sequences x T new tokens,
// sequence-major; RaggedForward: every sequence's tokens of the step, in order), D = dim,
// F = ffn_dim, Q = q_dim, KV = kv_dim, QKV = Q + 2 KV. Each op's output is checked right after
// it runs (a no-op unless set_check_ops is on).
#include "engine/model/decoder.h"

#include "engine/model/finite.h"
#include "engine/model/model.h"
#include "engine/model/op_work.h"

namespace llmbench {

DecoderFusion decoder_fusion(const Variants& v) {
  DecoderFusion f;
  if (v.fuse == FuseMode::kNone) return f;
  f.residual_norm = true;
  f.swiglu_down = true;
  f.rope_in_cache_step = v.kv_cache == KvCacheKind::kPrealloc && v.qkv == QkvLayout::kFused;
  return f;
}

Decoder::Decoder(const Model& model, std::size_t max_rows, DecoderFusion fusion)
    : c_(model.config()), w_(model.weights()), be_(model.backend()), fuse_(fusion) {
  const std::size_t f = sizeof(float), rows = max_rows;
  x_ = be_.alloc(rows * c_.dim * f);
  h_ = be_.alloc(rows * c_.dim * f);
  qkv_ = be_.alloc(rows * c_.qkv_dim() * f);
  att_ = be_.alloc(rows * c_.q_dim() * f);
  proj_ = be_.alloc(rows * c_.dim * f);
  gate_up_ = be_.alloc(rows * 2 * c_.ffn_dim * f);
  act_ = be_.alloc(rows * c_.ffn_dim * f);
}

void Decoder::check_output(const char* op, int layer, const float* out,
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
  const std::string when = pass_step_ < 0 ? std::string(pass_kind_)
                                          : std::string(pass_kind_) + " " +
                                                std::to_string(pass_step_);
  throw NonFiniteOutput(float_text(values[at]) + " first appears in " + where + " (" + when +
                        ", element " + std::to_string(at) + " of its output)");
}

void Decoder::embed(Tracer* tr, const std::int32_t* tokens, int R) {
  const std::int64_t RD = std::int64_t(R) * c_.dim;
  const std::int64_t embed_bytes = dtype_bytes_for(w_.embed.dtype, RD) + 4 * RD;
  run_op(tr, "embedding", OpCategory::kCopy, -1, {0, embed_bytes}, [&] {
    be_.embedding_weights(x(), w_.embed.ref(), tokens, R, c_.vocab_size, c_.dim);  // x: [R, D]
  });
  check_output("embedding", -1, x(), RD);
}

void Decoder::project_qkv(Tracer* tr, int l, int R, const std::int32_t* positions) {
  const LayerWeights& lw = w_.layers[l];
  const int D = c_.dim, HD = c_.head_dim(), Q = c_.q_dim(), KV = c_.kv_dim();
  const int QKV = c_.qkv_dim();
  using C = OpCategory;
  float* qkv = this->qkv();
  const std::int64_t RQKV = std::int64_t(R) * QKV;
  run_op(tr, "qkv_proj", C::kGemm, l, gemm_work(R, QKV, D, lw.wqkv.dtype), [&] {
    be_.matmul_weights(qkv, h(), lw.wqkv.ref(), R, QKV, D, D);  // qkv: [R, Q | KV | KV]
  });
  check_output("qkv_proj", l, qkv, RQKV);
  if (c_.qkv_bias) {
    run_op(tr, "qkv_bias", C::kElementwise, l, elementwise_work(RQKV, 1, 1, 1),
           [&] { be_.add_bias_rows(qkv, R, QKV, lw.bqkv.f32(), QKV); });
    check_output("qkv_bias", l, qkv, RQKV);
  }
  if (fuse_.rope_in_cache_step) return;  // rope_kv_write, in the cache step
  run_op(tr, "rope_q", C::kElementwise, l, elementwise_work(std::int64_t(R) * Q, 3, 1, 1), [&] {
    be_.rope(qkv, R, QKV, c_.n_heads, HD, positions, c_.rope_theta);
  });
  check_output("rope_q", l, qkv, RQKV);
  run_op(tr, "rope_k", C::kElementwise, l, elementwise_work(std::int64_t(R) * KV, 3, 1, 1), [&] {
    be_.rope(qkv + Q, R, QKV, c_.n_kv_heads, HD, positions, c_.rope_theta);
  });
  check_output("rope_k", l, qkv, RQKV);
}

void Decoder::norm(Tracer* tr, const char* op, int l, int R, const float* weight) {
  const std::int64_t RD = std::int64_t(R) * c_.dim;
  run_op(tr, op, OpCategory::kNorm, l, elementwise_work(RD, 4, 1, 1), [&] {
    be_.rmsnorm(h(), x(), weight, R, c_.dim, c_.norm_eps);               // h: [R, D]
  });
  check_output(op, l, h(), RD);
}

void Decoder::residual(Tracer* tr, const char* op, int l, int R) {
  const std::int64_t RD = std::int64_t(R) * c_.dim;
  run_op(tr, op, OpCategory::kElementwise, l, elementwise_work(RD, 1, 2, 1), [&] {
    be_.add_inplace(x(), proj_.f32(), std::size_t(RD));                  // x += proj
  });
  check_output(op, l, x(), RD);
}

void Decoder::residual_norm(Tracer* tr, const char* op, int l, int R, const float* weight) {
  const std::int64_t RD = std::int64_t(R) * c_.dim;
  // Reads x and proj, writes x and h: one read of x fewer than the add and the norm apart.
  run_op(tr, op, OpCategory::kNorm, l, elementwise_work(RD, 5, 2, 2), [&] {
    be_.add_rmsnorm(x(), proj_.f32(), h(), weight, R, c_.dim, c_.norm_eps);  // x += proj; h
  });
  check_output(op, l, x(), RD);
  check_output(op, l, h(), RD);
}

void Decoder::mlp_down(Tracer* tr, int l, int R) {
  const LayerWeights& lw = w_.layers[l];
  const int D = c_.dim, F = c_.ffn_dim;
  const std::int64_t RD = std::int64_t(R) * D, RF = std::int64_t(R) * F;
  const DType wb = w_.head().dtype;
  float *proj = proj_.f32(), *gate_up = gate_up_.f32(), *act = act_.f32();
  if (fuse_.swiglu_down) {
    // The GEMM's work with gate_up [R, 2F] read in place of act [R, F], plus SwiGLU's FLOPs.
    Work work = gemm_work(R, D, F, wb);
    work.flops += 5 * RF;
    work.bytes += 4 * RF;
    run_op(tr, "swiglu_down", OpCategory::kGemm, l, work, [&] {
      be_.swiglu_down(proj, gate_up, act, lw.w_down.ref(), R, D, F);      // proj: [R, D]
    });
    check_output("swiglu_down", l, proj, RD);
    return;
  }
  run_op(tr, "swiglu", OpCategory::kElementwise, l, {5 * RF, 4 * 3 * RF}, [&] {
    be_.swiglu(act, gate_up, R, F);                                       // act: [R, F]
  });
  check_output("swiglu", l, act, RF);
  run_op(tr, "down_proj", OpCategory::kGemm, l, gemm_work(R, D, F, wb), [&] {
    be_.matmul_weights(proj, act, lw.w_down.ref(), R, D, F, F);           // proj: [R, D]
  });
  check_output("down_proj", l, proj, RD);
}

void Decoder::layers(Tracer* tr, int R, const std::int32_t* positions, const Attend& attend) {
  const int D = c_.dim, F = c_.ffn_dim, Q = c_.q_dim();
  const std::int64_t RD = std::int64_t(R) * D, RF = std::int64_t(R) * F;
  const DType wb = w_.head().dtype;  // the weight matrices' dtype (gemm_work counts its bytes)
  using C = OpCategory;
  float *h = this->h(), *att = this->att(), *proj = proj_.f32(), *gate_up = gate_up_.f32();
  const bool fused = fuse_.residual_norm;
  for (int l = 0; l < c_.n_layers; ++l) {
    const LayerWeights& lw = w_.layers[l];
    OpScope layer(tr, "layer", C::kRange, l);
    // ---- attention block ----
    if (l == 0 || !fused) norm(tr, "attn_norm", l, R, lw.attn_norm.f32());  // h: [R, D]
    project_qkv(tr, l, R, positions);                                     // qkv:  [R, QKV]
    attend(l);                                                            // att:  [R, Q]
    run_op(tr, "o_proj", C::kGemm, l, gemm_work(R, D, Q, wb), [&] {
      be_.matmul_weights(proj, att, lw.wo.ref(), R, D, Q, Q);             // proj: [R, D]
    });
    check_output("o_proj", l, proj, RD);
    if (fused) {
      residual_norm(tr, "attn_residual_norm", l, R, lw.ffn_norm.f32());  // x += proj; h
    } else {
      residual(tr, "attn_residual", l, R);                                // x += proj
      norm(tr, "ffn_norm", l, R, lw.ffn_norm.f32());                      // h:   [R, D]
    }
    // ---- MLP block ----
    run_op(tr, "gate_up_proj", C::kGemm, l, gemm_work(R, 2 * F, D, wb), [&] {
      be_.matmul_weights(gate_up, h, lw.w_gate_up.ref(), R, 2 * F, D, D);  // gate_up: [R, F | F]
    });
    check_output("gate_up_proj", l, gate_up, 2 * RF);
    mlp_down(tr, l, R);                                                   // proj: [R, D]
    // Fused, the next layer's attn_norm comes with this residual (h for layer l + 1).
    if (fused && l + 1 < c_.n_layers)
      residual_norm(tr, "ffn_residual_norm", l, R, w_.layers[l + 1].attn_norm.f32());
    else
      residual(tr, "ffn_residual", l, R);                                 // x += proj
  }
}

void Decoder::gather_last(Tracer* tr, float* out, const std::int32_t* rows, int n) {
  const std::int64_t ND = std::int64_t(n) * c_.dim;
  run_op(tr, "gather_last", OpCategory::kCopy, -1, {0, 2 * 4 * ND}, [&] {
    be_.gather_rows(out, x(), rows, n, c_.dim);                         // out: [n, D]
  });
  check_output("gather_last", -1, out, ND);
}

void Decoder::final_norm_and_head(Tracer* tr, float* hidden, const float* in, int rows,
                                  float* logits) {
  const int D = c_.dim, V = c_.vocab_size;
  const std::int64_t RD = std::int64_t(rows) * D, RV = std::int64_t(rows) * V;
  run_op(tr, "final_norm", OpCategory::kNorm, -1, elementwise_work(RD, 4, 1, 1), [&] {
    be_.rmsnorm(hidden, in, w_.final_norm.f32(), rows, D, c_.norm_eps);  // hidden: [rows, D]
  });
  check_output("final_norm", -1, hidden, RD);
  run_op(tr, "lm_head", OpCategory::kGemm, -1, gemm_work(rows, V, D, w_.head().dtype), [&] {
    be_.matmul_weights(logits, hidden, w_.head(), rows, V, D, D);       // logits: [rows, V]
  });
  check_output("lm_head", -1, logits, RV);
}

void Decoder::greedy_tokens(Tracer* tr, const float* logits, int rows, std::int32_t* next,
                            std::int32_t* next_host) {
  const std::int64_t RV = std::int64_t(rows) * c_.vocab_size;
  run_op(tr, "argmax", OpCategory::kSample, -1, {RV, 4 * RV}, [&] {
    be_.argmax_rows(next, logits, rows, c_.vocab_size);
  });
  run_op(tr, "tokens_to_host", OpCategory::kTransfer, -1, {0, 4 * std::int64_t(rows)}, [&] {
    be_.to_host(next_host, next, std::size_t(rows) * sizeof(std::int32_t));
  });
}

}  // namespace llmbench
