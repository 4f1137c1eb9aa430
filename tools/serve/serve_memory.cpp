// Estimating serve's memory before allocating (see serve_memory.h).
#include "tools/serve/serve_memory.h"

#include <algorithm>

#include "kernels/common/error.h"

namespace llmbench {

MemoryEstimate estimate_serve_memory(const ModelConfig& c, DType weight_dtype,
                                     const SchedulerOptions& o) {
  // 64-bit throughout: the flags may ask for more than an int can count.
  const std::int64_t f = sizeof(float);
  const std::int64_t seqs = o.max_num_seqs, rows = o.max_num_batched_tokens;
  const std::int64_t block = std::max(1, o.block_size);
  const std::int64_t max_len = o.max_len > 0 ? o.max_len : c.max_seq_len;
  const std::int64_t kv_tokens =
      o.kv_cache_tokens > 0 ? o.kv_cache_tokens : std::max(seqs * 256, max_len);
  const std::int64_t blocks = (kv_tokens + block - 1) / block;
  MemoryEstimate e;
  e.weight_bytes = c.weight_bytes(weight_dtype);
  e.kv_cache_bytes =
      2 * std::int64_t(c.n_layers) * blocks * block * c.kv_dim() * kv_dtype_bytes(o.kv_dtype);
  const std::int64_t per_row =
      (3 * std::int64_t(c.dim) + c.qkv_dim() + c.q_dim() + 3 * std::int64_t(c.ffn_dim)) * f +
      3 * sizeof(std::int32_t);
  const std::int64_t per_seq = (std::int64_t(c.dim) + c.vocab_size) * f +
                               ((max_len + block - 1) / block + 2) * sizeof(std::int32_t);
  e.activation_bytes = rows * per_row + seqs * per_seq;
  return e;
}

void check_serve_fits(const MemoryEstimate& need, std::int64_t available_bytes) {
  try {
    check_fits(need, available_bytes, "host");
  } catch (const Error& e) {
    throw BadInput(std::string(e.what()) +
                   " (the KV pool is sized by --kv-cache-tokens or --max-num-seqs, the "
                   "activations by --max-num-batched-tokens and --max-num-seqs)");
  }
}

}  // namespace llmbench
