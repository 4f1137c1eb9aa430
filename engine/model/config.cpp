// Presets with the real shapes of the models they are named after (from each model's
// Hugging Face config.json), plus `tiny` for tests and `small` as the quick CPU default.
#include "engine/model/config.h"

#include "kernels/common/error.h"

namespace llmbench {

namespace {

ModelConfig make(std::string name, int dim, int layers, int heads, int kv_heads, int ffn,
                 int vocab, int ctx, float theta, float eps, bool tied, bool bias = false) {
  ModelConfig c;
  c.name = std::move(name);
  c.dim = dim;
  c.n_layers = layers;
  c.n_heads = heads;
  c.n_kv_heads = kv_heads;
  c.ffn_dim = ffn;
  c.vocab_size = vocab;
  c.max_seq_len = ctx;
  c.rope_theta = theta;
  c.norm_eps = eps;
  c.tied_embeddings = tied;
  c.qkv_bias = bias;
  return c;
}

}  // namespace

std::int64_t ModelConfig::layer_matmul_params() const {
  const std::int64_t d = dim;
  return d * q_dim() + 2 * d * kv_dim() + std::int64_t(q_dim()) * d + 3 * d * ffn_dim;
}

std::int64_t ModelConfig::layer_params() const {
  std::int64_t p = layer_matmul_params() + 2 * std::int64_t(dim);  // + two RMSNorm weights
  if (qkv_bias) p += qkv_dim();
  return p;
}

std::int64_t ModelConfig::total_params() const {
  return embedding_params() + n_layers * layer_params() + dim + lm_head_params();
}

std::int64_t ModelConfig::vector_params() const {
  const std::int64_t per_layer = 2 * std::int64_t(dim) + (qkv_bias ? qkv_dim() : 0);
  return n_layers * per_layer + dim;  // + the final norm
}

std::int64_t ModelConfig::weight_bytes(DType dtype) const {
  const std::int64_t vectors = vector_params();
  if (dtype_is_quantized(dtype)) {
    // Quantised: the layers' matrices and the LM head (a tied model's own quantised copy of the
    // embedding) in blocks; the embedding table in fp32.
    const std::int64_t quantized = n_layers * layer_matmul_params() + embedding_params();
    return dtype_bytes_for(dtype, quantized) + (embedding_params() + vectors) * 4;
  }
  return dtype_bytes_for(dtype, total_params() - vectors) + vectors * 4;
}

std::int64_t ModelConfig::decode_weight_bytes(int batch, DType dtype) const {
  // The LM head is read whole. Untied models also gather `batch` rows of the embedding table;
  // tied ones gather them from the matrix the head reads anyway, so they are not counted twice.
  // int8/int4 count their blocks: values and scales (dtype_bytes_for, 34 and 18 bytes per 32).
  // Quantised dtypes keep the embedding table in fp32 (weight_bytes): its gathered rows are
  // 4 bytes each, tied or not (a tied head is a separate quantised copy there).
  std::int64_t matrix = n_layers * layer_matmul_params() + embedding_params();
  const std::int64_t gathered = std::int64_t(batch) * dim;
  if (dtype_is_quantized(dtype))
    return dtype_bytes_for(dtype, matrix) + (gathered + vector_params()) * 4;
  if (!tied_embeddings) matrix += gathered;
  return dtype_bytes_for(dtype, matrix) + vector_params() * 4;
}

void ModelConfig::validate() const {
  auto bad = [&](const std::string& what) {
    throw BadInput("model '" + name + "': " + what);
  };
  if (dim <= 0 || n_layers <= 0 || n_heads <= 0 || n_kv_heads <= 0 || ffn_dim <= 0 ||
      vocab_size <= 0 || max_seq_len <= 0)
    bad("every dimension must be positive");
  if (dim % n_heads != 0) bad("hidden size is not a multiple of the head count");
  if (n_heads % n_kv_heads != 0) bad("head count is not a multiple of the KV head count");
  if (head_dim() % 2 != 0) bad("head dimension must be even for RoPE");
  if (!(rope_theta > 0.0f)) bad("rope_theta must be positive");
  if (!(norm_eps > 0.0f)) bad("rms_norm_eps must be positive");
}

const std::vector<ModelConfig>& model_presets() {
  //                          name            dim  layers heads kv  ffn    vocab  ctx    theta  eps   tied
  static const std::vector<ModelConfig> presets = {
      make("tiny",           64,   2,  4,  2,  160,   256,    256,  1e4f, 1e-5f, false),
      make("small",          768,  12, 12, 4,  2048,  32000,  2048, 1e4f, 1e-5f, true),
      make("qwen2.5-0.5b",   896,  24, 14, 2,  4864,  151936, 32768, 1e6f, 1e-6f, true, true),
      make("tinyllama-1.1b", 2048, 22, 32, 4,  5632,  32000,  2048, 1e4f, 1e-5f, false),
      make("llama2-7b",      4096, 32, 32, 32, 11008, 32000,  4096, 1e4f, 1e-5f, false),
      make("mistral-7b",     4096, 32, 32, 8,  14336, 32000,  32768, 1e4f, 1e-5f, false),
      make("llama3-8b",      4096, 32, 32, 8,  14336, 128256, 8192, 5e5f, 1e-5f, false),
  };
  return presets;
}

const ModelConfig* find_preset(const std::string& name) {
  for (const auto& p : model_presets())
    if (p.name == name) return &p;
  return nullptr;
}

}  // namespace llmbench
