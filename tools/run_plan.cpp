// Flag validation and case expansion (see run_plan.h).
#include "tools/run_plan.h"

#include <omp.h>

#include <climits>
#include <filesystem>

#include "engine/error.h"
#include "tools/cli_values.h"
#include "tools/printers.h"

namespace llmbench {

namespace fs = std::filesystem;

ModelConfig resolve_model(const std::string& name) {
  if (const ModelConfig* p = find_preset(name)) return *p;
  std::string presets;
  for (const auto& p : model_presets()) presets += (presets.empty() ? "" : ", ") + p.name;
  std::error_code ec;
  if (fs::is_directory(name, ec))
    throw BadInput("--model: '" + name + "' is a directory; loading Hugging Face checkpoint "
                   "directories is not supported by this version (presets: " + presets + ")");
  if (name.find('/') != std::string::npos || fs::exists(name, ec))
    throw BadInput("--model: '" + name + "' is not a preset and not an existing directory "
                   "(presets: " + presets + ")");
  throw BadInput("--model: no preset named '" + name + "' (presets: " + presets + ")");
}

namespace {

void check_db_path(const std::string& db) {
  if (db.empty()) throw BadInput("--db: expected a file path, got ''");
  const fs::path p(db);
  std::error_code ec;
  if (fs::is_directory(p, ec)) throw BadInput("--db: '" + db + "' is a directory, expected a file");
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec))
    throw BadInput("--db: directory '" + dir.string() + "' does not exist");
}

}  // namespace

RunPlan make_plan(const RunOptions& o) {
  RunPlan plan;
  // ---- scalar flags ----
  if (o.backend == "auto" || o.backend == "cpu")
    plan.backend = "cpu";  // the CUDA backend is not built into this version
  else if (o.backend == "cuda")
    throw BadInput("--backend cuda: this llmbench was built without the CUDA backend");
  else
    throw BadInput("--backend: expected auto, cpu or cuda, got '" + o.backend + "'");
  const auto dtypes = parse_word_list("--dtype", o.dtype);
  std::vector<DType> dts;
  for (const auto& d : dtypes) {
    auto t = parse_dtype(d);
    if (!t) throw BadInput("--dtype: expected fp32, fp16 or bf16, got '" + d + "'");
    if (plan.backend == "cpu" && *t != DType::kFp32)
      throw BadInput("--dtype " + d + ": the cpu backend runs fp32 only");
    dts.push_back(*t);
  }
  const int warmup = parse_int("--warmup", o.warmup, 0, 1000000);
  const int repeat = parse_int("--repeat", o.repeat, 1, 1000000);
  const int threads_flag = o.threads.empty() ? 0 : parse_int("--threads", o.threads, 1, 4096);
  plan.threads = threads_flag > 0 ? threads_flag : omp_get_max_threads();
  const auto seed = std::uint64_t(parse_int("--seed", o.seed, 0, INT_MAX));
  if (!is_output_format(o.format))
    throw BadInput("--format: expected table, md, csv or json, got '" + o.format + "'");
  if (o.peak_bw_gbps && !(*o.peak_bw_gbps > 0))
    throw BadInput("--peak-bw-gbps: expected a positive number");
  if (o.peak_tflops && !(*o.peak_tflops > 0))
    throw BadInput("--peak-tflops: expected a positive number");
  check_db_path(o.db);
  const auto trace = parse_trace_level(o.trace);
  if (!trace) throw BadInput("--trace: expected off, steps or ops, got '" + o.trace + "'");

  // ---- list flags ----
  const auto models = parse_word_list("--model", o.model);
  const auto batches = parse_int_list("--batch", o.batch, 1, 1 << 20);
  const auto prompts = parse_int_list("--prompt-len", o.prompt_len, 1, 1 << 24);
  const auto gens = parse_int_list("--max-new-tokens", o.max_new_tokens, 1, 1 << 24);

  for (const auto& name : models) {
    const ModelConfig c = resolve_model(name);
    for (int p : prompts)
      for (int g : gens)
        if (p + g > c.max_seq_len)
          throw BadInput("--prompt-len/--max-new-tokens: prompt " + std::to_string(p) + " + " +
                         std::to_string(g) + " new tokens exceeds the context length of '" +
                         name + "' (" + std::to_string(c.max_seq_len) + ")");
    for (DType dt : dts)
      for (int b : batches)
        for (int p : prompts)
          for (int g : gens) {
            CaseSpec s;
            s.model = name;
            s.backend = plan.backend;
            s.dtype = dt;
            s.batch = b;
            s.prompt_len = p;
            s.max_new_tokens = g;
            s.warmup = warmup;
            s.repeat = repeat;
            s.threads = plan.threads;
            s.seed = seed;
            s.distinct_prompts = o.distinct_prompts;
            s.trace = *trace;
            plan.cases.push_back(s);
          }
  }
  return plan;
}

}  // namespace llmbench
