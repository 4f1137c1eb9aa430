// `llmbench run`: expand the flags into cases, run each, store each (one transaction per case,
// so a failure later loses nothing done before), then print the results.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>

#include "engine/backend_factory.h"
#include "engine/error.h"
#include "engine/hf_checkpoint.h"
#include "tools/commands.h"
#include "tools/peaks_cache.h"
#include "tools/result_rows.h"
#include "tools/run_plan.h"
#include "tools/store.h"

namespace llmbench {

namespace {

// Builds the model's weights once for all cases that share (model, dtype).
std::unique_ptr<Model> build_model(const CaseSpec& spec, Backend& backend, bool quiet) {
  const ModelConfig c = resolve_model(spec.model);
  // The weights must fit; each case checks its own KV cache and activations (run_case), so
  // one case too large for memory fails alone.
  MemoryEstimate weights_only{};
  weights_only.weight_bytes = estimate_memory(c, spec.dtype, 1, 1, 1).weight_bytes;
  check_fits(weights_only, available_host_memory(), "host");
  const auto t0 = std::chrono::steady_clock::now();
  const bool preset = find_preset(spec.model) != nullptr;
  // A checkpoint is validated (every tensor present, with its shape) when it is opened, before
  // anything is allocated; its memory maps are released once the weights are loaded.
  Weights w = preset ? load_weights(c, RandomWeights(spec.seed), backend)
                     : load_weights(c, CheckpointWeights(spec.model, c), backend);
  if (!quiet) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (preset)
      fmt::print(stderr, "built random weights for {} ({:.1f} M params, seed {}) in {:.2f} s\n",
                 c.name, double(c.total_params()) / 1e6, spec.seed, s);
    else
      fmt::print(stderr, "loaded checkpoint {} ({:.1f} M params) in {:.2f} s\n", spec.model,
                 double(c.total_params()) / 1e6, s);
  }
  return std::make_unique<Model>(c, std::move(w), backend);
}

int run_benchmarks(const RunOptions& opts, const std::string& command_line) {
  const RunPlan plan = make_plan(opts);  // every input check happens here, before any row
  // A diagnostic mode's warning is not progress: printed even with --quiet.
  if (std::any_of(plan.cases.begin(), plan.cases.end(), [](const CaseSpec& s) {
        return s.variants.timer == TimerMode::kHostNoSync;
      }))
    fmt::print(stderr, "warning: {}\n", kHostNoSyncWarning);
  const auto origin = std::chrono::steady_clock::now();  // trace timestamps count from here
  if (!plan.backend_notice.empty() && !opts.quiet) fmt::print(stderr, "{}\n", plan.backend_notice);
  const std::unique_ptr<Backend> backend_ptr =
      make_backend(plan.backend, plan.threads, opts.sync_check);
  Backend& backend = *backend_ptr;
  const Peaks peaks = resolve_peaks(plan.backend, plan.threads, opts.peak_bw_gbps,
                                    opts.peak_tflops, opts.quiet);
  if (!opts.quiet)  // cuda: copy bandwidth and the cuBLAS GEMM peak of fp32, the only dtype yet
    fmt::print(stderr, "peaks: {:.1f} GB/s {}, {:.3f} TFLOP/s {} ({})\n", peaks.bandwidth_gbps,
               plan.backend == "cuda" ? "copy" : "read", peaks.tflops,
               plan.backend == "cuda" ? "cuBLAS GEMM" : "sgemm", peaks.source);

  ResultStore store(opts.db);
  RunInfo info = current_run_info();
  info.command_line = command_line;
  info.threads = plan.threads;
  if (backend.name() != "cpu") info.gpu = backend.device_description();
  info.peaks = peaks;
  const std::int64_t run_id = store.begin_run(info);

  std::vector<CaseResult> results;
  std::unique_ptr<Model> model;
  std::string model_key;
  int failed = 0;
  for (std::size_t i = 0; i < plan.cases.size(); ++i) {
    const CaseSpec& spec = plan.cases[i];
    CaseResult result;
    result.spec = spec;
    try {
      const std::string key = spec.model + "/" + std::string(dtype_name(spec.dtype));
      if (model_key != key) {
        model.reset();  // free the previous weights before building the next
        model_key.clear();
        model = build_model(spec, backend, opts.quiet);
        model_key = key;
      }
      result = run_case(*model, spec, peaks, origin);
    } catch (const std::exception& e) {  // a failed case is recorded, and the run goes on
      result.status = "error";
      result.error = e.what();
      ++failed;
    }
    store.add_case(run_id, result);
    if (!opts.quiet) {
      if (result.status == "ok")
        fmt::print(stderr, "[{}/{}] {}: TTFT {:.2f} ms, e2e {:.2f} ms\n", i + 1,
                   plan.cases.size(), spec.label(), result.metrics.ttft_ms_median,
                   result.metrics.e2e_ms_median);
      else
        fmt::print(stderr, "[{}/{}] {}: error: {}\n", i + 1, plan.cases.size(), spec.label(),
                   result.error);
    }
    results.push_back(std::move(result));
  }
  print_results(std::cout, opts.format, results, peaks);
  if (!opts.quiet)
    fmt::print(stderr, "stored run {} ({} cases) in {}\n", run_id, results.size(), opts.db);
  return failed ? 1 : 0;
}

}  // namespace

void add_run_command(CLI::App& root, CommandContext& ctx) {
  auto opts = std::make_shared<RunOptions>();
  CLI::App* cmd = root.add_subcommand("run", "Benchmark TTFT, TPOT, throughput, MBU and MFU");
  cmd->add_option("--model", opts->model, "Model preset(s), comma-separated")->capture_default_str();
  cmd->add_option("--backend", opts->backend, "auto|cpu|cuda")->capture_default_str();
  cmd->add_option("--dtype", opts->dtype, "fp32|fp16|bf16 (list)")->capture_default_str();
  cmd->add_option("--batch", opts->batch, "Batch size(s), e.g. 1,4,16")->capture_default_str();
  CLI::Option* prompt_len =
      cmd->add_option("--prompt-len", opts->prompt_len, "Prompt length(s) in tokens")
          ->capture_default_str();
  cmd->add_option("--prompt-ids", opts->prompt_ids,
                  "Explicit prompt token ids for every sequence: 1,2,3 or @FILE");
  cmd->add_option("--max-new-tokens", opts->max_new_tokens,
                  "Generated tokens per sequence (list); 1 = prefill only")->capture_default_str();
  cmd->add_option("--warmup", opts->warmup, "Unmeasured repetitions per case")->capture_default_str();
  cmd->add_option("--repeat", opts->repeat, "Measured repetitions per case")->capture_default_str();
  cmd->add_option("--threads", opts->threads, "CPU threads (OpenMP and OpenBLAS); default: all");
  cmd->add_option("--seed", opts->seed, "Seed of weights and synthetic prompts")->capture_default_str();
  cmd->add_flag("--distinct-prompts", opts->distinct_prompts,
                "Give each sequence its own prompt (default: the same prompt for all)");
  cmd->add_option("--db", opts->db, "SQLite database results are appended to")->capture_default_str();
  cmd->add_option("--format", opts->format, "table|md|csv|json")->capture_default_str();
  cmd->add_option("--peak-bw-gbps", opts->peak_bw_gbps, "Override the MBU bandwidth peak (GB/s)");
  cmd->add_option("--peak-tflops", opts->peak_tflops, "Override the MFU FLOP/s peak (TFLOP/s)");
  cmd->add_option("--trace", opts->trace,
                  "off|steps|ops: trace one extra repetition per case into the database")
      ->capture_default_str();
  cmd->add_flag("--quiet", opts->quiet, "No progress or notices on stderr");
  cmd->add_flag("--sync-check", opts->sync_check,
                "CUDA: synchronise and check after every op (blames async faults on the op)");
  cmd->add_flag("--profile-range", opts->profile_range,
                "Wrap measured repetitions in cudaProfilerStart/Stop (nsys --capture-range)");
  cmd->add_option("--qkv", opts->qkv,
                  "fused|permute (list): permute copies q, k, v into head-major layout")
      ->capture_default_str();
  cmd->add_option("--kv-cache", opts->kv_cache,
                  "prealloc|concat|paged|paged-gather (list): how the KV cache is kept")
      ->capture_default_str();
  cmd->add_option("--kv-cache-block", opts->kv_cache_block,
                  "Tokens per block of the paged KV caches")
      ->capture_default_str();
  cmd->add_option("--logits", opts->logits,
                  "device|last|all (list): argmax on the device, or logits copied to the host")
      ->capture_default_str();
  cmd->add_option("--timer", opts->timer,
                  "device|host-nosync (list): how traced ops are timed; host-nosync is the "
                  "naive way, wrong on purpose (diagnostic)")
      ->capture_default_str();
  cmd->callback([opts, prompt_len, &ctx] {
    opts->prompt_len_given = prompt_len->count() > 0;
    ctx.exit_code = run_benchmarks(*opts, ctx.command_line);
  });
}

}  // namespace llmbench
