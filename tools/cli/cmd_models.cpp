// `llmbench models`: the presets with their shapes, parameter counts and weight bytes per dtype.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <tuple>

#include "engine/model/config.h"
#include "tools/cli/commands.h"
#include "tools/console/printers.h"

namespace llmbench {

namespace {

// One preset's columns: name, json value, printed text. The table and json read the same list.
std::vector<std::tuple<std::string, nlohmann::ordered_json, std::string>> model_fields(
    const ModelConfig& c) {
  const double params_m = double(c.total_params()) / 1e6;
  const double fp32_gib = double(c.weight_bytes(DType::kFp32)) / (1 << 30);
  const double bf16_gib = double(c.weight_bytes(DType::kBf16)) / (1 << 30);
  // Blocks and scales: 34 / 32 (int8) and 18 / 32 (int4) bytes per matrix weight.
  const double int8_gib = double(c.weight_bytes(DType::kInt8)) / (1 << 30);
  const double int4_gib = double(c.weight_bytes(DType::kInt4)) / (1 << 30);
  return {{"model", c.name, c.name},
          {"params_m", params_m, fmt::format("{:.1f}", params_m)},
          {"dim", c.dim, std::to_string(c.dim)},
          {"layers", c.n_layers, std::to_string(c.n_layers)},
          {"heads", c.n_heads, std::to_string(c.n_heads)},
          {"kv_heads", c.n_kv_heads, std::to_string(c.n_kv_heads)},
          {"ffn", c.ffn_dim, std::to_string(c.ffn_dim)},
          {"vocab", c.vocab_size, std::to_string(c.vocab_size)},
          {"context", c.max_seq_len, std::to_string(c.max_seq_len)},
          {"rope_theta", c.rope_theta, fmt::format("{:g}", c.rope_theta)},
          {"tied", c.tied_embeddings, c.tied_embeddings ? "yes" : "no"},
          {"fp32_gib", fp32_gib, fmt::format("{:.3f}", fp32_gib)},
          {"bf16_gib", bf16_gib, fmt::format("{:.3f}", bf16_gib)},
          {"int8_gib", int8_gib, fmt::format("{:.3f}", int8_gib)},
          {"int4_gib", int4_gib, fmt::format("{:.3f}", int4_gib)}};
}

int list_models(const std::string& format) {
  if (format == "json") {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& c : model_presets()) {
      nlohmann::ordered_json j;
      for (const auto& [name, value, text] : model_fields(c)) j[name] = value;
      out.push_back(j);
    }
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  Row header;
  std::vector<Row> rows;
  for (const auto& c : model_presets()) {
    Row row;
    for (const auto& [name, value, text] : model_fields(c)) {
      if (rows.empty()) header.push_back(name);
      row.push_back(text);
    }
    rows.push_back(std::move(row));
  }
  print_rows(std::cout, format, header, rows);
  return 0;
}

}  // namespace

void add_models_command(CLI::App& root, CommandContext& ctx) {
  auto format = std::make_shared<std::string>("table");
  CLI::App* cmd = root.add_subcommand("models", "List model presets with parameters and bytes");
  cmd->footer("Examples:\n  llmbench models\n  llmbench models --format json");
  cmd->add_option("--format", *format, "table|md|csv|json")
      ->type_name("WORD")
      ->check(CLI::IsMember({"table", "md", "csv", "json"}))
      ->capture_default_str();
  cmd->callback([format, &ctx] { ctx.exit_code = list_models(*format); });
}

}  // namespace llmbench
