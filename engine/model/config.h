// Model configuration (the shape of a Llama-family decoder) and the named presets.
// Every model dimension is named once, here; FLOP and byte counts derive from it.
// Not here: weights (weights.h) or anything about a particular run (bench_case.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/common/dtype.h"

namespace llmbench {

struct ModelConfig {
  std::string name;
  int dim = 0;             // hidden size
  int n_layers = 0;
  int n_heads = 0;         // query heads
  int n_kv_heads = 0;      // key/value heads (grouped-query attention when < n_heads)
  int ffn_dim = 0;         // SwiGLU intermediate size
  int vocab_size = 0;
  int max_seq_len = 0;     // context length (max_position_embeddings)
  float rope_theta = 10000.0f;
  float norm_eps = 1e-5f;
  bool tied_embeddings = false;  // LM head shares the token-embedding matrix
  bool qkv_bias = false;         // Qwen2 has biases on q, k and v projections

  int head_dim() const { return dim / n_heads; }
  int q_dim() const { return n_heads * head_dim(); }
  int kv_dim() const { return n_kv_heads * head_dim(); }
  int qkv_dim() const { return q_dim() + 2 * kv_dim(); }

  // Parameters of one decoder layer (projections, norms, biases).
  std::int64_t layer_params() const;
  // Weight-matrix parameters multiplied in every layer per token (q,k,v,o,gate,up,down).
  std::int64_t layer_matmul_params() const;
  std::int64_t embedding_params() const { return std::int64_t(vocab_size) * dim; }
  // LM-head parameters that are stored separately (0 when tied).
  std::int64_t lm_head_params() const { return tied_embeddings ? 0 : embedding_params(); }
  // Every stored parameter (the number `llmbench models` reports).
  std::int64_t total_params() const;
  // Parameters in norm weights and biases: the only ones not in a weight matrix.
  std::int64_t vector_params() const;
  // Bytes of the stored weights with the weight matrices (embedding, projections, LM head) in
  // `dtype` and the norm weights and biases in fp32 (engine/model/weights.h).
  std::int64_t weight_bytes(DType dtype) const;
  // Bytes of the weights one decode step reads: every layer, the final norm, the LM head
  // (the embedding matrix when tied), and only `batch` rows of the embedding table; matrices
  // at `dtype`, norm weights and biases at 4 bytes. Quantised dtypes keep the embedding table
  // in fp32 (its gathered rows at 4 bytes) and quantise a tied head as its own copy.
  std::int64_t decode_weight_bytes(int batch, DType dtype) const;

  // Throws BadInput when a dimension is inconsistent (heads not dividing dim, and so on).
  void validate() const;
};

// The presets, in the order `llmbench models` lists them.
const std::vector<ModelConfig>& model_presets();
// The preset called `name`, or nullptr.
const ModelConfig* find_preset(const std::string& name);

}  // namespace llmbench
