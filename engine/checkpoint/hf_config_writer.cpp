// hf_config_for (see hf_config_writer.h).
#include "engine/checkpoint/hf_config_writer.h"

#include <charconv>

#include <string>

namespace llmbench {

namespace {

// A float config value as the decimal it was written as (1e-5f -> 1e-05, not 9.99999974e-06).
double decimal(float v) {
  char buf[32];
  const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;  // shortest round-trip form
  return std::stod(std::string(buf, end));
}

}  // namespace

nlohmann::ordered_json hf_config_for(const ModelConfig& c, DType dtype) {
  static constexpr const char* kTorchDtype[] = {"float32", "float16", "bfloat16"};
  nlohmann::ordered_json j;
  j["architectures"] = {c.qkv_bias ? "Qwen2ForCausalLM" : "LlamaForCausalLM"};
  j["model_type"] = c.qkv_bias ? "qwen2" : "llama";
  j["hidden_size"] = c.dim;
  j["intermediate_size"] = c.ffn_dim;
  j["num_hidden_layers"] = c.n_layers;
  j["num_attention_heads"] = c.n_heads;
  j["num_key_value_heads"] = c.n_kv_heads;
  j["head_dim"] = c.head_dim();
  j["vocab_size"] = c.vocab_size;
  j["max_position_embeddings"] = c.max_seq_len;
  j["rope_theta"] = decimal(c.rope_theta);
  j["rms_norm_eps"] = decimal(c.norm_eps);
  j["tie_word_embeddings"] = c.tied_embeddings;
  j["hidden_act"] = "silu";
  // Llama's attention_bias would also add an o_proj bias; Qwen2 has q/k/v biases by definition.
  if (!c.qkv_bias) j["attention_bias"] = false;
  j["torch_dtype"] = kTorchDtype[int(dtype)];
  return j;
}

}  // namespace llmbench
