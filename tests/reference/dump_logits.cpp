// dump_logits: runs the CPU engine on a preset with seeded random weights and writes what
// tests/reference/llama_ref.py checks: two distinct prompts, the logits after prefill and after
// each of 5 greedy decode steps ([batch, vocab] per stage), and the greedy tokens, as JSON.
// Deliberately not: a benchmark or a general CLI (three flags, parsed by hand).
//   dump_logits --model tiny --seed S --out FILE
#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/model/config.h"
#include "engine/model/cpu_backend.h"
#include "engine/model/model.h"
#include "engine/bench/prompts.h"
#include "engine/model/weights.h"

namespace {

constexpr int kBatch = 2;
constexpr int kPromptLen = 7;
constexpr int kDecodeSteps = 5;

}  // namespace

int main(int argc, char** argv) {
  using namespace llmbench;
  std::string model_name = "tiny", out_path, seed_text = "0";
  bool ok = argc % 2 == 1;  // flag/value pairs
  for (int i = 1; ok && i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--model") model_name = argv[i + 1];
    else if (flag == "--seed") seed_text = argv[i + 1];
    else if (flag == "--out") out_path = argv[i + 1];
    else ok = false;
  }
  const ModelConfig* config = find_preset(model_name);
  const bool seed_ok =
      !seed_text.empty() && seed_text.find_first_not_of("0123456789") == std::string::npos;
  if (!ok || out_path.empty() || !config || !seed_ok) {
    std::fprintf(stderr, "usage: dump_logits --model PRESET --seed S --out FILE\n");
    return 2;
  }
  try {
    const std::uint64_t seed = std::stoull(seed_text);
    CpuBackend backend;
    const Model model(*config, load_weights(*config, RandomWeights(seed), backend), backend);
    Session session(model, kBatch, kPromptLen, kPromptLen + kDecodeSteps);
    // Distinct prompts, so a mix-up between the sequences of a batch shows.
    const auto prompts = synthetic_prompts(seed, kBatch, kPromptLen, config->vocab_size, true);

    nlohmann::json stages = nlohmann::json::array();
    auto record = [&](const char* name, const std::vector<std::int32_t>& tokens) {
      const std::vector<float> logits = session.last_logits();  // [batch, vocab]
      const std::ptrdiff_t vocab = config->vocab_size;
      const auto row = [&](int b) { return logits.begin() + b * vocab; };
      nlohmann::json rows = nlohmann::json::array();
      for (int b = 0; b < kBatch; ++b) rows.push_back(std::vector<float>(row(b), row(b + 1)));
      stages.push_back({{"stage", name}, {"logits", rows}, {"tokens", tokens}});
    };
    std::vector<std::int32_t> next = session.prefill(prompts, kPromptLen);
    record("prefill", next);
    for (int s = 0; s < kDecodeSteps; ++s) {
      next = session.decode_step(next);
      record(("decode " + std::to_string(s + 1)).c_str(), next);
    }

    nlohmann::json prompt_rows = nlohmann::json::array();
    for (int b = 0; b < kBatch; ++b)
      prompt_rows.push_back(std::vector<std::int32_t>(prompts.begin() + b * kPromptLen,
                                                      prompts.begin() + (b + 1) * kPromptLen));
    const nlohmann::json doc = {{"model", model_name}, {"seed", seed},
                                {"prompts", prompt_rows}, {"stages", stages}};
    // Floats go through double, exactly; nlohmann prints doubles with round-trip precision.
    std::ofstream out(out_path);
    out << doc.dump() << '\n';
    out.close();
    if (!out) {
      std::fprintf(stderr, "error: cannot write '%s'\n", out_path.c_str());
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
