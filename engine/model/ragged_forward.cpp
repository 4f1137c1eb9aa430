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
    : c_(model.config()), be_(model.backend()), lim_(checked(limits, c_)),
      dec_(model, std::size_t(lim_.max_rows)) {
  if (lim_.max_len <= 0) lim_.max_len = c_.max_seq_len;
  paged_ = {lim_.block_size, (lim_.max_len + lim_.block_size - 1) / lim_.block_size};
  const std::size_t f = sizeof(float), rows = std::size_t(lim_.max_rows);
  const std::size_t pool = std::size_t(lim_.n_blocks) * lim_.block_size * c_.kv_dim() *
                           std::size_t(kv_dtype_bytes(lim_.kv_dtype));
  for (int l = 0; l < c_.n_layers; ++l) {
    k_pool_.push_back(be_.alloc(pool));
    v_pool_.push_back(be_.alloc(pool));
  }
  pool_bytes_ = 2 * std::int64_t(c_.n_layers) * std::int64_t(pool);
  table_host_.assign(std::size_t(lim_.max_seqs) * paged_.max_blocks, -1);
  table_ = be_.alloc(table_host_.size() * sizeof(std::int32_t));
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
  const int M = lim_.max_rows;
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
  dec_.set_pass("engine step", step_no_);
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

  dec_.embed(tr, tokens, R);                                            // x: [R, D]
  dec_.layers(tr, R, rows + M, [&](int l) { attend(l, R); });
  head(S);
  return next_host_;
}

void RaggedForward::attend(int l, int R) {
  const int HD = c_.head_dim(), M = lim_.max_rows;
  const int Q = c_.q_dim(), KV = c_.kv_dim(), QKV = c_.qkv_dim();
  Tracer* tr = tracer_;
  using C = OpCategory;
  const float* qkv = dec_.qkv();
  const auto* rows = rows_.as<std::int32_t>();
  const std::int32_t *positions = rows + M, *slots = rows + 2 * M;
  const auto* table = table_.as<std::int32_t>();
  const bool f16 = lim_.kv_dtype == KvDtype::kFp16;
  const int cached = kv_dtype_bytes(lim_.kv_dtype);  // bytes a pool element
  const Work write{0, (4 + cached) * std::int64_t(R) * KV};
  auto write_rows = [&](Buffer& pool, const float* src) {
    if (f16)
      be_.kv_write_ragged_f16(pool.as<std::uint16_t>(), table, paged_, src, QKV, slots,
                              positions, R, KV);
    else
      be_.kv_write_ragged(pool.f32(), table, paged_, src, QKV, slots, positions, R, KV);
  };
  run_op(tr, "kv_write_ragged_k", C::kCopy, l, write, [&] { write_rows(k_pool_[l], qkv + Q); });
  run_op(tr, "kv_write_ragged_v", C::kCopy, l, write,
         [&] { write_rows(v_pool_[l], qkv + Q + KV); });
  // Work: every row reads its sequence's keys up to its position (counted on the host rows).
  std::int64_t keys = 0;
  for (int r = 0; r < R; ++r) keys += host_rows_[M + r] + 1;
  const Work work{4 * std::int64_t(c_.n_heads) * HD * keys,
                  4 * 2 * std::int64_t(R) * Q + cached * 2 * keys * KV};
  run_op(tr, "ragged_paged_attention", C::kAttention, l, work, [&] {   // att: [R, Q]
    if (f16)
      be_.ragged_paged_attention_f16(dec_.att(), Q, qkv, QKV, k_pool_[l].as<std::uint16_t>(),
                                     v_pool_[l].as<std::uint16_t>(), table, paged_, slots,
                                     positions, R, c_.n_heads, c_.n_kv_heads, HD);
    else
      be_.ragged_paged_attention(dec_.att(), Q, qkv, QKV, k_pool_[l].f32(), v_pool_[l].f32(),
                                 table, paged_, slots, positions, R, c_.n_heads, c_.n_kv_heads,
                                 HD);
  });
  dec_.check_output("attention", l, dec_.att(), std::int64_t(R) * Q);
}

void RaggedForward::head(int S) {
  const int M = lim_.max_rows;
  if (S == 0) {  // only prompt chunks that do not end their prompt: nothing to copy back
    be_.synchronize();
    return;
  }
  float* hidden = last_.f32();
  dec_.gather_last(tracer_, hidden, rows_.as<std::int32_t>() + 3 * M, S);  // last: [S, D]
  dec_.final_norm_and_head(tracer_, hidden, hidden, S, logits_.f32());     // logits: [S, V]
  dec_.greedy_tokens(tracer_, logits_.f32(), S, next_.as<std::int32_t>(), next_host_.data());
}

void RaggedForward::logits_row_to_host(int sampled_row, float* dst) const {
  LLMBENCH_CHECK(sampled_row >= 0 && sampled_row < n_sampled_, "logits row out of range");
  const std::size_t V = std::size_t(c_.vocab_size);
  be_.to_host(dst, logits_.f32() + std::size_t(sampled_row) * V, V * sizeof(float));
}

std::vector<float> RaggedForward::last_logits() const {
  std::vector<float> out(std::size_t(n_sampled_) * c_.vocab_size);
  be_.to_host(out.data(), logits_.data(), out.size() * sizeof(float));
  return out;
}

}  // namespace llmbench
