// Model weights: which tensors a Llama has (by their Hugging Face names), where their values
// come from (a WeightSource: seeded random numbers, or a checkpoint: hf_checkpoint.h), and the engine's
// layout of them in backend memory (Weights), where q/k/v and gate/up are fused row-wise so
// each is one GEMM.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/model/backend.h"
#include "engine/model/config.h"

namespace llmbench {

// One tensor as Hugging Face names and shapes it ([out_features, in_features] for Linear).
struct TensorSpec {
  std::string name;
  std::vector<std::int64_t> shape;
  std::int64_t numel() const;
};

// Every tensor of the model, in checkpoint order (embedding, layers, final norm, LM head).
std::vector<TensorSpec> hf_tensor_specs(const ModelConfig& config);

// Produces the fp32 values of a named tensor.
class WeightSource {
 public:
  virtual ~WeightSource() = default;
  // Writes spec.numel() floats to dst.
  virtual void fill(const TensorSpec& spec, float* dst) const = 0;
};

// Deterministic random weights (docs/weights.md states the procedure exactly):
//   element i of tensor `name` = (2u - 1) * a, u = stream_uniform(stream_key(seed,
//   fnv1a64(name)), i), with a = sqrt(3 / in_features) for matrices (std 1/sqrt(fan_in), so
//   activations keep their scale through every layer), a = 0.1 around 1.0 for norm weights,
//   and a = 0.02 * sqrt(3) for biases.
class RandomWeights final : public WeightSource {
 public:
  explicit RandomWeights(std::uint64_t seed) : seed_(seed) {}
  void fill(const TensorSpec& spec, float* dst) const override;

 private:
  std::uint64_t seed_;
};

// A 2-D weight matrix stored in the run's weight dtype: fp32 values, bf16/fp16 bits, or int8/int4
// blocks (kernels/cpu/quant.h; the embedding table too, since a tied LM head reads it).
struct WeightMatrix {
  Buffer buf;
  DType dtype = DType::kFp32;

  WeightRef ref() const { return {buf.data(), dtype}; }
  bool empty() const { return buf.empty(); }
};

// Weight matrices are stored in the load's dtype; norm weights and biases are always fp32
// (they are a few thousand values per layer, and they are not GEMM inputs).
struct LayerWeights {
  Buffer attn_norm;        // [dim] fp32
  WeightMatrix wqkv;       // [q_dim + 2 kv_dim, dim]: q_proj rows, then k_proj, then v_proj
  Buffer bqkv;             // [q_dim + 2 kv_dim] fp32 (Qwen2 only; empty otherwise)
  WeightMatrix wo;         // [dim, q_dim]
  Buffer ffn_norm;         // [dim] fp32
  WeightMatrix w_gate_up;  // [2 ffn_dim, dim]: gate_proj rows, then up_proj
  WeightMatrix w_down;     // [dim, ffn_dim]
};

struct Weights {
  WeightMatrix embed;       // [vocab, dim]
  std::vector<LayerWeights> layers;
  Buffer final_norm;        // [dim] fp32
  WeightMatrix lm_head;     // [vocab, dim]; empty when tied to `embed`

  WeightRef head() const { return lm_head.empty() ? embed.ref() : lm_head.ref(); }
  // Bytes of every weight buffer (what ModelConfig::weight_bytes predicts).
  std::int64_t bytes() const;
};

// Allocates the weights in `backend` memory and fills them from `source`, storing the weight
// matrices as `dtype` (converted once here, rounding to nearest even; a checkpoint's bf16/fp16
// values are widened by the source first, which is exact, so a checkpoint loaded in its own
// dtype keeps its bits). int8/int4 quantise the fp32 values here, deterministically (CPU
// backend only; BadInput otherwise, or when an inner dimension is not a multiple of 32).
Weights load_weights(const ModelConfig& config, const WeightSource& source, Backend& backend,
                     DType dtype = DType::kFp32);

}  // namespace llmbench
