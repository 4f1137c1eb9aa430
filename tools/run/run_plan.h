// `llmbench run` flags -> validated list of cases (the cartesian product of list flags).
// Every check on user input happens here, before anything runs or any row is written.
#pragma once
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/bench/bench_case.h"

namespace llmbench {

// Flag values as the user typed them (lists as text; parsed and checked by make_plan).
struct RunOptions {
  std::string model = "small";
  std::string backend = "auto";
  std::string dtype = "fp32";
  std::string batch = "1";
  std::string prompt_len = "128";
  std::string prompt_ids;  // "1,2,3" or "@FILE"; empty: synthetic prompts
  std::string max_new_tokens = "32";
  // Ragged batches (engine/bench/ragged_case.h): stddev of each sequence's prompt / output length
  // around --prompt-len / --max-new-tokens; "0" and "0" keep the static path.
  std::string prompt_len_stddev = "0";
  std::string output_len_stddev = "0";
  std::string warmup = "1";
  std::string repeat = "5";
  std::string threads;  // empty: all hardware threads
  std::string seed = "0";
  bool distinct_prompts = false;
  bool prompt_len_given = false;  // --prompt-len was on the command line
  // Long names of the flags set on the command line or by the profile ("qkv", ...): a value
  // equal to the default still counts as given (--variants refuses --qkv fused).
  std::set<std::string> given;
  std::string max_cases;  // "" : kDefaultMaxCases
  std::string db = "llmbench.db";
  std::string format = "table";
  std::string trace = "ops";  // off | steps | ops
  std::optional<double> peak_bw_gbps, peak_tflops;
  bool quiet = false;
  bool sync_check = false;     // CUDA: synchronise and check after every op
  bool profile_range = false;  // bracket measured repetitions with cudaProfilerStart/Stop
  // Sweeps (tools/run/run_driver.h): the profile applied, resuming, sharding, SLO limits.
  std::string config;          // --config / the sweep PROFILE ("" if none)
  bool resume = false;         // continue the latest run of the same plan in --db
  std::string shard;           // "K/N": run the cases whose plan index i has i % N == K - 1
  std::optional<double> slo_ttft_p99_ms, slo_tpot_p99_ms;
  // Engine variants (engine/model/variants.h); lists, each joining the cartesian product.
  std::string qkv = "fused";           // fused | permute
  std::string kv_cache = "prealloc";   // prealloc | concat | paged | paged-gather
  std::string kv_cache_block = "16";   // tokens per paged block (one value)
  std::string logits = "device";       // device | last | all
  std::string fuse = "none";           // none | small (fused small ops)
  std::string timer = "device";        // device | cupti | events | host-nosync
  std::string cuda_graphs = "off";     // off | on (CUDA decode steps as graphs)
  std::string decode_attention = "tiled";  // tiled | streamed (CUDA attention kernel)
  std::string kv_dtype = "fp32";          // fp32 | fp16 (KV cache element type)
  // Named bundles instead of the three lists: fast (the defaults) and/or naive (permute,
  // concat, all). "" when not used.
  std::string variant_sets;
};

struct RunPlan {
  // In run order: model, dtype, variants (qkv, kv_cache, logits, timer), batch, prompt_len,
  // new tokens.
  std::vector<CaseSpec> cases;
  std::vector<int> case_index;  // each case's place in the unsharded plan
  std::string shard;            // "K/N" as given, "" when not sharded
  std::string sweep_key;        // plan key of the unsharded plan (equal across its shards)
  std::string backend;          // resolved: "cpu" or "cuda"
  std::string backend_notice;   // why auto chose what it chose, when worth saying
  int threads = 0;              // resolved
};

// The most cases one invocation runs unless --max-cases raises it (docs/sweeps.md). The count
// is taken from the list lengths before any case is built, so a typo such as a 10-million-case
// product is refused at once instead of allocating for a minute first.
inline constexpr std::int64_t kDefaultMaxCases = 100000;

// Throws BadInput naming the flag when a value is wrong: a value out of range, a value listed
// twice in one list flag, flags that cannot be combined, a plan over the case limit.
RunPlan make_plan(const RunOptions& o);

// The model config a case names: a preset, or a Hugging Face checkpoint directory (its
// config.json). Throws BadInput naming --model for anything else.
ModelConfig resolve_model(const std::string& name);

}  // namespace llmbench
