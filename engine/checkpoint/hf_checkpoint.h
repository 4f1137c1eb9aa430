// Hugging Face Llama-family model directories: config.json -> ModelConfig, and the weights in
// model.safetensors (or the shards listed in model.safetensors.index.json) as a WeightSource,
// so `load_weights(config, CheckpointWeights(dir, config), backend)` loads a real checkpoint
// exactly as it loads random weights. Everything is validated when opened, before a forward
// pass could run on a wrong model; every problem is one BadInput line naming the file and field.
//
// No weight needs reordering: the engine's RoPE uses Hugging Face's rotate_half layout
// (dimension i pairs with i + head_dim/2, kernels/cpu/rope.h), which is the layout the q_proj
// and k_proj rows of these checkpoints are stored in, and Linear weights are [out, in] in both.
//
// Deliberately not: tokenizers, other architectures (GPT-2, Gemma, Phi, MoE), rope scaling,
// sliding-window attention beyond its window, or quantised dtypes.
#pragma once
#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/model/config.h"
#include "engine/checkpoint/safetensors.h"
#include "engine/model/weights.h"

namespace llmbench {

// True when `dir` is a directory holding a config.json (what `--model DIR` tests before
// treating its argument as a path rather than a preset name).
bool looks_like_hf_checkpoint(const std::string& dir);

// Reads DIR/config.json of a LlamaForCausalLM, MistralForCausalLM or Qwen2ForCausalLM
// (architectures and/or model_type llama, mistral, qwen2). Qwen2 gets q/k/v biases. Defaults as
// in transformers: num_key_value_heads = num_attention_heads, rope_theta = 10000,
// tie_word_embeddings = false. The name is `dir`. Throws BadInput for a missing or mistyped
// field, another architecture, or a feature the engine does not compute (rope_scaling, a
// head_dim other than hidden_size / num_attention_heads, Llama's attention_bias or mlp_bias,
// an activation other than silu); then runs ModelConfig::validate().
ModelConfig read_hf_config(const std::string& dir);

// The weights of a Hugging Face checkpoint directory, memory-mapped. The constructor opens
// DIR/model.safetensors, or else every shard named in DIR/model.safetensors.index.json, and
// checks that each tensor of hf_tensor_specs(config) is there with exactly that shape (an
// untied model must have lm_head.weight; a tied one's is ignored, as is any tensor the engine
// does not use, such as rotary_emb.inv_freq). The mappings live as long as this object: load
// the weights into a backend, then let it go.
class CheckpointWeights final : public WeightSource {
 public:
  CheckpointWeights(const std::string& dir, const ModelConfig& config);

  // Converts the stored F32, F16 or BF16 tensor `spec.name` to fp32 (spec.numel() floats).
  // Throws BadInput if the checkpoint has no such tensor or it has another shape.
  void fill(const TensorSpec& spec, float* dst) const override;

  // The files opened: model.safetensors, or the shards in name order.
  const std::vector<SafetensorsFile>& files() const { return files_; }

 private:
  struct Location {
    std::size_t file;    // index into files_
    std::size_t tensor;  // index into files_[file].tensors()
  };
  // Opens the shards of the index file `index_path`, filling files_ and tensors_.
  void open_shards(const std::string& index_path);
  // The stored tensor `spec` names, after checking its shape.
  const SafetensorsTensor& locate(const TensorSpec& spec, const SafetensorsFile** file) const;

  std::string dir_;
  std::vector<SafetensorsFile> files_;
  std::unordered_map<std::string, Location> tensors_;
};

}  // namespace llmbench
