// Loading Hugging Face checkpoints: tiny checkpoints written here in fp32, fp16 and bf16 give
// bit-for-bit the logits of the same (equally rounded) weights built in memory, shards give
// what one file gives, config.json variants map onto ModelConfig, and every validation error is
// a BadInput line that names what is wrong. (Random mutations are fuzz_safetensors.cpp.)
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <initializer_list>

#include "engine/model/cpu_backend.h"
#include "kernels/common/half.h"
#include "engine/checkpoint/hf_checkpoint.h"
#include "engine/model/model.h"
#include "engine/bench/prompts.h"
#include "engine/checkpoint/safetensors.h"
#include "tests/engine/checkpoint_files.h"

namespace llmbench {

namespace {

using nlohmann::json;
using namespace llmbench::test;

fs::path scratch(const std::string& group = "") {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return fresh_dir("checkpoint", std::string(info->name()) + group);
}

ModelConfig tiny_llama() { return *find_preset("tiny"); }

// Qwen2-shaped: q/k/v biases and a tied LM head.
ModelConfig tiny_qwen2() {
  ModelConfig c = tiny_llama();
  c.qkv_bias = true;
  c.tied_embeddings = true;
  c.rope_theta = 1e6f;
  c.norm_eps = 1e-6f;
  return c;
}

// The values of `inner` rounded to `dtype` and widened back: exactly what a checkpoint stored
// as `dtype` holds, computed without going through a file.
class RoundedWeights final : public WeightSource {
 public:
  RoundedWeights(const WeightSource& inner, DType dtype) : inner_(inner), dtype_(dtype) {}
  void fill(const TensorSpec& spec, float* dst) const override {
    inner_.fill(spec, dst);
    for (std::int64_t i = 0; i < spec.numel(); ++i) {
      if (dtype_ == DType::kFp16) dst[i] = fp16_to_fp32(fp32_to_fp16(dst[i]));
      if (dtype_ == DType::kBf16) dst[i] = bf16_to_fp32(fp32_to_bf16(dst[i]));
    }
  }

 private:
  const WeightSource& inner_;
  DType dtype_;
};

std::vector<std::uint32_t> bits(const std::vector<float>& v) {
  std::vector<std::uint32_t> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = std::bit_cast<std::uint32_t>(v[i]);
  return out;
}

// Logits (as bits) after prefill of two distinct 5-token prompts and after 3 decode steps.
std::vector<std::vector<std::uint32_t>> logits_bits(const ModelConfig& c,
                                                    const WeightSource& source) {
  CpuBackend backend;
  const Model model(c, load_weights(c, source, backend), backend);
  Session s(model, 2, 5, 8);
  std::vector<std::vector<std::uint32_t>> out;
  auto next = s.prefill(synthetic_prompts(1, 2, 5, c.vocab_size, true), 5);
  out.push_back(bits(s.last_logits()));
  for (int step = 0; step < 3; ++step) {
    next = s.decode_step(next);
    out.push_back(bits(s.last_logits()));
  }
  return out;
}

// Every tensor of `c` filled from `a` and from `b` is bit-identical.
void expect_same_tensors(const ModelConfig& c, const WeightSource& a, const WeightSource& b) {
  for (const auto& spec : hf_tensor_specs(c)) {
    std::vector<float> va(std::size_t(spec.numel())), vb(va.size());
    a.fill(spec, va.data());
    b.fill(spec, vb.data());
    EXPECT_EQ(bits(va), bits(vb)) << spec.name;
  }
}

// The what() of the BadInput `f` throws; a test failure if it throws anything else or nothing.
template <class F>
std::string bad_input_of(F&& f) {
  try {
    f();
  } catch (const BadInput& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected BadInput, got another exception: " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected BadInput, nothing was thrown";
  return "";
}

// Checks that `message` contains each of `parts`.
void expect_mentions(const std::string& message, std::initializer_list<std::string> parts) {
  for (const auto& part : parts)
    EXPECT_NE(message.find(part), std::string::npos)
        << "message lacks \"" << part << "\": " << message;
}

ModelConfig without_name(ModelConfig c) {
  c.name.clear();
  return c;
}

void expect_same_config(const ModelConfig& got, const ModelConfig& want) {
  const ModelConfig a = without_name(got), b = without_name(want);
  EXPECT_EQ(a.dim, b.dim);
  EXPECT_EQ(a.n_layers, b.n_layers);
  EXPECT_EQ(a.n_heads, b.n_heads);
  EXPECT_EQ(a.n_kv_heads, b.n_kv_heads);
  EXPECT_EQ(a.ffn_dim, b.ffn_dim);
  EXPECT_EQ(a.vocab_size, b.vocab_size);
  EXPECT_EQ(a.max_seq_len, b.max_seq_len);
  EXPECT_EQ(a.rope_theta, b.rope_theta);
  EXPECT_EQ(a.norm_eps, b.norm_eps);
  EXPECT_EQ(a.tied_embeddings, b.tied_embeddings);
  EXPECT_EQ(a.qkv_bias, b.qkv_bias);
}

}  // namespace

// ---- loading: every dtype, both model kinds, shards ------------------------------------------

TEST(Checkpoint, EachDtypeGivesTheLogitsOfTheSameWeightsInMemory) {
  const RandomWeights random(21);
  for (const ModelConfig& c : {tiny_llama(), tiny_qwen2()}) {
    for (DType dtype : {DType::kFp32, DType::kFp16, DType::kBf16}) {
      SCOPED_TRACE(std::string(c.qkv_bias ? "qwen2" : "llama") + " " +
                   std::string(dtype_name(dtype)));
      const fs::path dir = scratch(std::string(c.qkv_bias ? "_qwen2_" : "_llama_") +
                                   std::string(dtype_name(dtype)));
      write_checkpoint(dir, c, random, dtype);
      ASSERT_TRUE(looks_like_hf_checkpoint(dir.string()));
      const ModelConfig read = read_hf_config(dir.string());
      EXPECT_EQ(read.name, dir.string());
      expect_same_config(read, c);

      const CheckpointWeights checkpoint(dir.string(), read);
      const RoundedWeights rounded(random, dtype);
      expect_same_tensors(c, checkpoint, rounded);
      EXPECT_EQ(logits_bits(read, checkpoint), logits_bits(c, rounded));
      if (dtype == DType::kFp32) {
        EXPECT_EQ(logits_bits(read, checkpoint), logits_bits(c, random));
      } else {  // the rounding is real: the stored weights are not the fp32 ones
        EXPECT_NE(logits_bits(read, checkpoint), logits_bits(c, random));
      }
    }
  }
}

TEST(Checkpoint, ShardedLoadingMatchesUnsharded) {
  const RandomWeights random(5);
  for (const ModelConfig& c : {tiny_llama(), tiny_qwen2()}) {
    const auto specs = hf_tensor_specs(c);
    const fs::path one = scratch("_one"), sharded = scratch("_sharded");
    write_checkpoint(one, c, random, DType::kBf16);

    // Two shards split in the middle of the layers, and the index transformers writes.
    const std::size_t half = specs.size() / 2;
    const std::vector<TensorSpec> first(specs.begin(), specs.begin() + std::ptrdiff_t(half));
    const std::vector<TensorSpec> second(specs.begin() + std::ptrdiff_t(half), specs.end());
    const std::string name1 = "model-00001-of-00002.safetensors";
    const std::string name2 = "model-00002-of-00002.safetensors";
    write_safetensors((sharded / name1).string(), first, random, DType::kBf16);
    write_safetensors((sharded / name2).string(), second, random, DType::kBf16);
    json index = {{"metadata", {{"total_size", 2 * c.total_params()}}},
                  {"weight_map", json::object()}};
    for (const auto& s : first) index["weight_map"][s.name] = name1;
    for (const auto& s : second) index["weight_map"][s.name] = name2;
    write_bytes(sharded / "model.safetensors.index.json", index.dump(2));
    write_config(sharded, hf_config_json(c));

    const CheckpointWeights a(one.string(), read_hf_config(one.string()));
    const CheckpointWeights b(sharded.string(), read_hf_config(sharded.string()));
    EXPECT_EQ(a.files().size(), 1u);
    ASSERT_EQ(b.files().size(), 2u);
    EXPECT_EQ(b.files()[0].path(), (sharded / name1).string());
    expect_same_tensors(c, a, b);
    EXPECT_EQ(logits_bits(c, a), logits_bits(c, b));
  }
}

TEST(Checkpoint, UnusedTensorsAndATiedModelsStoredHeadAreIgnored) {
  const RandomWeights random(3);
  const ModelConfig c = tiny_qwen2();  // tied: lm_head.weight is not needed
  auto specs = hf_tensor_specs(c);
  specs.push_back({"lm_head.weight", {c.vocab_size, c.dim}});
  specs.push_back({"model.layers.0.self_attn.rotary_emb.inv_freq", {c.head_dim() / 2}});
  const fs::path dir = scratch();
  write_config(dir, hf_config_json(c));
  write_safetensors((dir / "model.safetensors").string(), specs, random, DType::kFp32);
  const CheckpointWeights checkpoint(dir.string(), read_hf_config(dir.string()));
  expect_same_tensors(c, checkpoint, random);
}

TEST(Checkpoint, HalvesWidenExactlyFromUnalignedOffsets) {
  // Hand-written bits: 1, -2, 65504 (largest half), 2^-24 (smallest subnormal), -0, +inf.
  const std::vector<std::uint16_t> f16 = {0x3C00, 0xC000, 0x7BFF, 0x0001, 0x8000, 0x7C00};
  const std::vector<float> f16_values = {1.0f, -2.0f, 65504.0f, 0x1p-24f, -0.0f, INFINITY};
  // bf16: 1, -2, 2^-133 (a float subnormal), 3.3895314e38 (largest), -inf.
  const std::vector<std::uint16_t> bf16 = {0x3F80, 0xC000, 0x0001, 0x7F7F, 0xFF80};
  const std::vector<float> bf16_values = {1.0f, -2.0f, 0x1p-133f, 0x1.FEp127f, -INFINITY};
  std::string data = "x";  // one byte first, so every tensor starts at an odd address
  auto append = [&](const std::vector<std::uint16_t>& v) {
    for (auto h : v) data += {char(h & 0xFF), char(h >> 8)};
  };
  append(f16);
  append(bf16);
  const float f32[2] = {3.5f, -0.125f};
  data.append(reinterpret_cast<const char*>(f32), sizeof f32);
  const json header = {
      {"h", {{"dtype", "F16"}, {"shape", {6}}, {"data_offsets", {1, 13}}}},
      {"b", {{"dtype", "BF16"}, {"shape", {5}}, {"data_offsets", {13, 23}}}},
      {"f", {{"dtype", "F32"}, {"shape", {1, 2}}, {"data_offsets", {23, 31}}}},
      {"empty", {{"dtype", "F32"}, {"shape", {0, 4}}, {"data_offsets", {31, 31}}}}};
  const fs::path path = scratch() / "halves.safetensors";
  write_bytes(path, safetensors_bytes(header.dump(), data));
  SafetensorsFile file(path.string());
  ASSERT_EQ(file.tensors().size(), 4u);
  auto read = [&](const char* name) {
    const SafetensorsTensor* t = file.find(name);
    EXPECT_NE(t, nullptr) << name;
    std::vector<float> v(t ? std::size_t(t->numel()) : 0);
    if (t) file.read_f32(*t, v.data());
    return v;
  };
  EXPECT_EQ(bits(read("h")), bits(f16_values));
  EXPECT_EQ(bits(read("b")), bits(bf16_values));
  EXPECT_EQ(read("f"), std::vector<float>(f32, f32 + 2));
  EXPECT_TRUE(read("empty").empty());
  EXPECT_EQ(file.find("missing"), nullptr);

  // Move-only ownership: the mapping moves with the object and stays readable.
  SafetensorsFile moved(std::move(file));
  EXPECT_TRUE(file.tensors().empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
  EXPECT_EQ(moved.bytes(*moved.find("f")).size(), 8u);
}

TEST(Checkpoint, LargeTensorsConvertExactlyInParallel) {
  // 3 x 70001 elements: several conversion chunks, the last one partial.
  const RandomWeights random(8);
  const std::vector<TensorSpec> specs = {{"big.weight", {3, 70001}}};
  std::vector<float> want(std::size_t(specs[0].numel())), got(want.size());
  for (DType dtype : {DType::kFp32, DType::kFp16, DType::kBf16}) {
    const fs::path path = scratch() / "big.safetensors";
    write_safetensors(path.string(), specs, random, dtype);
    const SafetensorsFile file(path.string());
    file.read_f32(file.tensors().at(0), got.data());
    RoundedWeights(random, dtype).fill(specs[0], want.data());
    EXPECT_EQ(bits(got), bits(want)) << dtype_name(dtype);
  }
}

TEST(Checkpoint, EveryHalfRoundTripsThroughFp32) {
  // Widening is exact, so narrowing the result must give the same bits back (NaNs aside).
  for (std::uint32_t h = 0; h <= 0xFFFF; ++h) {
    const auto b = std::uint16_t(h);
    if (!std::isnan(fp16_to_fp32(b))) {
      ASSERT_EQ(fp32_to_fp16(fp16_to_fp32(b)), b) << h;
    }
    if (!std::isnan(bf16_to_fp32(b))) {
      ASSERT_EQ(fp32_to_bf16(bf16_to_fp32(b)), b) << h;
    }
    ASSERT_EQ(std::isnan(fp16_to_fp32(b)), (b & 0x7C00) == 0x7C00 && (b & 0x3FF) != 0) << h;
  }
}

// ---- config.json -----------------------------------------------------------------------------

TEST(CheckpointConfig, Qwen2HasBiasAndTiedEmbeddings) {
  // Qwen2.5-0.5B's config.json (abridged to the fields that matter here).
  const fs::path dir = scratch();
  write_bytes(dir / "config.json", R"({
    "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_act": "silu",
    "hidden_size": 896, "intermediate_size": 4864, "max_position_embeddings": 32768,
    "max_window_layers": 21, "num_attention_heads": 14, "num_hidden_layers": 24,
    "num_key_value_heads": 2, "rms_norm_eps": 1e-06, "rope_scaling": null,
    "rope_theta": 1000000.0, "sliding_window": 32768, "tie_word_embeddings": true,
    "torch_dtype": "bfloat16", "use_sliding_window": false, "vocab_size": 151936})");
  const ModelConfig c = read_hf_config(dir.string());
  expect_same_config(c, *find_preset("qwen2.5-0.5b"));
  EXPECT_TRUE(c.qkv_bias);
  EXPECT_TRUE(c.tied_embeddings);
}

TEST(CheckpointConfig, MistralContextIsCappedAtItsSlidingWindow) {
  // Mistral-7B-v0.1's config.json: full attention equals its sliding window up to 4096 tokens.
  const fs::path dir = scratch();
  write_bytes(dir / "config.json", R"({
    "architectures": ["MistralForCausalLM"], "model_type": "mistral", "hidden_act": "silu",
    "hidden_size": 4096, "intermediate_size": 14336, "max_position_embeddings": 32768,
    "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
    "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "sliding_window": 4096,
    "tie_word_embeddings": false, "torch_dtype": "bfloat16", "vocab_size": 32000})");
  ModelConfig want = *find_preset("mistral-7b");
  want.max_seq_len = 4096;
  const ModelConfig c = read_hf_config(dir.string());
  expect_same_config(c, want);
  EXPECT_FALSE(c.qkv_bias);
}

TEST(CheckpointConfig, LlamaDefaultsApply) {
  // No num_key_value_heads (multi-head attention), rope_theta, tie_word_embeddings or
  // architectures: the defaults of transformers' LlamaConfig.
  const fs::path dir = scratch();
  write_bytes(dir / "config.json", R"({
    "model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008,
    "max_position_embeddings": 4096, "num_attention_heads": 32, "num_hidden_layers": 32,
    "num_key_value_heads": null, "rms_norm_eps": 1e-05, "vocab_size": 32000,
    "attention_bias": false, "mlp_bias": false, "pretraining_tp": 1})");
  expect_same_config(read_hf_config(dir.string()), *find_preset("llama2-7b"));
}

TEST(CheckpointConfig, ExporterConfigOfEveryPresetReadsBack) {
  for (const auto& preset : model_presets()) {
    const fs::path dir = scratch("_" + preset.name);
    write_config(dir, hf_config_json(preset));
    expect_same_config(read_hf_config(dir.string()), preset);
  }
}

TEST(CheckpointConfig, ErrorsNameTheProblem) {
  const fs::path dir = scratch();
  const json base = hf_config_json(tiny_llama());
  auto error_of = [&](const json& config) {
    write_config(dir, config);
    return bad_input_of([&] { read_hf_config(dir.string()); });
  };
  auto with = [&](const char* key, const json& value) {
    json j = base;
    j[key] = value;
    return j;
  };
  auto without = [&](const char* key) {
    json j = base;
    j.erase(key);
    return j;
  };
  expect_mentions(error_of(with("architectures", {"GPT2LMHeadModel"})),
                  {"config.json", "architecture 'GPT2LMHeadModel' is not Llama-family"});
  json gemma = without("architectures");
  gemma["model_type"] = "gemma";
  expect_mentions(error_of(gemma), {"model_type 'gemma' is not Llama-family"});
  expect_mentions(error_of(with("model_type", "qwen2")), {"disagrees"});
  json anonymous = without("architectures");
  anonymous.erase("model_type");
  expect_mentions(error_of(anonymous), {"neither \"architectures\" nor \"model_type\""});
  expect_mentions(error_of(without("hidden_size")), {"missing \"hidden_size\""});
  expect_mentions(error_of(without("rms_norm_eps")), {"missing \"rms_norm_eps\""});
  expect_mentions(error_of(with("num_hidden_layers", "2")),
                  {"\"num_hidden_layers\" must be an integer", "found string \"2\""});
  expect_mentions(error_of(with("vocab_size", -5)), {"\"vocab_size\" must be an integer"});
  expect_mentions(error_of(with("intermediate_size", 160.5)), {"\"intermediate_size\""});
  expect_mentions(error_of(with("rope_theta", 0)), {"\"rope_theta\" must be a positive"});
  expect_mentions(error_of(with("rms_norm_eps", 1e300)), {"\"rms_norm_eps\" must be a positive"});
  expect_mentions(error_of(with("tie_word_embeddings", "yes")), {"\"tie_word_embeddings\""});
  expect_mentions(error_of(with("head_dim", 32)),
                  {"\"head_dim\" 32 is not hidden_size / num_attention_heads (64 / 4)",
                   "not supported"});
  expect_mentions(error_of(with("rope_scaling", {{"rope_type", "llama3"}, {"factor", 8.0}})),
                  {"\"rope_scaling\"", "not supported"});
  expect_mentions(error_of(with("attention_bias", true)), {"\"attention_bias\": true"});
  expect_mentions(error_of(with("hidden_act", "gelu")), {"\"hidden_act\"", "gelu"});
  expect_mentions(error_of(with("num_key_value_heads", 3)),
                  {"head count is not a multiple of the KV head count"});
  write_bytes(dir / "config.json",
              "{\"architectures\": " + std::string(100000, '[') + std::string(100000, ']') + "}");
  // Refused before the parser recurses (engine/checkpoint/json_input.h).
  expect_mentions(bad_input_of([&] { read_hf_config(dir.string()); }),
                  {"config.json", "nested deeper than 64 levels"});
  write_bytes(dir / "config.json", "{\"architectures\": [[\"LlamaForCausalLM\"]]}");
  expect_mentions(bad_input_of([&] { read_hf_config(dir.string()); }),
                  {"\"architectures\" must hold strings, found array"});
  write_bytes(dir / "config.json", "{\"hidden_size\": ");
  expect_mentions(bad_input_of([&] { read_hf_config(dir.string()); }), {"not valid JSON"});
  write_bytes(dir / "config.json", "[1, 2]");
  expect_mentions(bad_input_of([&] { read_hf_config(dir.string()); }),
                  {"expected a JSON object, found array"});
  fs::remove(dir / "config.json");
  EXPECT_FALSE(looks_like_hf_checkpoint(dir.string()));
  expect_mentions(bad_input_of([&] { read_hf_config(dir.string()); }), {"not found"});
}

// ---- safetensors header validation -----------------------------------------------------------

namespace {

// A valid two-tensor header: "a" F32 [2, 2] at [0, 16), "b" F16 [3] at [16, 22).
json two_tensors() {
  return {{"__metadata__", {{"format", "pt"}}},
          {"a", {{"dtype", "F32"}, {"shape", {2, 2}}, {"data_offsets", {0, 16}}}},
          {"b", {{"dtype", "F16"}, {"shape", {3}}, {"data_offsets", {16, 22}}}}};
}

// The BadInput message of opening a file of `header` and `data_bytes` zero bytes of data.
std::string open_error(const fs::path& path, const std::string& header,
                       std::size_t data_bytes = 22) {
  write_bytes(path, safetensors_bytes(header, std::string(data_bytes, '\0')));
  return bad_input_of([&] { SafetensorsFile file(path.string()); });
}

}  // namespace

TEST(SafetensorsHeader, ValidFileOpens) {
  const fs::path path = scratch() / "ok.safetensors";
  write_bytes(path, safetensors_bytes(two_tensors().dump() + "   ", std::string(22, '\0')));
  const SafetensorsFile file(path.string());
  ASSERT_EQ(file.tensors().size(), 2u);  // __metadata__ is not a tensor
  EXPECT_EQ(file.tensors()[1].name, "b");
  EXPECT_EQ(file.tensors()[1].dtype, DType::kFp16);
  EXPECT_EQ(file.tensors()[1].shape, std::vector<std::int64_t>{3});
}

TEST(SafetensorsHeader, LengthFieldErrors) {
  const fs::path path = scratch() / "bad.safetensors";
  const std::string header = two_tensors().dump();
  const std::string data(22, '\0');
  auto error_of = [&](const std::string& bytes) {
    write_bytes(path, bytes);
    return bad_input_of([&] { SafetensorsFile file(path.string()); });
  };
  expect_mentions(error_of("abc"),
                  {path.string(), "file is 3 bytes, too short for the 8-byte header length"});
  const std::string beyond = error_of(safetensors_bytes(header, data, 1u << 20));
  expect_mentions(beyond, {path.string(), "header length 1048576 is beyond the file size"});
  expect_mentions(error_of(safetensors_bytes(header, data, ~0ull)),
                  {"header length 18446744073709551615 is beyond the file size"});
  // A header that fits in its (sparse) file but is absurdly long is refused before parsing.
  write_bytes(path, safetensors_bytes("", "", 150'000'000));
  fs::resize_file(path, 200'000'000);
  expect_mentions(bad_input_of([&] { SafetensorsFile file(path.string()); }),
                  {"header length 150000000 is over the limit of 100000000 bytes"});
  fs::remove(path);  // sparse, but 200 MB to anything that copies the scratch directory
  const std::string none = (path.parent_path() / "none").string();
  expect_mentions(bad_input_of([&] { SafetensorsFile file(none); }), {"cannot open"});
  expect_mentions(bad_input_of([&] { SafetensorsFile file(path.parent_path().string()); }),
                  {"not a regular file"});
}

TEST(SafetensorsHeader, JsonErrors) {
  const fs::path path = scratch() / "bad.safetensors";
  expect_mentions(open_error(path, "{\"a\": "), {path.string(), "header is not valid JSON"});
  expect_mentions(open_error(path, "[1, 2, 3]"), {"header must be a JSON object, found array"});
  expect_mentions(open_error(path, two_tensors().dump().replace(1, 0, "\"a\": {}, ")),
                  {"tensor 'a' is listed twice"});
  json j = two_tensors();
  j["__metadata__"] = {{"format", 1}};
  expect_mentions(open_error(path, j.dump()), {"\"__metadata__\" must be an object of strings"});
  // Nesting a hundred thousand levels deep is refused before any parse (issue 42: one bounded
  // parse for every input read from outside), and a name read from the file cannot break the
  // message over two lines.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  expect_mentions(open_error(path, "{\"a\": " + deep + "}"),
                  {"header is not valid JSON", "nested deeper than 64 levels"});
  const std::string multiline = open_error(path, "{\"a\\nb\": 5}");
  expect_mentions(multiline, {"tensor 'a?b'"});
  EXPECT_EQ(multiline.find('\n'), std::string::npos);
  j = two_tensors();
  j["a"] = 7;
  expect_mentions(open_error(path, j.dump()),
                  {"tensor 'a': expected an object with dtype, shape and data_offsets, "
                   "found number 7"});
}

TEST(SafetensorsHeader, EntryFieldErrors) {
  const fs::path path = scratch() / "bad.safetensors";
  auto error_of = [&](const char* key, const json* value) {
    json j = two_tensors();
    if (value) j["b"][key] = *value;
    else j["b"].erase(key);
    return open_error(path, j.dump());
  };
  for (const char* key : {"dtype", "shape", "data_offsets"})
    expect_mentions(error_of(key, nullptr),
                    {path.string(), "tensor 'b': missing \"" + std::string(key) + "\""});
  const json number = 16, text = "F16", negative = {-3}, fractional = {1.5};
  const json huge = {1u << 31, 1u << 31, 1u << 31};
  expect_mentions(error_of("dtype", &number),
                  {"tensor 'b': \"dtype\" must be a string, found number 16"});
  const json i8 = "I8", f64 = "F64";
  expect_mentions(error_of("dtype", &i8),
                  {"tensor 'b': unsupported dtype 'I8' (expected F32, F16 or BF16)"});
  expect_mentions(error_of("dtype", &f64), {"unsupported dtype 'F64'"});
  const std::string shape_rule = "\"shape\" must be an array of integers >= 0, found ";
  expect_mentions(error_of("shape", &text), {shape_rule + "string"});
  expect_mentions(error_of("shape", &negative), {shape_rule + "array [-3]"});
  expect_mentions(error_of("shape", &fractional), {"\"shape\" must be an array"});
  expect_mentions(error_of("shape", &huge), {"has more elements than fit in 64 bits"});
  const json one = {16}, reversed = {22, 16}, neg = {-2, 22}, strings = {"16", "22"};
  for (const json* bad : {&number, &one, &reversed, &neg, &strings})
    expect_mentions(error_of("data_offsets", bad),
                    {"tensor 'b': \"data_offsets\" must be [begin, end] with 0 <= begin <= end"});
  const json wrong_size = {16, 20};
  expect_mentions(error_of("data_offsets", &wrong_size),
                  {"tensor 'b': data_offsets [16, 20) hold 4 bytes, "
                   "expected 6 (shape [3] of F16)"});
  const json shape4 = {4};
  expect_mentions(error_of("shape", &shape4), {"hold 6 bytes, expected 8"});
}

TEST(SafetensorsHeader, OffsetErrors) {
  const fs::path path = scratch() / "bad.safetensors";
  // Out of range: the data section is 22 bytes; a tensor claims bytes up to 30.
  json j = two_tensors();
  j["b"]["shape"] = {7};
  j["b"]["data_offsets"] = {16, 30};
  expect_mentions(open_error(path, j.dump()),
                  {path.string(), "tensor 'b': data_offsets end 30 is beyond the data section "
                                  "(22 bytes; truncated file?)"});
  // Truncated: a valid file cut short.
  expect_mentions(open_error(path, two_tensors().dump(), 20),
                  {"tensor 'b': data_offsets end 22 is beyond the data section "
                   "(20 bytes; truncated file?)"});
  // Overlapping.
  j = two_tensors();
  j["b"]["data_offsets"] = {12, 18};
  expect_mentions(open_error(path, j.dump()), {"tensors 'a' [0, 16) and 'b' [12, 18) overlap"});
  j["b"]["data_offsets"] = {0, 6};  // same start
  expect_mentions(open_error(path, j.dump()), {"overlap"});
  // A gap, and an empty tensor inside another's bytes, are harmless.
  j = two_tensors();
  j["a"]["shape"] = {3};
  j["a"]["data_offsets"] = {0, 12};
  j["z"] = {{"dtype", "BF16"}, {"shape", {0}}, {"data_offsets", {4, 4}}};
  write_bytes(path, safetensors_bytes(j.dump(), std::string(22, '\0')));
  EXPECT_EQ(SafetensorsFile(path.string()).tensors().size(), 3u);
}

// ---- checkpoint directory validation ---------------------------------------------------------

TEST(CheckpointWeightsErrors, MissingTensorWrongShapeAndMissingHead) {
  const RandomWeights random(1);
  const ModelConfig c = tiny_llama();
  const fs::path dir = scratch();
  write_config(dir, hf_config_json(c));
  const std::string file = (dir / "model.safetensors").string();
  auto error_with = [&](std::vector<TensorSpec> specs) {
    write_safetensors(file, specs, random, DType::kFp16);
    return bad_input_of([&] { CheckpointWeights w(dir.string(), c); });
  };
  auto specs = hf_tensor_specs(c);
  auto missing = specs;
  missing.erase(missing.begin() + 5);  // model.layers.0.self_attn.o_proj.weight
  expect_mentions(error_with(missing),
                  {dir.string(), "tensor 'model.layers.0.self_attn.o_proj.weight' is missing"});
  auto reshaped = specs;
  reshaped[4].shape = {c.kv_dim(), c.dim + 1};  // model.layers.0.self_attn.v_proj.weight
  expect_mentions(error_with(reshaped),
                  {"tensor 'model.layers.0.self_attn.v_proj.weight' has shape [32, 65], "
                   "expected [32, 64]"});
  // A config with absurdly many layers fails at the first missing one, at once.
  write_safetensors(file, specs, random, DType::kFp16);
  ModelConfig deep = c;
  deep.n_layers = 2'000'000'000;
  expect_mentions(bad_input_of([&] { CheckpointWeights w(dir.string(), deep); }),
                  {"tensor 'model.layers.2.input_layernorm.weight' is missing"});
  auto headless = specs;
  headless.pop_back();
  expect_mentions(error_with(headless),
                  {"tensor 'lm_head.weight' is missing", "tie_word_embeddings false"});
  fs::remove(file);
  expect_mentions(bad_input_of([&] { CheckpointWeights w(dir.string(), c); }),
                  {"neither model.safetensors nor model.safetensors.index.json"});
  // A damaged file is named as it is opened.
  write_safetensors(file, specs, random, DType::kFp32);
  const std::string bytes = read_bytes(file);
  write_bytes(file, bytes.substr(0, bytes.size() - 3));
  expect_mentions(bad_input_of([&] { CheckpointWeights w(dir.string(), c); }),
                  {file, "beyond the data section", "truncated file?"});
}

TEST(CheckpointWeightsErrors, IndexErrors) {
  const RandomWeights random(1);
  const ModelConfig c = tiny_llama();
  const fs::path dir = scratch();
  write_config(dir, hf_config_json(c));
  const auto specs = hf_tensor_specs(c);
  write_safetensors((dir / "shard.safetensors").string(), specs, random, DType::kFp32);
  const fs::path index = dir / "model.safetensors.index.json";
  auto error_of = [&](const json& j) {
    write_bytes(index, j.dump());
    return bad_input_of([&] { CheckpointWeights w(dir.string(), c); });
  };
  json good = {{"weight_map", json::object()}};
  for (const auto& s : specs) good["weight_map"][s.name] = "shard.safetensors";
  { // the valid index loads
    write_bytes(index, good.dump());
    const CheckpointWeights w(dir.string(), c);
    expect_same_tensors(c, w, random);
  }
  expect_mentions(error_of({{"metadata", {}}}), {index.string(), "expected \"weight_map\""});
  json j = good;
  j["weight_map"]["model.norm.weight"] = 3;
  expect_mentions(error_of(j), {"tensor 'model.norm.weight': file name must be a string"});
  j = good;
  j["weight_map"]["model.norm.weight"] = "model-00002-of-00002.safetensors";
  expect_mentions(error_of(j), {"tensor 'model.norm.weight' is in "
                                "'model-00002-of-00002.safetensors', which is not a file"});
  j = good;
  j["weight_map"]["model.extra.weight"] = "shard.safetensors";
  expect_mentions(error_of(j), {"tensor 'model.extra.weight' is listed in 'shard.safetensors', "
                                "which has no such tensor"});
  j = good;
  j["weight_map"].erase("model.norm.weight");
  expect_mentions(error_of(j), {"tensor 'model.norm.weight' is missing"});
  write_bytes(index, "{");
  expect_mentions(bad_input_of([&] { CheckpointWeights w(dir.string(), c); }), {"not valid JSON"});
}

}  // namespace llmbench
