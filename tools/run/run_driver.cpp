// The sweep loop (see run_driver.h).
#include "tools/run/run_driver.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>

#include "engine/model/backend_factory.h"
#include "kernels/common/error.h"
#include "engine/checkpoint/hf_checkpoint.h"
#include "engine/bench/interrupt.h"
#include "engine/bench/read_probe.h"
#include "tools/store/case_key.h"
#include "tools/run/peaks_cache.h"
#include "tools/run/progress.h"
#include "tools/console/build_warning.h"
#include "tools/console/result_rows.h"
#include "tools/console/signals.h"
#include "tools/console/slo_report.h"
#include "tools/store/store.h"

namespace llmbench {

namespace {

// Builds the model's weights once for all cases that share (model, dtype).
std::unique_ptr<Model> build_model(const CaseSpec& spec, Backend& backend, Progress& progress) {
  const ModelConfig c = resolve_model(spec.model);
  // The weights must fit; each case checks its own KV cache and activations (run_case), so
  // one case too large for memory fails alone. When even the weights do not fit, the message
  // gives this case's whole need (weights, KV cache, activations), not the weights alone with
  // the rest shown as zero.
  const MemoryEstimate need =
      estimate_memory(c, spec.dtype, spec.batch, spec.prompt_len,
                      spec.prompt_len + spec.max_new_tokens, spec.variants);
  const std::int64_t available = available_host_memory();
  if (available >= 0 && need.weight_bytes > available) check_fits(need, available, "host");
  const auto t0 = std::chrono::steady_clock::now();
  const bool preset = find_preset(spec.model) != nullptr;
  // A checkpoint is validated (every tensor present, with its shape) when it is opened, before
  // anything is allocated; its memory maps are released once the weights are loaded.
  Weights w = preset ? load_weights(c, RandomWeights(spec.seed), backend, spec.dtype)
                     : load_weights(c, CheckpointWeights(spec.model, c), backend, spec.dtype);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (preset)
    progress.note(fmt::format("built random {} weights for {} ({:.1f} M params, seed {}) in "
                              "{:.2f} s", dtype_name(spec.dtype), c.name,
                              double(c.total_params()) / 1e6, spec.seed, s));
  else
    progress.note(fmt::format("loaded checkpoint {} as {} ({:.1f} M params) in {:.2f} s",
                              spec.model, dtype_name(spec.dtype),
                              double(c.total_params()) / 1e6, s));
  return std::make_unique<Model>(c, std::move(w), backend);
}

std::string outcome_text(const CaseResult& r) {
  if (r.status != "ok") return "error: " + r.error;
  return fmt::format("TTFT {:.2f} ms, e2e {:.2f} ms", r.metrics.ttft_ms.percentile(50),
                     r.metrics.e2e_ms.percentile(50));
}

// Creates `path` as an empty file when nothing is there (O_EXCL: true only for the process
// that created it). Throws BadInput naming --db when it cannot (a read-only directory, a full
// disk), before anything else is written.
bool create_if_missing(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (errno == EEXIST) return false;
    throw BadInput("--db '" + path + "': cannot create the database (" + std::strerror(errno) +
                   ")");
  }
  ::close(fd);
  return true;
}

// The database and the side files SQLite may have made next to it.
void remove_database_files(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"})
    ::unlink((path + suffix).c_str());
}

// Rethrows `e`, turning a write failure of the store (a full disk, a file size limit: SQLite
// says "database or disk is full" or "disk I/O error") into one BadInput line that says what
// happened and that nothing was left, instead of a multi-line SQL dump with exit 1.
[[noreturn]] void rethrow_as_storage_error(const std::string& path, const std::exception& e,
                                           bool removed, const std::string& kept = "") {
  const std::optional<std::string> reason = write_failure_reason(e);
  if (!reason) throw;
  throw BadInput("--db '" + path + "': cannot write the database (" + *reason + "); " + (removed         ? "the new database was removed, nothing was written"
                          : !kept.empty() ? kept
                                          : "nothing of this run was stored"));
}

void notice(const RunOptions& opts, const std::string& line) {
  if (!opts.quiet) fmt::print(stderr, "{}\n", line);
}

}  // namespace

int run_benchmarks(const RunOptions& opts, const AppliedProfile* profile,
                   const std::string& command_line) {
  const RunPlan plan = make_plan_attributed(opts, profile);  // every input check happens here
  warn_if_debug_build();  // like the warning below, printed even with --quiet
  // A diagnostic mode's warning is not progress: printed even with --quiet.
  if (std::any_of(plan.cases.begin(), plan.cases.end(),
                  [](const CaseSpec& s) { return s.variants.timer == TimerMode::kHostNoSync; }))
    fmt::print(stderr, "warning: {}\n", kHostNoSyncWarning);
  const auto origin = std::chrono::steady_clock::now();  // trace timestamps count from here
  if (!plan.backend_notice.empty()) notice(opts, plan.backend_notice);
  if (plan.cases.empty()) {  // a shard of a plan smaller than the shard count
    notice(opts, "shard " + plan.shard + " has no cases (the plan has fewer cases than shards)");
    return 0;
  }
  std::vector<std::string> keys;
  for (const CaseSpec& s : plan.cases) keys.push_back(case_key(s));
  const std::string pkey = plan_key(keys, plan.shard);

  // A new --db is created here, empty (an empty file is an empty SQLite database), so that a
  // failure before the run row is committed (a full disk, a file size limit, no backend)
  // removes exactly what this process created: nothing is left behind, and a database another
  // process created meanwhile is never touched.
  const bool created_db = create_if_missing(opts.db);
  std::int64_t run_id = 0;
  std::set<std::string> stored;
  // The run's peaks (stored with the run: every dtype's GEMM peak, the bandwidth, and as
  // peak_tflops the first case's dtype's) come from one roofline; a case divides by the GEMM
  // peak of its own dtype (Peaks::for_dtype): on CUDA the cuBLAS GEMM of the dtype; on the CPU
  // the engine's GEMM for the dtype (docs/metrics.md, Peaks). A dtype the run's peaks lack (a
  // resumed run stored before every dtype's peak was) is resolved on its own.
  Peaks peaks;
  const DType run_dtype = plan.cases.front().dtype;
  std::map<DType, Peaks> other_peaks;
  auto peaks_for = [&](DType dt) -> const Peaks& {
    auto it = other_peaks.find(dt);
    if (it != other_peaks.end()) return it->second;
    Peaks p = peaks.gemm_tflops.count(dt) || dt == run_dtype
                  ? peaks.for_dtype(dt)
                  : resolve_peaks(plan.backend, plan.threads, opts.peak_bw_gbps, opts.peak_tflops,
                                  opts.quiet, dt);
    return other_peaks.emplace(dt, std::move(p)).first->second;
  };
  // The read roof probed beside each case with decode steps (engine/bench/read_probe.h).
  std::unique_ptr<ReadProbe> probe;
  std::optional<ResultStore> holder;
  std::unique_ptr<Backend> backend_ptr;
  try {
    holder.emplace(opts.db);
    std::optional<std::int64_t> previous = opts.resume ? holder->find_run(pkey) : std::nullopt;
    backend_ptr = make_backend(plan.backend, plan.threads, opts.sync_check);
    probe = make_read_probe(plan.backend);
    if (previous) {
      run_id = *previous;
      stored = holder->stored_case_keys(run_id);
      peaks = holder->run_peaks(run_id);  // the resumed cases divide by the run's own peaks
      peaks.bandwidth_given = peaks.source.find("--peak-bw-gbps") != std::string::npos;
      if (stored.size() >= keys.size()) {
        holder->finish_run(run_id, "complete");
        notice(opts, fmt::format("run {} in {} already has all {} cases: nothing to resume", run_id,
                                 opts.db, keys.size()));
        return 0;
      }
      holder->set_run_status(run_id, "running");
      notice(opts, fmt::format("resuming run {} in {}: {} of {} cases stored, {} to run", run_id,
                               opts.db, stored.size(), keys.size(), keys.size() - stored.size()));
    } else {
      if (opts.resume)
        notice(opts, "--resume: no run of these cases in " + opts.db + "; starting a new run");
      peaks = resolve_peaks(plan.backend, plan.threads, opts.peak_bw_gbps, opts.peak_tflops,
                            opts.quiet, run_dtype);
      RunInfo info = current_run_info();
      info.command_line = command_line;
      info.threads = plan.threads;
      if (backend_ptr->name() != "cpu") info.gpu = backend_ptr->device_description();
      info.peaks = peaks;
      info.plan_key = pkey;
      info.n_cases = int(keys.size());
      info.profile = profile ? profile->profile.source : "";
      info.shard = plan.shard;
      info.sweep_key = plan.sweep_key;
      run_id = holder->begin_run(info);
    }
  } catch (const std::exception& e) {
    holder.reset();
    if (created_db) remove_database_files(opts.db);
    rethrow_as_storage_error(opts.db, e, created_db);
  }
  ResultStore& store = *holder;
  Backend& backend = *backend_ptr;
  // cuda: the device read test and the cuBLAS GEMM peak of the first case's dtype
  notice(opts, fmt::format("peaks: {:.1f} GB/s {}, {:.3f} TFLOP/s {} {} ({}); each case with "
                           "decode steps probes its own read roof (MBU's denominator){}",
                           peaks.bandwidth_gbps, "read",
                           peaks.tflops,
                           plan.backend == "cuda"                                 ? "cuBLAS GEMM"
                           : run_dtype == DType::kFp32 || run_dtype == DType::kFp16 ? "sgemm"
                                                                                    : "GEMM",
                           dtype_name(run_dtype), peaks.source,
                           peaks.bandwidth_given ? ", but --peak-bw-gbps is MBU's denominator" : ""));

  const ScopedInterruptHandler interrupts;
  const int to_run = int(keys.size() - stored.size());
  Progress progress(to_run, opts.quiet, isatty(STDERR_FILENO) == 1);
  std::vector<CaseResult> results;
  std::unique_ptr<Model> model;
  std::string model_key;
  int failed = 0, position = 0;
  bool interrupted = false;
  for (std::size_t i = 0; i < plan.cases.size() && !interrupted; ++i) {
    if (stored.count(keys[i])) continue;
    const CaseSpec& spec = plan.cases[i];
    progress.start_case(position++, spec.label());
    CaseResult result;
    result.spec = spec;
    try {
      const std::string key = spec.model + "/" + std::string(dtype_name(spec.dtype));
      if (model_key != key) {
        model.reset();  // free the previous weights before building the next
        model_key.clear();
        model = build_model(spec, backend, progress);
        model_key = key;
      }
      result = run_case(*model, spec, peaks_for(spec.dtype), origin, probe.get());
    } catch (const Interrupted&) {  // abandoned: not stored; --resume runs it again
      interrupted = true;
      break;
    } catch (const std::exception& e) {  // a failed case is recorded, and the run goes on
      result.status = "error";
      result.error = e.what();
      ++failed;
    }
    try {
      store.add_case(run_id, result, plan.case_index[i]);  // committed before the next starts
    } catch (const std::exception& e) {
      // The disk filled (or a file size limit was reached) mid-sweep. A database this run
      // created that holds none of its cases yet is removed; otherwise the cases stored so far
      // stay, and --resume continues once there is room.
      const bool nothing_stored = results.empty() && stored.empty();
      if (created_db && nothing_stored) {
        holder.reset();
        remove_database_files(opts.db);
        rethrow_as_storage_error(opts.db, e, true);
      }
      rethrow_as_storage_error(opts.db, e, false,
                               fmt::format("{} of {} cases are stored; rerun with --resume once "
                                           "there is room", stored.size() + results.size(),
                                           keys.size()));
    }
    if (opts.format == "jsonl") {  // one line per case as it ends: a killed sweep leaves whole lines
      const OutputStamp stamp{"run_id", run_id, store.run_info(run_id).git_commit};
      std::cout << case_json(result, &stamp).dump() << std::endl;
    }
    progress.finish_case(outcome_text(result));
    results.push_back(std::move(result));
    interrupted = interrupt_requested();
  }
  store.finish_run(run_id, interrupted ? "interrupted" : "complete");

  const SloLimits limits{opts.slo_ttft_p99_ms, opts.slo_tpot_p99_ms};
  nlohmann::json extra = nullptr;
  std::vector<SloGroup> groups;
  if (limits.any()) {
    groups = slo_groups(results, limits);
    extra = {{"slo", slo_json(groups, limits)}};
  }
  print_results(std::cout, opts.format, results, peaks, run_json(run_id, store.run_info(run_id)),
                extra);
  if (limits.any() && opts.format != "json" && opts.format != "jsonl") {
    std::cout << (opts.format == "csv" ? "\n" : "\nSLO: largest batch meeting the limits\n");
    print_rows(std::cout, opts.format, slo_header(),
               slo_rows(groups, limits, opts.format == "csv" ? "" : "n/a"));
  }
  const int done = int(stored.size() + results.size());
  if (interrupted) {
    const int sig = ScopedInterruptHandler::signal_received();
    fmt::print(stderr, "interrupted: run {} in {} has {} of {} cases stored; rerun with --resume "
               "to continue\n", run_id, opts.db, done, keys.size());
    return 128 + (sig ? sig : SIGINT);
  }
  notice(opts, fmt::format("stored run {} ({} cases{}) in {}", run_id, results.size(),
                           stored.empty() ? "" : fmt::format(", {} earlier", stored.size()),
                           opts.db));
  if (failed) fmt::print(stderr, "{} of {} cases failed (status 'error' in the database)\n",
                         failed, results.size());
  return failed ? 1 : 0;
}

}  // namespace llmbench
