// `llmbench run` flags and profile application (see run_options.h).
#include "tools/run/run_options.h"

#include <CLI/CLI.hpp>

#include "kernels/common/error.h"

namespace llmbench {

void add_run_flags(CLI::App* cmd, RunOptions& o) {
  cmd->add_option("--config", o.config,
                  "Sweep profile (TOML; keys are these flags' long names): a file or a bundled "
                  "profile name; flags on the command line override it");
  cmd->add_option("--model", o.model, "Model preset(s) or checkpoint dir(s), comma-separated")
      ->capture_default_str();
  cmd->add_option("--backend", o.backend, "auto|cpu|cuda")->capture_default_str();
  cmd->add_option("--dtype", o.dtype, "fp32|fp16|bf16 (list)")->capture_default_str();
  cmd->add_option("--batch", o.batch, "Batch size(s), e.g. 1,4,16")->capture_default_str();
  cmd->add_option("--prompt-len", o.prompt_len, "Prompt length(s) in tokens")->capture_default_str();
  cmd->add_option("--prompt-ids", o.prompt_ids,
                  "Explicit prompt token ids for every sequence: 1,2,3 or @FILE");
  cmd->add_option("--max-new-tokens", o.max_new_tokens,
                  "Generated tokens per sequence (list); 1 = prefill only")->capture_default_str();
  cmd->add_option("--warmup", o.warmup, "Unmeasured repetitions per case")->capture_default_str();
  cmd->add_option("--repeat", o.repeat, "Measured repetitions per case")->capture_default_str();
  cmd->add_option("--threads", o.threads, "CPU threads (OpenMP and OpenBLAS); default: all");
  cmd->add_option("--seed", o.seed, "Seed of weights and synthetic prompts")->capture_default_str();
  cmd->add_flag("--distinct-prompts", o.distinct_prompts,
                "Give each sequence its own prompt (default: the same prompt for all)");
  cmd->add_option("--db", o.db, "SQLite database results are appended to")->capture_default_str();
  cmd->add_option("--format", o.format, "table|md|csv|json")->capture_default_str();
  cmd->add_option("--peak-bw-gbps", o.peak_bw_gbps, "Override the MBU bandwidth peak (GB/s)");
  cmd->add_option("--peak-tflops", o.peak_tflops, "Override the MFU FLOP/s peak (TFLOP/s)");
  cmd->add_option("--trace", o.trace,
                  "off|steps|ops: trace one extra repetition per case into the database")
      ->capture_default_str();
  cmd->add_flag("--quiet", o.quiet, "No progress or notices on stderr");
  cmd->add_flag("--sync-check", o.sync_check,
                "CUDA: synchronise and check after every op (blames async faults on the op)");
  cmd->add_flag("--profile-range", o.profile_range,
                "Wrap measured repetitions in cudaProfilerStart/Stop (nsys --capture-range)");
  cmd->add_option("--qkv", o.qkv,
                  "fused|permute (list): permute copies q, k, v into head-major layout")
      ->capture_default_str();
  cmd->add_option("--kv-cache", o.kv_cache,
                  "prealloc|concat|paged|paged-gather (list): how the KV cache is kept")
      ->capture_default_str();
  cmd->add_option("--kv-cache-block", o.kv_cache_block, "Tokens per block of the paged KV caches")
      ->capture_default_str();
  cmd->add_option("--logits", o.logits,
                  "device|last|all (list): argmax on the device, or logits copied to the host")
      ->capture_default_str();
  cmd->add_option("--variants", o.variant_sets,
                  "fast|naive (list): named sets of --qkv/--kv-cache/--logits; naive = permute, "
                  "concat, all");
  cmd->add_option("--timer", o.timer,
                  "device|host-nosync (list): how traced ops are timed; host-nosync is the "
                  "naive way, wrong on purpose (diagnostic)")
      ->capture_default_str();
  cmd->add_flag("--resume", o.resume,
                "Continue the latest run of the same cases in --db, skipping stored cases");
  cmd->add_option("--shard", o.shard, "Run shard K of N (K/N, 1-based): every case i with i % N = K-1");
  cmd->add_option("--slo-ttft-p99-ms", o.slo_ttft_p99_ms,
                  "SLO: p99 TTFT limit (ms); reports the largest batch meeting the SLO");
  cmd->add_option("--slo-tpot-p99-ms", o.slo_tpot_p99_ms,
                  "SLO: p99 TPOT limit (ms); reports the largest batch meeting the SLO");
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
