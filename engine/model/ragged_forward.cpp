// The ragged forward pass. Shapes: R rows (every sequence's tokens of this step, in the order
// given), S sampled sequences. Rows carry their own position and slot, so nothing here assumes
// that sequences have equal lengths or advance together.
#include "engine/model/ragged_forward.h"

#include <string>

#include "engine/model/op_work.h"
#include "kernels/common/error.h"

namespace llmbench {

namespace {

const RaggedLimits& checked(const RaggedLimits& lim, const ModelConfig& c) {
  if (lim.max_rows <= 0 || lim.max_seqs <= 0 || lim.n_blocks <= 0 || lim.block_size <= 0)
    throw BadInput("scheduler: rows, sequences, blocks and block size must be positive");
  if (lim.max_len > c.max_seq_len)
    throw BadInput("scheduler: sequence length " + std::to_string(lim.max_len) +
                   " exceeds the context length of model '" + c.name + "' (" +
                   std::to_string(c.max_seq_len) + ")");
  return lim;
}

}  // namespace

RaggedForward::RaggedForward(const Model& model, const RaggedLimits& limits)
    : model_(model), c_(model.config()), be_(model.backend()), lim_(checked(limits, c_)) {
  if (lim_.max_len <= 0) lim_.max_len = c_.max_seq_len;
  paged_ = {lim_.block_size, (lim_.max_len + lim_.block_size - 1) / lim_.block_size};
  const std::size_t f = sizeof(float), rows = std::size_t(lim_.max_rows);
  const std::size_t pool = std::size_t(lim_.n_blocks) * lim_.block_size * c_.kv_dim() * f;
  for (int l = 0; l < c_.n_layers; ++l) {
    k_pool_.push_back(be_.alloc(pool));
    v_pool_.push_back(be_.alloc(pool));
  }
  pool_bytes_ = 2 * std::int64_t(c_.n_layers) * std::int64_t(pool);
  table_host_.assign(std::size_t(lim_.max_seqs) * paged_.max_blocks, -1);
  table_ = be_.alloc(table_host_.size() * sizeof(std::int32_t));
  x_ = be_.alloc(rows * c_.dim * f);
  h_ = be_.alloc(rows * c_.dim * f);
  qkv_ = be_.alloc(rows * c_.qkv_dim() * f);
  att_ = be_.alloc(rows * c_.q_dim() * f);
  proj_ = be_.alloc(rows * c_.dim * f);
  gate_up_ = be_.alloc(rows * 2 * c_.ffn_dim * f);
  act_ = be_.alloc(rows * c_.ffn_dim * f);
  last_ = be_.alloc(std::size_t(lim_.max_seqs) * c_.dim * f);
  logits_ = be_.alloc(std::size_t(lim_.max_seqs) * c_.vocab_size * f);
  rows_ = be_.alloc((3 * rows + lim_.max_seqs) * sizeof(std::int32_t));
  next_ = be_.alloc(std::size_t(lim_.max_seqs) * sizeof(std::int32_t));
}

void RaggedForward::set_blocks(int slot, const std::vector<std::int32_t>& blocks) {
  LLMBENCH_CHECK(slot >= 0 && slot < lim_.max_seqs, "ragged forward: slot out of range");
  LLMBENCH_CHECK(int(blocks.size()) <= paged_.max_blocks, "ragged forward: too many blocks");
  std::int32_t* row = table_host_.data() + std::size_t(slot) * paged_.max_blocks;
  for (int k = 0; k < paged_.max_blocks; ++k) row[k] = k < int(blocks.size()) ? blocks[k] : -1;
  table_dirty_ = true;
}

const std::vector<std::int32_t>& RaggedForward::step(const std::vector<RaggedSeq>& seqs) {
  const Weights& w = model_.weights();
  const int D = c_.dim, F = c_.ffn_dim, M = lim_.max_rows;
  // Host side: the rows' token ids, positions and slots, and each sampled sequence's last row.
  host_rows_.assign(std::size_t(3 * M + lim_.max_seqs), 0);
  int R = 0, S = 0;
  for (const RaggedSeq& s : seqs) {
    LLMBENCH_CHECK(s.n_tokens > 0 && R + s.n_tokens <= M, "ragged forward: too many rows");
    LLMBENCH_CHECK(s.slot >= 0 && s.slot < lim_.max_seqs, "ragged forward: slot out of range");
    LLMBENCH_CHECK(s.start_pos >= 0 && s.start_pos + s.n_tokens <= lim_.max_len,
                   "ragged forward: position beyond the sequence length");
    const std::int32_t* mapped = table_host_.data() + std::size_t(s.slot) * paged_.max_blocks;
    LLMBENCH_CHECK(mapped[(s.start_pos + s.n_tokens - 1) / lim_.block_size] >= 0,
                   "ragged forward: position not mapped to a block");
    for (int t = 0; t < s.n_tokens; ++t, ++R) {
      const std::int32_t id = s.tokens[t];
      if (id < 0 || id >= c_.vocab_size)
        throw BadInput("token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                       std::to_string(c_.vocab_size) + ")");
      host_rows_[R] = id;
      host_rows_[M + R] = s.start_pos + t;
      host_rows_[2 * M + R] = s.slot;
    }
    if (s.sample) host_rows_[3 * M + S++] = R - 1;
  }
  n_sampled_ = S;
  next_host_.resize(std::size_t(S));
  if (R == 0) return next_host_;

  Tracer* tr = tracer_;
  if (tr) tr->set_phase(phase_, step_no_);
  using C = OpCategory;
  OpScope step(tr, "engine_step", C::kRange, -1, 0, 0, /*step_range=*/true);
  auto* rows = rows_.as<std::int32_t>();
  const std::int32_t* tokens = rows;
  run_op(tr, "tokens_to_device", C::kTransfer, -1, {0, 4 * R}, [&] {
    be_.to_device(rows, host_rows_.data(), std::size_t(R) * sizeof(std::int32_t));
  });
  run_op(tr, "positions_to_device", C::kTransfer, -1, {0, 4 * (2 * R + S)}, [&] {
    be_.to_device(rows + M, host_rows_.data() + M, std::size_t(R) * sizeof(std::int32_t));
    be_.to_device(rows + 2 * M, host_rows_.data() + 2 * M, std::size_t(R) * sizeof(std::int32_t));
    be_.to_device(rows + 3 * M, host_rows_.data() + 3 * M, std::size_t(S) * sizeof(std::int32_t));
  });
  if (table_dirty_) {
    const std::int64_t bytes = std::int64_t(table_host_.size() * sizeof(std::int32_t));
    run_op(tr, "block_table_to_device", C::kTransfer, -1, {0, bytes}, [&] {
      be_.to_device(table_.data(), table_host_.data(), std::size_t(bytes));
    });
    table_dirty_ = false;
  }

  float *x = x_.f32(), *h = h_.f32(), *att = att_.f32();
  float *proj = proj_.f32(), *gate_up = gate_up_.f32(), *act = act_.f32();
  const std::int64_t RD = std::int64_t(R) * D;
  const DType wb = w.head().dtype;  // the weight matrices' dtype (the embedding may differ)

  const std::int64_t embed_bytes = dtype_bytes_for(w.embed.dtype, RD) + 4 * RD;
  run_op(tr, "embedding", C::kCopy, -1, {0, embed_bytes}, [&] {
    be_.embedding_weights(x, w.embed.ref(), tokens, R, c_.vocab_size, D);  // x: [R, D]
  });
  for (int l = 0; l < c_.n_layers; ++l) {
    const LayerWeights& lw = w.layers[l];
    OpScope layer(tr, "layer", C::kRange, l);
    run_op(tr, "attn_norm", C::kNorm, l, elementwise_work(RD, 4, 1, 1), [&] {
      be_.rmsnorm(h, x, lw.attn_norm.f32(), R, D, c_.norm_eps);           // h:   [R, D]
    });
    attention_block(l, R);                                                // att: [R, Q]
    run_op(tr, "o_proj", C::kGemm, l, gemm_work(R, D, c_.q_dim(), wb), [&] {
      be_.matmul_weights(proj, att, lw.wo.ref(), R, D, c_.q_dim(), c_.q_dim());
    });
    run_op(tr, "attn_residual", C::kElementwise, l, elementwise_work(RD, 1, 2, 1), [&] {
      be_.add_inplace(x, proj, std::size_t(RD));
    });
    run_op(tr, "ffn_norm", C::kNorm, l, elementwise_work(RD, 4, 1, 1), [&] {
      be_.rmsnorm(h, x, lw.ffn_norm.f32(), R, D, c_.norm_eps);
    });
    run_op(tr, "gate_up_proj", C::kGemm, l, gemm_work(R, 2 * F, D, wb), [&] {
      be_.matmul_weights(gate_up, h, lw.w_gate_up.ref(), R, 2 * F, D, D);  // [R, F | F]
    });
    const std::int64_t RF = std::int64_t(R) * F;
    run_op(tr, "swiglu", C::kElementwise, l, {5 * RF, 4 * 3 * RF}, [&] {
      be_.swiglu(act, gate_up, R, F);                                      // act: [R, F]
    });
    run_op(tr, "down_proj", C::kGemm, l, gemm_work(R, D, F, wb), [&] {
      be_.matmul_weights(proj, act, lw.w_down.ref(), R, D, F, F);
    });
    run_op(tr, "ffn_residual", C::kElementwise, l, elementwise_work(RD, 1, 2, 1), [&] {
      be_.add_inplace(x, proj, std::size_t(RD));
    });
  }
  head(S);
  return next_host_;
}

void RaggedForward::attention_block(int l, int R) {
  const LayerWeights& lw = model_.weights().layers[l];
  const int D = c_.dim, HD = c_.head_dim(), M = lim_.max_rows;
  const int Q = c_.q_dim(), KV = c_.kv_dim(), QKV = c_.qkv_dim();
  Tracer* tr = tracer_;
  using C = OpCategory;
  float* qkv = qkv_.f32();
  const auto* rows = rows_.as<std::int32_t>();
  const std::int32_t *positions = rows + M, *slots = rows + 2 * M;

  const DType wb = lw.wqkv.dtype;
  run_op(tr, "qkv_proj", C::kGemm, l, gemm_work(R, QKV, D, wb), [&] {
    be_.matmul_weights(qkv, h_.f32(), lw.wqkv.ref(), R, QKV, D, D);  // qkv: [R, Q | KV | KV]
  });
  if (c_.qkv_bias)
    run_op(tr, "qkv_bias", C::kElementwise, l, elementwise_work(std::int64_t(R) * QKV, 1, 1, 1),
           [&] { be_.add_bias_rows(qkv, R, QKV, lw.bqkv.f32(), QKV); });
  run_op(tr, "rope_q", C::kElementwise, l, elementwise_work(std::int64_t(R) * Q, 3, 1, 1), [&] {
    be_.rope(qkv, R, QKV, c_.n_heads, HD, positions, c_.rope_theta);
  });
  run_op(tr, "rope_k", C::kElementwise, l, elementwise_work(std::int64_t(R) * KV, 3, 1, 1), [&] {
    be_.rope(qkv + Q, R, QKV, c_.n_kv_heads, HD, positions, c_.rope_theta);
  });
  const auto* table = table_.as<std::int32_t>();
  const Work write = copy_work(std::int64_t(R) * KV);
  run_op(tr, "kv_write_ragged_k", C::kCopy, l, write, [&] {
    be_.kv_write_ragged(k_pool_[l].f32(), table, paged_, qkv + Q, QKV, slots, positions, R, KV);
  });
  run_op(tr, "kv_write_ragged_v", C::kCopy, l, write, [&] {
    be_.kv_write_ragged(v_pool_[l].f32(), table, paged_, qkv + Q + KV, QKV, slots, positions, R,
                        KV);
  });
  // Work: every row reads its sequence's keys up to its position (counted on the host rows).
  std::int64_t keys = 0;
  for (int r = 0; r < R; ++r) keys += host_rows_[M + r] + 1;
  const Work work{4 * std::int64_t(c_.n_heads) * HD * keys,
                  4 * (2 * std::int64_t(R) * Q + 2 * keys * KV)};
  run_op(tr, "ragged_paged_attention", C::kAttention, l, work, [&] {
    be_.ragged_paged_attention(att_.f32(), Q, qkv, QKV, k_pool_[l].f32(), v_pool_[l].f32(),
                               table, paged_, slots, positions, R, c_.n_heads, c_.n_kv_heads,
                               HD);                                     // att: [R, Q]
  });
}

void RaggedForward::head(int S) {
  const Weights& w = model_.weights();
  const int D = c_.dim, V = c_.vocab_size, M = lim_.max_rows;
  Tracer* tr = tracer_;
  using C = OpCategory;
  if (S == 0) {  // only prompt chunks that do not end their prompt: nothing to copy back
    be_.synchronize();
    return;
  }
  float* hidden = last_.f32();
  const std::int64_t SD = std::int64_t(S) * D, SV = std::int64_t(S) * V;
  run_op(tr, "gather_last", C::kCopy, -1, {0, 2 * 4 * SD}, [&] {
    be_.gather_rows(hidden, x_.f32(), rows_.as<std::int32_t>() + 3 * M, S, D);  // [S, D]
  });
  run_op(tr, "final_norm", C::kNorm, -1, elementwise_work(SD, 4, 1, 1), [&] {
    be_.rmsnorm(hidden, hidden, w.final_norm.f32(), S, D, c_.norm_eps);
  });
  const DType wb = w.head().dtype;
  run_op(tr, "lm_head", C::kGemm, -1, gemm_work(S, V, D, wb), [&] {
    be_.matmul_weights(logits_.f32(), hidden, w.head(), S, V, D, D);    // logits: [S, V]
  });
  run_op(tr, "argmax", C::kSample, -1, {SV, 4 * SV}, [&] {
    be_.argmax_rows(next_.as<std::int32_t>(), logits_.f32(), S, V);
  });
  run_op(tr, "tokens_to_host", C::kTransfer, -1, {0, 4 * S}, [&] {
    be_.to_host(next_host_.data(), next_.data(), std::size_t(S) * sizeof(std::int32_t));
  });
}

std::vector<float> RaggedForward::last_logits() const {
  std::vector<float> out(std::size_t(n_sampled_) * c_.vocab_size);
  be_.to_host(out.data(), logits_.data(), out.size() * sizeof(float));
  return out;
}

}  // namespace llmbench
