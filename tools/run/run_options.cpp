// `llmbench run` flags and profile application (see run_options.h).
#include "tools/run/run_options.h"

#include <CLI/CLI.hpp>

#include "kernels/common/error.h"

namespace llmbench {

void add_run_flags(CLI::App* cmd, RunOptions& o) {
  // Types in --help: LIST is comma-separated values (the run covers their cartesian product),
  // INT and FLOAT single values; ranges are checked when the plan is made (make_plan) with an
  // error naming the flag, so profiles get the same checks as the command line.
  const std::string cases = "Cases (LIST flags: the run covers their cartesian product)";
  cmd->add_option("--model", o.model, "Model preset(s) or checkpoint dir(s)")
      ->type_name("LIST")->capture_default_str()->group(cases);
  cmd->add_option("--backend", o.backend, "auto|cpu|cuda")
      ->type_name("WORD")->capture_default_str()->group(cases);
  cmd->add_option("--dtype", o.dtype, "fp32|fp16|bf16|int8|int4")
      ->type_name("LIST")->capture_default_str()->group(cases);
  cmd->add_option("--batch", o.batch, "Sequences per case, each >= 1, e.g. 1,4,16")
      ->type_name("LIST")->capture_default_str()->group(cases);
  cmd->add_option("--prompt-len", o.prompt_len, "Prompt tokens, each >= 1 (and within the "
                  "model's context with the new tokens)")
      ->type_name("LIST")->capture_default_str()->group(cases);
  cmd->add_option("--max-new-tokens", o.max_new_tokens,
                  "Generated tokens per sequence, each >= 1; 1 = prefill only")
      ->type_name("LIST")->capture_default_str()->group(cases);
  cmd->add_option("--prompt-len-stddev", o.prompt_len_stddev,
                  "Ragged batch: each sequence's prompt length drawn from a normal distribution "
                  "around --prompt-len with this stddev (seeded, >= 0); runs through the "
                  "continuous-batching scheduler")
      ->type_name("FLOAT")->capture_default_str()->group(cases);
  cmd->add_option("--output-len-stddev", o.output_len_stddev,
                  "Ragged batch: each sequence's new tokens drawn around --max-new-tokens with "
                  "this stddev (seeded, >= 0)")
      ->type_name("FLOAT")->capture_default_str()->group(cases);
  cmd->add_option("--prompt-ids", o.prompt_ids,
                  "Explicit prompt token ids for every sequence: 1,2,3 or @FILE")
      ->type_name("IDS")->group(cases);
  cmd->add_flag("--distinct-prompts", o.distinct_prompts,
                "Give each sequence its own prompt (default: the same prompt for all)")
      ->group(cases);
  cmd->add_option("--seed", o.seed, "Seed of weights and synthetic prompts, in [0, 2^31)")
      ->type_name("INT")->capture_default_str()->group(cases);

  const std::string measure = "Measurement";
  cmd->add_option("--warmup", o.warmup, "Unmeasured repetitions per case, >= 0")
      ->type_name("INT")->capture_default_str()->group(measure);
  cmd->add_option("--repeat", o.repeat, "Measured repetitions per case, >= 1 (20+ for a p99)")
      ->type_name("INT")->capture_default_str()->group(measure);
  cmd->add_option("--threads", o.threads,
                  "CPU threads (OpenMP and OpenBLAS), in [1, 4096]; 0 or absent: all")
      ->type_name("INT")->group(measure);
  cmd->add_option("--trace", o.trace,
                  "off|steps|ops: trace one extra repetition per case into the database")
      ->type_name("WORD")->capture_default_str()->group(measure);
  cmd->add_option("--peak-bw-gbps", o.peak_bw_gbps,
                  "Override the MBU bandwidth peak (GB/s, finite, > 0)")
      ->type_name("FLOAT")->group(measure);
  cmd->add_option("--peak-tflops", o.peak_tflops,
                  "Override the MFU FLOP/s peak (TFLOP/s, finite, > 0)")
      ->type_name("FLOAT")->group(measure);

  const std::string output = "Output";
  cmd->add_option("--db", o.db, "SQLite database results are appended to")
      ->type_name("PATH")->capture_default_str()->group(output);
  cmd->add_option("--format", o.format,
                  "table|wide|md|csv|json|jsonl (table fits 120 columns; wide: every table "
                  "column; jsonl: one case per line, as each case ends)")
      ->type_name("WORD")->capture_default_str()->group(output);
  cmd->add_flag("--quiet", o.quiet, "No progress or notices on stderr")->group(output);

  const std::string variants = "Engine variants (LIST flags, docs/variants.md)";
  cmd->add_option("--variants", o.variant_sets,
                  "fast|naive: named sets of --qkv/--kv-cache/--logits; naive = permute, "
                  "concat, all (not combined with those flags)")
      ->type_name("LIST")->group(variants);
  cmd->add_option("--qkv", o.qkv, "fused|permute: permute copies q, k, v into head-major layout")
      ->type_name("LIST")->capture_default_str()->group(variants);
  cmd->add_option("--kv-cache", o.kv_cache,
                  "prealloc|concat|paged|paged-gather: how the KV cache is kept")
      ->type_name("LIST")->capture_default_str()->group(variants);
  cmd->add_option("--kv-cache-block", o.kv_cache_block,
                  "Tokens per block of the paged KV caches, in [1, 65536]")
      ->type_name("INT")->capture_default_str()->group(variants);
  cmd->add_option("--logits", o.logits,
                  "device|last|all: argmax on the device, or logits copied to the host")
      ->type_name("LIST")->capture_default_str()->group(variants);
  cmd->add_option("--fuse", o.fuse,
                  "none|small: small fuses residual add + RMSNorm, RoPE + KV write (prealloc "
                  "cache with --qkv fused; other caches keep the unfused ops) and SwiGLU into "
                  "down_proj (one kernel on CUDA at decode shapes); the same tokens")
      ->type_name("LIST")->capture_default_str()->group(variants);
  cmd->add_option("--timer", o.timer,
                  "device|cupti|events|host-nosync: how traced ops are timed (device: CUPTI's "
                  "kernel records on CUDA; events: CUDA event pairs); host-nosync is the naive "
                  "way, wrong on purpose (diagnostic)")
      ->type_name("LIST")->capture_default_str()->group(variants);
  cmd->add_option("--cuda-graphs", o.cuda_graphs,
                  "off|on: on captures each decode step shape once as a CUDA graph and "
                  "replays it (--backend cuda; traced repetitions run eagerly)")
      ->type_name("LIST")->capture_default_str()->group(variants);
  cmd->add_option("--decode-attention", o.decode_attention,
                  "tiled|streamed: the CUDA kernel of attention calls not run by cuBLAS "
                  "(decode, prefill under 32 tokens): tiled walks keys in shared-memory "
                  "tiles, streamed streams them per warp (--backend cuda); the same tokens")
      ->type_name("LIST")->capture_default_str()->group(variants);

  cmd->add_option("--kv-cache-dtype", o.kv_dtype,
                  "fp32|fp16: the KV cache's element type; fp16 rounds keys and values to "
                  "halves as they are written (half the bytes attention reads; --kv-cache "
                  "prealloc, --qkv fused)")
      ->type_name("LIST")->capture_default_str()->group(variants);

  const std::string cuda = "CUDA only";
  cmd->add_flag("--sync-check", o.sync_check,
                "Synchronise and check after every op (blames async faults on the op)")
      ->group(cuda);
  cmd->add_flag("--profile-range", o.profile_range,
                "Wrap measured repetitions in cudaProfilerStart/Stop (nsys --capture-range)")
      ->group(cuda);

  const std::string sweeps = "Sweeps";
  cmd->add_option("--config", o.config,
                  "Sweep profile (TOML; keys are these flags' long names): a file or a bundled "
                  "profile name; flags on the command line override it")
      ->type_name("PROFILE")->group(sweeps);
  cmd->add_flag("--resume", o.resume,
                "Continue the latest run of the same cases in --db, skipping stored cases")
      ->group(sweeps);
  cmd->add_option("--max-cases", o.max_cases,
                  "Refuse plans of more cases than this (default 100000; counted before any "
                  "case is built, per shard)")
      ->type_name("INT")->group(sweeps);
  cmd->add_option("--shard", o.shard,
                  "Run shard K of N (1 <= K <= N): every case i with i % N = K-1")
      ->type_name("K/N")->group(sweeps);
  cmd->add_option("--slo-ttft-p99-ms", o.slo_ttft_p99_ms,
                  "SLO: p99 TTFT limit (ms, > 0); reports the largest batch meeting the SLO")
      ->type_name("FLOAT")->group(sweeps);
  cmd->add_option("--slo-tpot-p99-ms", o.slo_tpot_p99_ms,
                  "SLO: p99 TPOT limit (ms, > 0); reports the largest batch meeting the SLO")
      ->type_name("FLOAT")->group(sweeps);
}

namespace {

// The long names a profile may use: every flag of the command but --help and --config.
std::string profile_keys(CLI::App* cmd) {
  std::string keys;
  for (const CLI::Option* opt : cmd->get_options())
    for (const std::string& n : opt->get_lnames())
      if (n != "help" && n != "config") keys += (keys.empty() ? "" : ", ") + n;
  return keys;
}

}  // namespace

AppliedProfile apply_profile(CLI::App* cmd, RunOptions& opts) {
  AppliedProfile ap;
  ap.profile = load_profile(opts.config, "--config");
  const Profile& p = ap.profile;
  for (const ProfileEntry& e : p.entries) {
    CLI::Option* opt = (e.key == "help" || e.key == "config" || e.key.starts_with("-"))
                           ? nullptr
                           : cmd->get_option_no_throw("--" + e.key);
    if (!opt)
      throw BadInput(p.where(e) + "unknown key (profile keys are the long flags of llmbench "
                     "run: " + profile_keys(cmd) + ")");
    const bool is_flag = opt->get_expected_max() == 0;  // add_flag sets expected(0)
    if (is_flag && !e.is_bool)
      throw BadInput(p.where(e) + "expected true or false, got '" + e.value + "'");
    if (!is_flag && e.is_bool)
      throw BadInput(p.where(e) + "expected a value, got a boolean (only on/off flags take "
                     "true or false)");
    if (opt->count() > 0) continue;  // the command line overrides the profile
    try {
      opt->add_result(e.value);
      opt->run_callback();
    } catch (const CLI::Error& err) {
      throw BadInput(p.where(e) + err.what());
    }
    ap.applied.insert(e.key);
  }
  return ap;
}

RunPlan make_plan_attributed(const RunOptions& opts, const AppliedProfile* profile) {
  try {
    return make_plan(opts);
  } catch (const BadInput& e) {
    if (!profile) throw;
    // make_plan's messages open with the flag(s) they are about: "--batch: ...",
    // "--dtype bf16: ...", "--prompt-len/--max-new-tokens: ...".
    const std::string msg = e.what();
    if (!msg.starts_with("--")) throw;
    const std::string head = msg.substr(0, msg.find_first_of(": "));
    std::size_t pos = 0;
    while (pos < head.size()) {
      const std::size_t next = std::min(head.find('/', pos), head.size());
      const std::string flag = head.substr(pos, next - pos);
      const std::string key = flag.starts_with("--") ? flag.substr(2) : flag;
      if (profile->applied.count(key)) {
        const ProfileEntry* entry = profile->profile.find(key);
        std::string rest = msg.substr(head.size());  // ": expected ..." or " bf16: ..."
        if (rest.starts_with(":")) rest.erase(0, 1);
        if (rest.starts_with(" ")) rest.erase(0, 1);
        throw BadInput(profile->profile.where(*entry) + rest);
      }
      pos = next + 1;
    }
    throw;
  }
}

}  // namespace llmbench
