// Hugging Face checkpoint directories (see hf_checkpoint.h): config.json fields mapped onto
// ModelConfig with transformers' defaults, and the safetensors files behind CheckpointWeights.
#include "engine/checkpoint/hf_checkpoint.h"

#include <algorithm>
#include <cfloat>
#include <climits>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/checkpoint/input_file.h"
#include "kernels/common/error.h"
#include "engine/checkpoint/json_describe.h"
#include "engine/checkpoint/json_input.h"

namespace llmbench {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// config.json and index files are a few KB; anything this large is not one.
constexpr std::uintmax_t kMaxJsonFileBytes = 64u << 20;

// The JSON object in `path` (`what` names the file's role in messages).
json read_json_object(const fs::path& path, const std::string& what) {
  std::error_code ec;
  refuse_special_file(path.string(), what);
  if (!fs::is_regular_file(path, ec)) throw BadInput(what + " '" + path.string() + "' not found");
  const auto bytes = fs::file_size(path, ec);
  if (ec || bytes > kMaxJsonFileBytes)
    throw BadInput(what + " '" + path.string() + "': unreadable or larger than 64 MiB");
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) throw BadInput(what + " '" + path.string() + "': cannot read");
  auto parsed = parse_json(text.str());
  if (!parsed.ok())
    throw BadInput(what + " '" + path.string() + "': not valid JSON (" + parsed.error + ")");
  json j = std::move(parsed.value);
  if (!j.is_object())
    throw BadInput(what + " '" + path.string() + "': expected a JSON object, found " +
                   describe_json(j));
  return j;
}

// Typed access to config.json fields; a null value counts as absent (transformers writes
// "num_key_value_heads": null and means the default).
class ConfigFields {
 public:
  ConfigFields(const json& j, std::string path) : j_(j), path_(std::move(path)) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw BadInput("config '" + path_ + "': " + what);
  }
  const json* find(const char* key) const {
    const auto it = j_.find(key);
    return it == j_.end() || it->is_null() ? nullptr : &*it;
  }
  const json& require(const char* key) const {
    const json* v = find(key);
    if (!v) fail(std::string("missing \"") + key + "\"");
    return *v;
  }
  int positive_int(const char* key, const json& v) const {
    // nlohmann stores every integer literal without a minus sign as unsigned.
    if (!v.is_number_unsigned() || v.get<std::uint64_t>() == 0 ||
        v.get<std::uint64_t>() > std::uint64_t(INT_MAX))
      fail(std::string("\"") + key + "\" must be an integer from 1 to " + std::to_string(INT_MAX) +
           ", found " + describe_json(v));
    return int(v.get<std::uint64_t>());
  }
  int positive_int(const char* key) const { return positive_int(key, require(key)); }
  float positive_float(const char* key, const json& v) const {
    // Checked in double: a value beyond the float range must not reach the conversion.
    if (!v.is_number() || !(v.get<double>() > 0.0) || !(v.get<double>() <= FLT_MAX))
      fail(std::string("\"") + key + "\" must be a positive finite number, found " +
           describe_json(v));
    return float(v.get<double>());
  }
  float positive_float(const char* key) const { return positive_float(key, require(key)); }
  bool boolean(const char* key, bool fallback) const {
    const json* v = find(key);
    if (!v) return fallback;
    if (!v->is_boolean())
      fail(std::string("\"") + key + "\" must be true or false, found " + describe_json(*v));
    return v->get<bool>();
  }

 private:
  const json& j_;
  std::string path_;
};

enum class Family { kLlama, kMistral, kQwen2 };

struct KnownArchitecture {
  const char* architecture;  // config.json "architectures"
  const char* model_type;    // config.json "model_type"
  Family family;
};
constexpr KnownArchitecture kKnown[] = {
    {"LlamaForCausalLM", "llama", Family::kLlama},
    {"MistralForCausalLM", "mistral", Family::kMistral},
    {"Qwen2ForCausalLM", "qwen2", Family::kQwen2},
};

// The family named by "architectures" and/or "model_type"; both, when present, must agree.
Family read_family(const ConfigFields& f) {
  const json* archs = f.find("architectures");
  const json* type = f.find("model_type");
  if (!archs && !type)
    f.fail("neither \"architectures\" nor \"model_type\" is set (expected LlamaForCausalLM, "
           "MistralForCausalLM or Qwen2ForCausalLM)");
  std::optional<Family> family;
  auto agree = [&](Family got, const std::string& source) {
    if (family && *family != got) f.fail(source + " disagrees with the rest of the config");
    family = got;
  };
  if (archs) {
    if (!archs->is_array() || archs->empty())
      f.fail("\"architectures\" must be a non-empty array of strings, found " +
             describe_json(*archs));
    for (const json& a : *archs) {
      if (!a.is_string()) f.fail("\"architectures\" must hold strings, found " + describe_json(a));
      const auto& name = a.get_ref<const std::string&>();
      const KnownArchitecture* known = nullptr;
      for (const auto& k : kKnown)
        if (name == k.architecture) known = &k;
      if (!known)
        f.fail("architecture '" + printable(name) +
               "' is not Llama-family (supported: LlamaForCausalLM, MistralForCausalLM, "
               "Qwen2ForCausalLM)");
      agree(known->family, "architecture '" + printable(name) + "'");
    }
  }
  if (type) {
    if (!type->is_string())
      f.fail("\"model_type\" must be a string, found " + describe_json(*type));
    const auto& name = type->get_ref<const std::string&>();
    const KnownArchitecture* known = nullptr;
    for (const auto& k : kKnown)
      if (name == k.model_type) known = &k;
    if (!known)
      f.fail("model_type '" + printable(name) +
             "' is not Llama-family (supported: llama, mistral, qwen2)");
    agree(known->family, "model_type '" + printable(name) + "'");
  }
  return *family;
}

}  // namespace

bool looks_like_hf_checkpoint(const std::string& dir) {
  std::error_code ec;
  return fs::is_directory(dir, ec) && fs::is_regular_file(fs::path(dir) / "config.json", ec);
}

ModelConfig read_hf_config(const std::string& dir) {
  const fs::path path = fs::path(dir) / "config.json";
  const json j = read_json_object(path, "config");
  const ConfigFields f(j, path.string());
  const Family family = read_family(f);

  ModelConfig c;
  c.name = dir;
  c.dim = f.positive_int("hidden_size");
  c.n_layers = f.positive_int("num_hidden_layers");
  c.n_heads = f.positive_int("num_attention_heads");
  const json* kv = f.find("num_key_value_heads");
  c.n_kv_heads = kv ? f.positive_int("num_key_value_heads", *kv) : c.n_heads;
  c.ffn_dim = f.positive_int("intermediate_size");
  c.vocab_size = f.positive_int("vocab_size");
  c.max_seq_len = f.positive_int("max_position_embeddings");
  const json* theta = f.find("rope_theta");
  c.rope_theta = theta ? f.positive_float("rope_theta", *theta) : 10000.0f;
  c.norm_eps = f.positive_float("rms_norm_eps");
  c.tied_embeddings = f.boolean("tie_word_embeddings", false);
  // Qwen2 always has q/k/v biases (and none on o_proj), which is what the engine computes.
  // Llama's and Mistral's "attention_bias" adds an o_proj bias too, which it does not.
  c.qkv_bias = family == Family::kQwen2;
  if (family != Family::kQwen2 && f.boolean("attention_bias", false))
    f.fail("\"attention_bias\": true (biases on q/k/v and o_proj) is not supported");
  if (f.boolean("mlp_bias", false)) f.fail("\"mlp_bias\": true is not supported");

  // Features that would change the results if ignored are refused rather than approximated.
  if (const json* act = f.find("hidden_act"); act && *act != "silu")
    f.fail("\"hidden_act\" " + describe_json(*act) + " is not supported (expected \"silu\")");
  if (const json* scaling = f.find("rope_scaling"))
    f.fail("\"rope_scaling\" " + describe_json(*scaling) + " is not supported (expected null)");
  if (const json* head_dim = f.find("head_dim")) {
    const int hd = f.positive_int("head_dim", *head_dim);
    if (c.dim % c.n_heads != 0 || hd != c.dim / c.n_heads)
      f.fail("\"head_dim\" " + std::to_string(hd) + " is not hidden_size / num_attention_heads (" +
             std::to_string(c.dim) + " / " + std::to_string(c.n_heads) + "): not supported");
  }
  // Sliding-window attention equals full attention while the sequence fits in the window, so
  // the context is capped there instead of computing something else beyond it. (Mistral v0.1
  // has a window; Qwen2 has one only with use_sliding_window.)
  const bool windowed = family == Family::kMistral ||
                        (family == Family::kQwen2 && f.boolean("use_sliding_window", false));
  if (const json* window = f.find("sliding_window"); window && windowed)
    c.max_seq_len = std::min(c.max_seq_len, f.positive_int("sliding_window", *window));
  c.validate();
  return c;
}

CheckpointWeights::CheckpointWeights(const std::string& dir, const ModelConfig& config)
    : dir_(dir) {
  config.validate();  // the layer-count arithmetic below assumes positive dimensions
  // As transformers does: a single model.safetensors wins over an index.
  const fs::path single = fs::path(dir) / "model.safetensors";
  const fs::path index = fs::path(dir) / "model.safetensors.index.json";
  std::error_code ec;
  if (fs::exists(single, ec)) {
    files_.emplace_back(single.string());
    const auto& tensors = files_[0].tensors();
    for (std::size_t i = 0; i < tensors.size(); ++i) tensors_[tensors[i].name] = {0, i};
  } else if (fs::exists(index, ec)) {
    open_shards(index.string());
  } else {
    throw BadInput("checkpoint '" + dir + "': neither model.safetensors nor "
                   "model.safetensors.index.json is there");
  }
  // Every tensor the engine needs, present with its shape, before anything is loaded. Each
  // layer has at least 9 tensors, so a config with more layers than the files could hold is
  // checked only that far: the first missing tensor is within those layers, and a huge
  // num_hidden_layers costs no time or memory before it is reported.
  ModelConfig checked = config;
  checked.n_layers =
      int(std::min<std::size_t>(std::size_t(config.n_layers), tensors_.size() / 9 + 1));
  for (const auto& spec : hf_tensor_specs(checked)) {
    const SafetensorsFile* file = nullptr;
    locate(spec, &file);
  }
}

void CheckpointWeights::open_shards(const std::string& index_path) {
  const json index = read_json_object(index_path, "index");
  const auto where = "index '" + index_path + "': ";
  const auto map_it = index.find("weight_map");
  if (map_it == index.end() || !map_it->is_object())
    throw BadInput(where + "expected \"weight_map\", an object of tensor name -> file name");
  // Shards in name order (the order they were written in), each opened once.
  std::map<std::string, std::vector<std::string>> shards;
  for (const auto& [tensor, file] : map_it->items()) {
    if (!file.is_string())
      throw BadInput(where + "tensor '" + printable(tensor) +
                     "': file name must be a string, found " + describe_json(file));
    shards[file.get<std::string>()].push_back(tensor);
  }
  for (const auto& [file_name, names] : shards) {
    const fs::path file_path = fs::path(dir_) / file_name;
    std::error_code ec;
    if (!fs::is_regular_file(file_path, ec))
      throw BadInput(where + "tensor '" + printable(names.front()) + "' is in '" +
                     printable(file_name) + "', which is not a file in '" + dir_ + "'");
    files_.emplace_back(file_path.string());
    const SafetensorsFile& file = files_.back();
    for (const auto& name : names) {
      const SafetensorsTensor* t = file.find(name);
      if (!t)
        throw BadInput(where + "tensor '" + printable(name) + "' is listed in '" +
                       printable(file_name) + "', which has no such tensor");
      tensors_[name] = {files_.size() - 1, std::size_t(t - file.tensors().data())};
    }
  }
}

const SafetensorsTensor& CheckpointWeights::locate(const TensorSpec& spec,
                                                   const SafetensorsFile** file) const {
  const auto it = tensors_.find(spec.name);
  if (it == tensors_.end()) {
    const char* hint = spec.name == "lm_head.weight"
                           ? " (config.json has tie_word_embeddings false, so it must be stored)"
                           : "";
    throw BadInput("checkpoint '" + dir_ + "': tensor '" + spec.name + "' is missing" + hint);
  }
  *file = &files_[it->second.file];
  const SafetensorsTensor& t = (*file)->tensors()[it->second.tensor];
  if (t.shape != spec.shape)
    throw BadInput("checkpoint '" + dir_ + "': tensor '" + spec.name + "' has shape " +
                   shape_text(t.shape) + ", expected " + shape_text(spec.shape) +
                   " (from config.json)");
  return t;
}

void CheckpointWeights::fill(const TensorSpec& spec, float* dst) const {
  const SafetensorsFile* file = nullptr;
  const SafetensorsTensor& t = locate(spec, &file);
  file->read_f32(t, dst);
}

}  // namespace llmbench
