// The Llama forward pass, written once against the Backend interface.
// Model holds the config and weights; Session holds what one benchmark case needs on top of
// them (KV cache and activations for `batch` sequences of up to `max_len` tokens), allocated
// once, before any timing (except the --kv-cache concat buffers, which are allocated every
// pass on purpose). prefill() and decode_step() are the two entry points: their wall times are
// TTFT and TPOT. The Session's Variants (variants.h) choose the fast path (the defaults) or a
// naive engine's way for the q/k/v layout, the KV cache and the logits.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/model/backend.h"
#include "kernels/common/error.h"
#include "engine/model/config.h"
#include "engine/model/cuda_graph.h"
#include "engine/model/decoder.h"
#include "engine/model/kv_cache.h"
#include "engine/model/trace.h"
#include "engine/model/variants.h"
#include "engine/model/weights.h"

namespace llmbench {

class Model {
 public:
  Model(ModelConfig config, Weights weights, Backend& backend)
      : config_(std::move(config)), weights_(std::move(weights)), backend_(backend) {}

  const ModelConfig& config() const { return config_; }
  const Weights& weights() const { return weights_; }
  Backend& backend() const { return backend_; }

 private:
  ModelConfig config_;
  Weights weights_;
  Backend& backend_;
};

class Session {
 public:
  // Allocates the KV cache for `batch` x `max_len` positions and activations for
  // `batch` x `max_prefill` rows. Throws BadInput if max_len exceeds the context length.
  // variants.timer is not the Session's business (the caller's Tracer carries the timer).
  Session(const Model& model, int batch, int max_prefill, int max_len,
          const Variants& variants = {});

  // Runs the prompt: tokens is [batch, prompt_len] row-major, host memory. Resets the cache.
  // Returns the next token of each sequence ([batch], on the host when this returns).
  const std::vector<std::int32_t>& prefill(const std::vector<std::int32_t>& tokens,
                                           int prompt_len);
  // Advances every sequence by one token (the tokens returned by the previous call).
  const std::vector<std::int32_t>& decode_step(const std::vector<std::int32_t>& tokens);

  // Tokens currently cached per sequence.
  int length() const { return length_; }
  int batch() const { return batch_; }
  const Variants& variants() const { return variants_; }
  // Copies the logits of the last position of each sequence, [batch, vocab], to the host.
  std::vector<float> last_logits() const;
  // Records every op and range of later calls into `tracer` (nullptr: stop tracing). The
  // tracer is resolved after each call's synchronisation.
  void set_tracer(Tracer* tracer) { tracer_ = tracer; }
  // Diagnostic (off by default, and then a not-taken branch per op): checks every op's output
  // after it runs and throws NonFiniteOutput naming the phase, layer and op whose output first
  // holds a NaN or Inf. run_case turns it on only to explain logits that are not finite.
  void set_check_ops(bool on) {
    check_ops_ = on;
    dec_.set_check_ops(on);
  }
  // --cuda-graphs on (variants): the decode steps' graphs (cuda_graph.h), nullptr when graphs
  // are off or cannot be used here (graph_note() says why). Decode steps without set_check_ops
  // run through it, traced ones only when the tracer's timer sees graph nodes (the CUPTI
  // timer: Tracer::sees_graph_nodes); other traced steps and prefill run eagerly.
  const StepGraphs* graphs() const { return graphs_.get(); }
  // One line when graphs were asked for and are not (or no longer) used: the backend or the
  // variants cannot capture, or a capture failed; "" otherwise.
  std::string graph_note() const;
  // Decode steps this Session ran, eagerly or from graphs, over its life.
  int decode_steps_run() const { return decode_steps_run_; }

 private:
  // One forward pass over n_new tokens per sequence appended after length_ cached ones; the
  // token ids are in host_tokens_.
  void forward(int n_new, Phase phase);
  // The static path's cache step of layer l (Decoder::Attend) over the T new tokens of each
  // sequence: (permutes), KV cache write, attention; leaves the attention output in att rows.
  // Its op scopes go to `tr` (the Session's tracer, a graph capture's own, or none).
  void attend(int l, int T, Tracer* tr);
  // Final norm, LM head and sampling (--logits): leaves the next tokens in next_host_.
  void head(int T);
  // A decode step through graphs_: uploads, the captured (or replayed) launches from the
  // embedding to the device argmax, then the tokens to the host.
  void decode_with_graph();

  const ModelConfig& c_;
  Backend& be_;
  int batch_, max_prefill_, max_len_;
  Variants variants_;
  int length_ = 0;
  int last_pass_tokens_ = 1;   // new tokens per sequence of the latest pass
  int decode_step_ = 0;        // decode steps since the last prefill
  int decode_steps_run_ = 0;   // over the Session's life
  Tracer* tracer_ = nullptr;
  bool check_ops_ = false;
  std::unique_ptr<StepGraphs> graphs_;  // --cuda-graphs on, where it can be used
  std::string graphs_unused_;           // why not, when it was asked for and cannot

  KvCache kv_;
  Decoder dec_;      // the layer body and its activations, for batch * max_prefill rows
  Buffer q_hm_, att_hm_;  // [batch, heads, rows, head_dim]     --qkv permute: q, attention out
  Buffer k_hm_, v_hm_;    // [batch, kv_heads, rows, head_dim]  --qkv permute: k, v
  Buffer last_;      // [batch, dim]      last position of each sequence
  Buffer logits_;    // [batch, vocab] ([rows, vocab] with --logits all)
  Buffer tokens_;    // [rows] int32      token ids of the current pass
  Buffer positions_; // [rows] int32      their positions
  Buffer last_rows_; // [batch] int32     row index of each sequence's last position
  Buffer next_;      // [batch] int32     argmax of the logits
  std::vector<std::int32_t> host_tokens_;  // token ids of the current pass (host)
  std::vector<std::int32_t> host_rows_;    // staging for positions uploads
  std::vector<std::int32_t> next_host_;
  std::vector<float> logits_host_;         // --logits last|all: the logits copied to the host
};

}  // namespace llmbench
