// The decoder body of the forward pass, written once: the embedding; per layer the norms, the
// q/k/v projection with its bias, RoPE, the output projection, the SwiGLU MLP and the
// residuals; the final norm and the LM head. Both forward passes run it: Session (model.h, a
// static batch) and RaggedForward (ragged_forward.h, one continuous-batching step). They differ
// only in the step that writes a layer's keys and values to the cache and attends over them,
// which each passes in; so their op sequences and names line up and a request's tokens match.
// With --fuse small (DecoderFusion) some pairs of ops run as one fused op, the same arithmetic.
// Also here: the diagnostic that checks every op's output for NaN/Inf (set_check_ops).
// Not here: uploads of token ids and positions, the KV cache, sampling and the --logits modes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "engine/model/backend.h"
#include "engine/model/config.h"
#include "engine/model/trace.h"
#include "engine/model/variants.h"
#include "engine/model/weights.h"
#include "kernels/common/error.h"

namespace llmbench {

class Model;

// What set_check_ops finds: the first op whose output is not finite.
class NonFiniteOutput : public Error {
 public:
  using Error::Error;
};

// Which fused ops the layer body runs (--fuse small; the op names are docs/variants.md's).
struct DecoderFusion {
  // x += proj and the next RMSNorm as one op: attn_residual_norm (attn_residual + ffn_norm) and
  // ffn_residual_norm (ffn_residual + the next layer's attn_norm; the last layer keeps
  // ffn_residual, since the final norm runs on the gathered last rows).
  bool residual_norm = false;
  // swiglu and down_proj as one op, swiglu_down.
  bool swiglu_down = false;
  // RoPE left to the cache step, which rotates q and k as it writes k and v (rope_kv_write):
  // project_qkv runs no rope_q / rope_k.
  bool rope_in_cache_step = false;
};

// The fusion of a Session with `variants`: none unless --fuse small; RoPE goes to the cache step
// only on the cache that has the fused write (--kv-cache prealloc, --qkv fused).
DecoderFusion decoder_fusion(const Variants& variants);

class Decoder {
 public:
  // The step a caller passes to layers(): write layer `l`'s new keys and values (in qkv() rows,
  // after RoPE) to its cache and leave the attention output in att() rows, [R, q_dim].
  using Attend = std::function<void(int l)>;

  // Allocates the activations for up to `max_rows` rows.
  Decoder(const Model& model, std::size_t max_rows, DecoderFusion fusion = {});

  const DecoderFusion& fusion() const { return fuse_; }

  // Activations (R rows of the current pass; shapes in the comments of decoder.cpp).
  float* x() const { return x_.f32(); }      // [R, dim]       residual stream
  float* h() const { return h_.f32(); }      // [R, dim]       normed input of a block
  float* qkv() const { return qkv_.f32(); }  // [R, qkv_dim]   fused q | k | v projections
  float* att() const { return att_.f32(); }  // [R, q_dim]     attention output

  // x = the embedding rows of `tokens` (R ids in backend memory).
  void embed(Tracer* tr, const std::int32_t* tokens, int R);
  // Every layer over R rows at `positions` (backend memory); `attend` is the cache step.
  void layers(Tracer* tr, int R, const std::int32_t* positions, const Attend& attend);
  // out = the x() rows listed in `rows` (n of them, backend memory): each sequence's last row.
  void gather_last(Tracer* tr, float* out, const std::int32_t* rows, int n);
  // hidden = final_norm(in), then logits = LM head(hidden): `rows` rows of dim values in,
  // [rows, vocab] logits out. `in` may equal `hidden`.
  void final_norm_and_head(Tracer* tr, float* hidden, const float* in, int rows, float* logits);
  // The greedy token of each of `rows` logits rows: argmax into `next` (backend memory), then
  // copied to `next_host` (the step's one synchronisation).
  void greedy_tokens(Tracer* tr, const float* logits, int rows, std::int32_t* next,
                     std::int32_t* next_host);

  // Diagnostic (off by default, and then a not-taken branch per op): check_output reads each
  // op's output and throws NonFiniteOutput naming the op, its layer and the pass (set_pass).
  void set_check_ops(bool on) { check_ops_ = on; }
  // How NonFiniteOutput names the current pass: `kind` alone when step < 0 ("prefill"), else
  // "kind step" ("decode step 3", "engine step 7").
  void set_pass(const char* kind, int step) { pass_kind_ = kind, pass_step_ = step; }
  // With check_ops on: throws NonFiniteOutput if any of the `count` floats at `out` is NaN/Inf.
  void check_output(const char* op, int layer, const float* out, std::int64_t count) const;

 private:
  // The attention half of layer l up to the cache step: qkv projection, bias, RoPE (unless the
  // cache step does it).
  void project_qkv(Tracer* tr, int l, int R, const std::int32_t* positions);
  // The ops around the residual stream, each one traced op named `op`: h = rmsnorm(x, weight);
  // x += proj; and both at once (x += proj, then h = rmsnorm(x, weight)).
  void norm(Tracer* tr, const char* op, int l, int R, const float* weight);
  void residual(Tracer* tr, const char* op, int l, int R);
  void residual_norm(Tracer* tr, const char* op, int l, int R, const float* weight);
  // proj = down_proj(swiglu(gate_up)): the ops swiglu and down_proj, or swiglu_down.
  void mlp_down(Tracer* tr, int l, int R);

  const ModelConfig& c_;
  const Weights& w_;
  Backend& be_;
  bool check_ops_ = false;
  DecoderFusion fuse_;
  const char* pass_kind_ = "prefill";
  int pass_step_ = -1;
  Buffer x_, h_, qkv_, att_;
  Buffer proj_;     // [R, dim]       o_proj / down_proj output
  Buffer gate_up_;  // [R, 2 ffn_dim] fused gate | up projections
  Buffer act_;      // [R, ffn_dim]   SwiGLU output
};

}  // namespace llmbench
