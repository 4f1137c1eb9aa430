// `llmbench models`: the presets with their shapes, parameter counts and weight bytes per dtype.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <iostream>

#include "engine/config.h"
#include "tools/cli/commands.h"
#include "tools/report/printers.h"

namespace llmbench {

namespace {

int list_models(const std::string& format) {
  const Row header = {"model", "params_m", "dim", "layers", "heads", "kv_heads", "ffn",
                      "vocab", "context", "rope_theta", "tied", "fp32_gib", "bf16_gib"};
  std::vector<Row> rows;
  for (const auto& c : model_presets()) {
    const double p = double(c.total_params());
    rows.push_back({c.name, fmt::format("{:.1f}", p / 1e6), std::to_string(c.dim),
                    std::to_string(c.n_layers), std::to_string(c.n_heads),
                    std::to_string(c.n_kv_heads), std::to_string(c.ffn_dim),
                    std::to_string(c.vocab_size), std::to_string(c.max_seq_len),
                    fmt::format("{:g}", c.rope_theta), c.tied_embeddings ? "yes" : "no",
                    fmt::format("{:.3f}", double(c.weight_bytes(DType::kFp32)) / (1 << 30)),
                    fmt::format("{:.3f}", double(c.weight_bytes(DType::kBf16)) / (1 << 30))});
  }
  print_rows(std::cout, format, header, rows);
  return 0;
}

}  // namespace

void add_models_command(CLI::App& root, CommandContext& ctx) {
  auto format = std::make_shared<std::string>("table");
  CLI::App* cmd = root.add_subcommand("models", "List model presets with parameters and bytes");
  cmd->add_option("--format", *format, "table|md|csv")
      ->check(CLI::IsMember({"table", "md", "csv"}))
      ->capture_default_str();
  cmd->callback([format, &ctx] { ctx.exit_code = list_models(*format); });
}

}  // namespace llmbench
