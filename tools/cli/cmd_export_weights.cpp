// `llmbench export-weights`: a preset's seeded random weights as a Hugging Face model directory
// (config.json + model.safetensors), so independent tools (tests/reference/llama_ref.py,
// transformers) can run exactly the model llmbench benchmarks. docs/weights.md has the details.
// Deliberately not: a converter of real checkpoints, or a tokenizer exporter.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <climits>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "engine/checkpoint/atomic_file.h"
#include "engine/model/config.h"
#include "kernels/common/error.h"
#include "engine/model/weights.h"
#include "tools/console/flag_values.h"
#include "tools/cli/commands.h"
#include "engine/checkpoint/hf_config_writer.h"
#include "engine/checkpoint/safetensors_writer.h"

namespace llmbench {

namespace {

namespace fs = std::filesystem;

// Checks -o and creates the directory (its parent must exist already); `created` says whether
// it was new.
fs::path prepare_output_dir(const std::string& out, bool& created) {
  if (out.empty()) throw BadInput("-o: expected an output directory");
  fs::path dir(out);
  if (!dir.has_filename()) dir = dir.parent_path();  // "out/" -> "out"
  const fs::path parent = dir.parent_path().empty() ? fs::path(".") : dir.parent_path();
  std::error_code ec;
  if (!fs::is_directory(parent, ec))
    throw BadInput("-o: parent directory '" + parent.string() + "' does not exist");
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw BadInput("-o: '" + dir.string() + "' exists and is not a directory");
  created = fs::create_directory(dir, ec);
  if (ec) throw BadInput("-o: cannot create directory '" + dir.string() + "': " + ec.message());
  return dir;
}

int export_weights(const std::string& model, const std::string& dtype_text,
                   const std::string& seed_text, const std::string& out) {
  const ModelConfig* preset = find_preset(model);
  if (!preset)
    throw BadInput("--model: unknown preset '" + model + "' (`llmbench models` lists them)");
  const auto dtype = parse_dtype(dtype_text);
  // int8/int4 are an engine detail (weights are quantised when loaded): a checkpoint stays
  // float, so the numpy reference can read it.
  if (!dtype || dtype_is_quantized(*dtype))
    throw BadInput("--dtype: expected fp32, fp16 or bf16, got '" + dtype_text + "'");
  const auto seed = std::uint64_t(parse_int("--seed", seed_text, 0, INT_MAX));  // as `run` takes it
  preset->validate();
  bool created = false;
  const fs::path dir = prepare_output_dir(out, created);
  const fs::path config_path = dir / "config.json", weights_path = dir / "model.safetensors";
  try {
    write_file_atomically(config_path.string(), hf_config_for(*preset, *dtype).dump(2) + "\n",
                          "export-weights");
    // Written under a temporary name and renamed, so it is either whole or absent.
    write_safetensors(weights_path.string(), hf_tensor_specs(*preset), RandomWeights(seed),
                      *dtype,
                      {{"format", "pt"},
                       {"llmbench_preset", preset->name},
                       {"llmbench_seed", std::to_string(seed)}});
  } catch (...) {
    // Leave nothing half-written: a config.json alone would look like a model directory.
    std::error_code ec;
    fs::remove(config_path, ec);
    if (created) fs::remove(dir, ec);
    throw;
  }
  fmt::print("wrote {} and {} ({}, {:.2f} M params, {}, seed {}, {:.1f} MiB)\n",
             config_path.string(), weights_path.string(), preset->name,
             double(preset->total_params()) / 1e6, dtype_name(*dtype), seed,
             double(fs::file_size(weights_path)) / (1 << 20));
  return 0;
}

}  // namespace

void add_export_weights_command(CLI::App& root, CommandContext& ctx) {
  struct Options {
    std::string model, dtype = "fp32", seed = "0", out;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = root.add_subcommand(
      "export-weights", "Write a preset's random weights as config.json + model.safetensors");
  cmd->footer("Examples:\n  llmbench export-weights --model tiny -o tiny-hf\n  llmbench export-weights --model small --dtype bf16 --seed 3 -o small-bf16");
  cmd->add_option("--model", opts->model, "Model preset (see `llmbench models`)")->required();
  cmd->add_option("--dtype", opts->dtype, "fp32|fp16|bf16 (stored dtype)")->capture_default_str();
  cmd->add_option("--seed", opts->seed, "Seed of the random weights")->capture_default_str();
  cmd->add_option("-o,--output", opts->out, "Output directory (created; its parent must exist)")
      ->required();
  cmd->callback([opts, &ctx] {
    ctx.exit_code = export_weights(opts->model, opts->dtype, opts->seed, opts->out);
  });
}

}  // namespace llmbench
