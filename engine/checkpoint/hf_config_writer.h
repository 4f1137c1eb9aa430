// The Hugging Face config.json of a model config (what `export-weights` writes and
// engine/checkpoint/hf_checkpoint.cpp reads back): LlamaForCausalLM, or Qwen2ForCausalLM when the config
// has q/k/v biases.
#pragma once
#include <nlohmann/json.hpp>

#include "engine/model/config.h"

namespace llmbench {

// `dtype` is the checkpoint's torch_dtype.
nlohmann::ordered_json hf_config_for(const ModelConfig& c, DType dtype);

}  // namespace llmbench
