// The forward pass of one continuous-batching step: a ragged batch of rows, each row a token of
// some sequence at its own position, over one paged KV pool shared by all sequences. A
// sequence contributes one decode row, or a chunk of its prompt, or a whole prompt; each
// sequence's keys and values live in the blocks of its block-table row (its `slot`).
// The layer body is Session's (decoder.h): only the cache step differs, the KV cache ops
// replaced by their ragged forms (kv_write_ragged_k/v, ragged_paged_attention), so the traces
// line up op for op and a request's tokens match the static path's.
// Not here: which rows run in a step (scheduler.h) or which blocks are free (block_pool.h).
#pragma once
#include <cstdint>
#include <vector>

#include "engine/model/backend.h"
#include "engine/model/model.h"
#include "engine/model/variants.h"
#include "engine/model/trace.h"

namespace llmbench {

// Sizes fixed when the pools and activations are allocated.
struct RaggedLimits {
  int max_rows = 2048;     // rows per step (--max-num-batched-tokens)
  int max_seqs = 64;       // slots: sequences that may hold blocks at once (--max-num-seqs)
  int n_blocks = 512;      // blocks in the pool
  int block_size = 16;     // positions per block
  int max_len = 0;         // positions per sequence (0: the model's context length)
  KvDtype kv_dtype = KvDtype::kFp32;  // the pool's element type (--kv-cache-dtype)
};

// One sequence's part of a step: n_tokens tokens at positions [start_pos, start_pos + n_tokens)
// of the sequence in `slot`. With `sample`, the step returns the greedy next token after its
// last row (the end of a prompt, or a decode row); a prompt chunk that does not end the prompt
// samples nothing.
struct RaggedSeq {
  int slot = 0;
  int start_pos = 0;
  const std::int32_t* tokens = nullptr;  // host memory, n_tokens ids
  int n_tokens = 0;
  bool sample = true;
};

class RaggedForward {
 public:
  RaggedForward(const Model& model, const RaggedLimits& limits);

  const RaggedLimits& limits() const { return lim_; }
  int max_blocks_per_seq() const { return paged_.max_blocks; }
  // Bytes of the k and v pools (all layers).
  std::int64_t pool_bytes() const { return pool_bytes_; }

  // Maps slot's positions to `blocks` (block k holds positions [k * block_size, ...)); the
  // table goes to the device with the next step.
  void set_blocks(int slot, const std::vector<std::int32_t>& blocks);

  // Runs one step over `seqs` (rows in this order). Positions must be mapped, and a sequence's
  // earlier positions written by earlier steps. Returns one token per sequence with `sample`,
  // in order, on the host.
  const std::vector<std::int32_t>& step(const std::vector<RaggedSeq>& seqs);
  // Logits of the sampled rows of the last step, [n_sampled, vocab], copied to the host.
  std::vector<float> last_logits() const;
  // One sampled row's logits of the last step, [vocab], copied to `dst` on the host (the
  // scheduler samples non-greedy requests there).
  void logits_row_to_host(int sampled_row, float* dst) const;

  // Records the ops of later steps into `tracer` (nullptr: stop); the caller resolves it.
  void set_tracer(Tracer* tracer) { tracer_ = tracer; }
  // Every record of a step belongs to this phase and step number (the scheduler's composition).
  void set_step(Phase phase, int step) { phase_ = phase, step_no_ = step; }
  // Diagnostic, as Session::set_check_ops: every op's output of later steps is checked, and
  // NonFiniteOutput names the first op, layer and step whose output holds a NaN or Inf.
  void set_check_ops(bool on) { dec_.set_check_ops(on); }

 private:
  // The ragged cache step of layer l (Decoder::Attend) over R rows: write each row's key and
  // value to its sequence's blocks, then attend; leaves the attention output in att rows.
  void attend(int l, int R);
  void head(int n_sampled);

  const ModelConfig& c_;
  Backend& be_;
  RaggedLimits lim_;
  PagedKv paged_{};
  std::int64_t pool_bytes_ = 0;
  Tracer* tracer_ = nullptr;
  Phase phase_ = Phase::kDecode;
  int step_no_ = 0;

  std::vector<Buffer> k_pool_, v_pool_;   // per layer, [n_blocks, block_size, kv_dim]
  std::vector<std::int32_t> table_host_;  // [max_seqs, max_blocks], -1 where unmapped
  bool table_dirty_ = true;
  Buffer table_;
  Decoder dec_;       // the layer body and its activations, for max_rows rows
  Buffer last_;       // [max_seqs, dim]
  Buffer logits_;     // [max_seqs, vocab]
  Buffer rows_;       // [4, max_rows] int32: token ids, positions, slots, sampled rows
  Buffer next_;       // [max_seqs] int32
  std::vector<std::int32_t> host_rows_;  // staging for rows_
  std::vector<std::int32_t> next_host_;
  int n_sampled_ = 0;
};

}  // namespace llmbench
