// The forward pass. Shapes: B sequences, T new tokens each (the prompt length in prefill, 1 in
// decode), R = B * T rows, P = tokens already cached. Rows are sequence-major: row b * T + t.
// With default Variants this is the fast path; each variant replaces a step by what a naive
// engine does, traced under its own op name (docs/variants.md).
#include "engine/model/model.h"

#include <string>

#include "kernels/common/error.h"
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
    : c_(checked(model.config(), batch, max_prefill, max_len)),
      be_(model.backend()), batch_(batch), max_prefill_(max_prefill), max_len_(max_len),
      variants_(variants), kv_(be_, c_, batch, max_len, variants),
      dec_(model, std::size_t(batch) * max_prefill, decoder_fusion(variants)) {
  const std::size_t f = sizeof(float), rows = std::size_t(batch) * max_prefill;
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
  if (variants.cuda_graphs) {
    // A captured step must launch the same kernels with the same arguments at every length:
    // the fast paths read the length from device memory (KvCache::set_device_positions); the
    // naive variants allocate per pass or copy to the host mid-step.
    GraphDriver* driver = be_.graph_driver();
    if (!driver)
      graphs_unused_ = "cuda graphs: backend " + be_.name() +
                       " cannot capture graphs (CPU, or --sync-check); decode steps run eagerly";
    else if (variants.kv_cache != KvCacheKind::kPrealloc || variants.qkv != QkvLayout::kFused ||
             variants.logits != LogitsMode::kDevice)
      graphs_unused_ = "cuda graphs: only the fast paths (--kv-cache prealloc, --qkv fused, "
                       "--logits device) are captured; decode steps run eagerly";
    else
      graphs_ = std::make_unique<StepGraphs>(*driver, "decode step");
  }
}

std::string Session::graph_note() const {
  return graphs_ ? graphs_->note() : graphs_unused_;
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
  ++decode_steps_run_;
  host_tokens_ = tokens;
  // A traced step replays a graph only when the timer gives a replay's kernels to their ops.
  if (graphs_ && !check_ops_ && (!tracer_ || tracer_->sees_graph_nodes())) {
    decode_with_graph();
    if (tracer_) tracer_->resolve();
    return next_host_;
  }
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

void Session::forward(int T, Phase phase) {
  const int B = batch_, R = B * T, P = length_;
  Tracer* tr = tracer_;
  if (tr) tr->set_phase(phase, decode_step_);
  dec_.set_pass(decode_step_ == 0 ? "prefill" : "decode step",
                decode_step_ == 0 ? -1 : decode_step_);
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

  dec_.embed(tr, tokens_.as<std::int32_t>(), R);                        // x: [R, D]
  dec_.layers(tr, R, positions_.as<std::int32_t>(), [&](int l) { attend(l, T, tr); });
  head(T);
  length_ = P + T;
  last_pass_tokens_ = T;
}

void Session::decode_with_graph() {
  const int B = batch_, P = length_, V = c_.vocab_size;
  Tracer* tr = tracer_;
  if (tr) tr->set_phase(Phase::kDecode, decode_step_);
  using C = OpCategory;
  dec_.set_pass("decode step", decode_step_);
  OpScope step(tr, "decode_step", C::kRange, -1, 0, 0, /*step_range=*/true);
  // The step's inputs, written in place where the graph's kernels read them: token ids,
  // positions (RoPE, the KV write and attention all read the length from them); each
  // sequence's last row is b for one new token, the same every step.
  run_op(tr, "tokens_to_device", C::kTransfer, -1, {0, 4 * B}, [&] {
    be_.to_device(tokens_.data(), host_tokens_.data(), std::size_t(B) * sizeof(std::int32_t));
  });
  run_op(tr, "positions_to_device", C::kTransfer, -1, {0, 4 * 2 * B}, [&] {
    host_rows_.assign(std::size_t(B), P);
    be_.to_device(positions_.data(), host_rows_.data(), std::size_t(B) * sizeof(std::int32_t));
    for (int b = 0; b < B; ++b) host_rows_[b] = b;
    be_.to_device(last_rows_.data(), host_rows_.data(), std::size_t(B) * sizeof(std::int32_t));
  });
  kv_.begin_pass(tr, P, 1);  // the prealloc cache: nothing to launch
  kv_.set_device_positions(positions_.as<std::int32_t>());
  // The launches of the step, with their op scopes in `t` (the step's Tracer, a capture's own,
  // or none): StepGraphs decides which (cuda_graph.h).
  auto launch = [&](Tracer* t) {
    dec_.embed(t, tokens_.as<std::int32_t>(), B);                 // x: [B, D]
    dec_.layers(t, B, positions_.as<std::int32_t>(), [&](int l) { attend(l, 1, t); });
    dec_.gather_last(t, last_.f32(), last_rows_.as<std::int32_t>(), B);
    dec_.final_norm_and_head(t, last_.f32(), last_.f32(), B, logits_.f32());  // [B, V]
    const std::int64_t BV = std::int64_t(B) * V;
    run_op(t, "argmax", C::kSample, -1, {BV, 4 * BV}, [&] {
      be_.argmax_rows(next_.as<std::int32_t>(), logits_.f32(), B, V);
    });
  };
  try {
    graphs_->run({B, 1, max_len_}, launch, tr, P);
  } catch (...) {
    kv_.set_device_positions(nullptr);
    throw;
  }
  kv_.set_device_positions(nullptr);
  run_op(tr, "tokens_to_host", C::kTransfer, -1, {0, 4 * std::int64_t(B)}, [&] {
    be_.to_host(next_host_.data(), next_.data(), std::size_t(B) * sizeof(std::int32_t));
  });
  length_ = P + 1;
  last_pass_tokens_ = 1;
}

void Session::attend(int l, int T, Tracer* tr) {
  const int B = batch_, R = B * T, P = length_, HD = c_.head_dim();
  const int Q = c_.q_dim(), KV = c_.kv_dim(), QKV = c_.qkv_dim();
  using C = OpCategory;
  float *qkv = dec_.qkv(), *att = dec_.att();

  // Where q, k, v and the attention output live: the fused rows (fast path), or head-major
  // copies (--qkv permute).
  const HeadStrides rows = token_major(T, QKV, HD);
  if (variants_.qkv == QkvLayout::kFused) {
    if (dec_.fusion().rope_in_cache_step)  // --fuse small: RoPE comes with the write
      kv_.rope_append(tr, l, qkv, positions_.as<std::int32_t>(), P, T);
    else
      kv_.append(tr, l, qkv + Q, qkv + Q + KV, rows, P, T);
    kv_.attend(tr, l, att, token_major(T, Q, HD), qkv, rows, P, T);  // att: [R, Q]
    dec_.check_output("attention", l, att, std::int64_t(R) * Q);
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
  dec_.check_output("attention", l, att_hm_.f32(), std::int64_t(R) * Q);
  // attn_output.transpose(1, 2).contiguous(): back to rows for o_proj.
  run_op(tr, "permute_out", C::kCopy, l, copy_work(std::int64_t(R) * Q), [&] {
    be_.copy_heads(att, token_major(T, Q, HD), att_hm_.f32(), q_hm, B, T, c_.n_heads,
                   HD);                                                   // att: [R, Q]
  });
}

void Session::head(int T) {
  const int B = batch_, R = B * T, V = c_.vocab_size;
  Tracer* tr = tracer_;
  using C = OpCategory;
  float* logits = logits_.f32();
  // --logits all runs the head on every row, as a Hugging Face-style forward does; the others
  // only on each sequence's last position, gathered first.
  const bool all = variants_.logits == LogitsMode::kAll;
  const int rows = all ? R : B;
  float* hidden = all ? dec_.h() : last_.f32();
  if (!all) dec_.gather_last(tr, hidden, last_rows_.as<std::int32_t>(), B);  // last: [B, D]
  dec_.final_norm_and_head(tr, hidden, all ? dec_.x() : hidden, rows, logits);  // [rows, V]
  if (variants_.logits == LogitsMode::kDevice) {
    dec_.greedy_tokens(tr, logits, B, next_.as<std::int32_t>(), next_host_.data());
    return;
  }
  // --logits last|all: every computed logit to the host, argmax there (logits.cpu().argmax()).
  const std::int64_t RV = std::int64_t(rows) * V;
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
