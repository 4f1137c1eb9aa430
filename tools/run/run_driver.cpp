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
#include <optional>
#include <set>

#include "engine/model/backend_factory.h"
#include "kernels/common/error.h"
#include "engine/checkpoint/hf_checkpoint.h"
#include "engine/bench/interrupt.h"
#include "engine/bench/read_probe.h"
#include "engine/bench/compute_probe.h"
#include "engine/bench/nvml.h"
#include "tools/store/case_key.h"
#include "tools/run/dispatch_cache.h"
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

// The warnings every run prints before it opens anything.
void announce_plan(const RunOptions& opts, const RunPlan& plan) {
  warn_if_debug_build();  // like the warning below, printed even with --quiet
  // A diagnostic mode's warning is not progress: printed even with --quiet.
  if (std::any_of(plan.cases.begin(), plan.cases.end(),
                  [](const CaseSpec& s) { return s.variants.timer == TimerMode::kHostNoSync; }))
    fmt::print(stderr, "warning: {}\n", kHostNoSyncWarning);
  if (!plan.backend_notice.empty()) notice(opts, plan.backend_notice);
}

// What run_benchmarks opens before its first case: the store, the backend, the read probe
// beside each case with decode steps (engine/bench/read_probe.h), and the run's row.
struct OpenedRun {
  std::optional<ResultStore> store;
  std::unique_ptr<Backend> backend;
  std::unique_ptr<ReadProbe> probe;
  std::unique_ptr<ComputeProbe> compute;  // the case dtype's GEMM beside each case (MFU)
  // Energy per phase (engine/bench/energy.h): on CUDA, NVML for the device in use; the meter
  // when it is available, else each case carries nvml's note (printed once).
  std::unique_ptr<Nvml> nvml;
  std::optional<EnergyMeter> energy;
  std::int64_t run_id = 0;
  std::set<std::string> stored;  // keys of the cases an earlier process stored (--resume)
  // The run's peaks (stored with the run: every dtype's GEMM peak, the bandwidth, and as
  // peak_tflops the first case's dtype's) come from one roofline; a case divides by the GEMM
  // peak of its own dtype (Peaks::for_dtype): on CUDA the cuBLAS GEMM of the dtype; on the CPU
  // the engine's GEMM for the dtype (docs/metrics.md, Peaks).
  Peaks peaks;
  bool already_complete = false;  // a resumed run that has every case: nothing to run
};

// The run row of a new run.
RunInfo new_run_info(const RunPlan& plan, const Backend& backend, const Peaks& peaks,
                     const std::string& pkey, int n_cases, const AppliedProfile* profile,
                     const std::string& command_line) {
  RunInfo info = current_run_info();
  info.command_line = command_line;
  info.threads = plan.threads;
  if (backend.name() != "cpu") info.gpu = backend.device_description();
  info.peaks = peaks;
  info.plan_key = pkey;
  info.n_cases = n_cases;
  info.profile = profile ? profile->profile.source : "";
  info.shard = plan.shard;
  info.sweep_key = plan.sweep_key;
  return info;
}

// Opens the store and the backend, then resumes the run of these cases (--resume and one is
// there) or begins a new one. A storage failure removes a database this process created
// (`created_db`) and becomes one BadInput line.
void open_run(const RunOptions& opts, const RunPlan& plan, const std::vector<std::string>& keys,
              const std::string& pkey, const AppliedProfile* profile,
              const std::string& command_line, bool created_db, OpenedRun& run) {
  try {
    run.store.emplace(opts.db);
    std::optional<std::int64_t> previous = opts.resume ? run.store->find_run(pkey) : std::nullopt;
    run.backend = make_backend(plan.backend, plan.threads, opts.sync_check);
    if (plan.backend == "cpu") {
      // The decode op classes' CPU paths (dispatch_cache.h), before the run row names them:
      // measured on first use unless both peaks are given (then nothing is measured).
      const bool may_measure = !(opts.peak_bw_gbps && opts.peak_tflops);
      notice(opts, install_cpu_dispatch(resolve_model(plan.cases.front().model), plan.threads,
                                        may_measure));
    }
    run.probe = make_read_probe(plan.backend);
    run.compute = make_compute_probe(plan.backend);
    if (run.backend->name() == "cuda") {
      run.nvml = std::make_unique<Nvml>(current_cuda_pci_bus_id());
      if (run.nvml->available()) run.energy.emplace(run.nvml->meter());
    }
    if (previous) {
      run.run_id = *previous;
      run.stored = run.store->stored_case_keys(run.run_id);
      run.peaks = run.store->run_peaks(run.run_id);  // resumed cases divide by the run's peaks
      run.peaks.bandwidth_given = run.peaks.source.find("--peak-bw-gbps") != std::string::npos;
      run.peaks.tflops_given = run.peaks.source.find("--peak-tflops") != std::string::npos;
      if (run.stored.size() >= keys.size()) {
        run.store->finish_run(run.run_id, "complete");
        notice(opts, fmt::format("run {} in {} already has all {} cases: nothing to resume",
                                 run.run_id, opts.db, keys.size()));
        run.already_complete = true;
        return;
      }
      run.store->set_run_status(run.run_id, "running");
      notice(opts, fmt::format("resuming run {} in {}: {} of {} cases stored, {} to run",
                               run.run_id, opts.db, run.stored.size(), keys.size(),
                               keys.size() - run.stored.size()));
    } else {
      if (opts.resume)
        notice(opts, "--resume: no run of these cases in " + opts.db + "; starting a new run");
      run.peaks = resolve_peaks(plan.backend, plan.threads, opts.peak_bw_gbps, opts.peak_tflops,
                                opts.quiet, plan.cases.front().dtype);
      run.run_id = run.store->begin_run(new_run_info(plan, *run.backend, run.peaks, pkey,
                                                     int(keys.size()), profile, command_line));
    }
  } catch (const std::exception& e) {
    run.store.reset();
    if (created_db) remove_database_files(opts.db);
    rethrow_as_storage_error(opts.db, e, created_db);
  }
}

// cuda: the device read test and the cuBLAS GEMM peak of the first case's dtype
void print_peaks(const RunOptions& opts, const RunPlan& plan, const Peaks& peaks) {
  const DType run_dtype = plan.cases.front().dtype;
  notice(opts, fmt::format("peaks: {:.1f} GB/s read, {:.3f} TFLOP/s {} {} ({}); each case probes "
                           "its compute roof (MFU divides by the larger of probe and peak){}{}",
                           peaks.bandwidth_gbps, peaks.tflops, dtype_name(run_dtype),
                           plan.backend == "cuda" ? "cuBLAS GEMM" : "GEMM", peaks.source,
                           peaks.tflops_given ? ", but --peak-tflops is MFU's denominator" : "",
                           peaks.bandwidth_given
                               ? "; --peak-bw-gbps is MBU's denominator"
                               : " and, with decode steps, its read roof (MBU's denominator)"));
}

// The peaks a case of each dtype divides by: the run's own for a dtype they hold; a dtype the
// run's peaks lack (a resumed run stored before every dtype's peak was) is resolved on its own,
// once.
class PeaksByDtype {
 public:
  PeaksByDtype(const RunOptions& opts, const RunPlan& plan, const Peaks& run_peaks)
      : opts_(opts), plan_(plan), run_peaks_(run_peaks) {}
  const Peaks& operator()(DType dt) {
    auto it = by_dtype_.find(dt);
    if (it != by_dtype_.end()) return it->second;
    Peaks p = run_peaks_.gemm_tflops.count(dt) || dt == plan_.cases.front().dtype
                  ? run_peaks_.for_dtype(dt)
                  : resolve_peaks(plan_.backend, plan_.threads, opts_.peak_bw_gbps,
                                  opts_.peak_tflops, opts_.quiet, dt);
    return by_dtype_.emplace(dt, std::move(p)).first->second;
  }

 private:
  const RunOptions& opts_;
  const RunPlan& plan_;
  const Peaks& run_peaks_;
  std::map<DType, Peaks> by_dtype_;
};

// Commits one case before the next starts. The disk filled (or a file size limit was reached)
// mid-sweep: a database this run created that holds none of its cases yet is removed; otherwise
// the cases stored so far stay, and --resume continues once there is room.
void store_case(const RunOptions& opts, OpenedRun& run, const CaseResult& result, int case_index,
                bool created_db, std::size_t stored_this_run, std::size_t n_keys) {
  try {
    run.store->add_case(run.run_id, result, case_index);
  } catch (const std::exception& e) {
    const bool nothing_stored = stored_this_run == 0 && run.stored.empty();
    if (created_db && nothing_stored) {
      run.store.reset();
      remove_database_files(opts.db);
      rethrow_as_storage_error(opts.db, e, true);
    }
    rethrow_as_storage_error(opts.db, e, false,
                             fmt::format("{} of {} cases are stored; rerun with --resume once "
                                         "there is room", run.stored.size() + stored_this_run,
                                         n_keys));
  }
}

// A case whose compute probe beat the cached GEMM peak of its dtype (compute_peak_stale): the
// cache was measured low (on a busy machine), so every later run would divide by too little.
// Said once per dtype (printed even with --quiet: it changes what the numbers mean), and the
// cache entry raised to the probe's figure so the next run is right.
void refresh_stale_peak(const RunPlan& plan, const CaseResult& r,
                        std::set<DType>& raised) {
  if (!compute_peak_stale(r.roof) || raised.count(r.spec.dtype)) return;
  raised.insert(r.spec.dtype);
  const double probe =
      std::max(r.roof.gemm_tflops_before.value_or(0), r.roof.gemm_tflops_after.value_or(0));
  const std::string path = raise_cached_gemm_peak(plan.backend, plan.threads, r.spec.dtype, probe);
  fmt::print(stderr, "warning: the cached {} GEMM peak ({:.3f} TFLOP/s) is below what the "
             "compute probe beside this case reached ({:.3f}): the cache is stale (measured on a "
             "busy machine?); MFU divides by the probe; {}\n",
             dtype_name(r.spec.dtype), r.roof.reference_tflops, probe,
             path.empty() ? std::string("run `llmbench roofline` to re-measure")
                          : "raised the cached peak in " + path +
                                "; `llmbench roofline` re-measures every peak");
}

// What the sweep loop leaves: the cases this process ran (each stored), how many failed, and
// whether a signal stopped it.
struct SweepOutcome {
  std::vector<CaseResult> results;
  int failed = 0;
  bool interrupted = false;
};

// Runs and stores every case the run does not have yet, one at a time; a failed case is
// recorded and the sweep goes on; an interrupt abandons the case in progress (not stored;
// --resume runs it again).
SweepOutcome run_cases(const RunOptions& opts, const RunPlan& plan,
                       const std::vector<std::string>& keys, bool created_db,
                       std::chrono::steady_clock::time_point origin, OpenedRun& run) {
  PeaksByDtype peaks_for(opts, plan, run.peaks);
  std::set<DType> raised;  // dtypes whose cached GEMM peak this run raised (said once each)
  Progress progress(int(keys.size() - run.stored.size()), opts.quiet,
                    isatty(STDERR_FILENO) == 1);
  SweepOutcome out;
  std::unique_ptr<Model> model;
  std::string model_key;
  int position = 0;
  for (std::size_t i = 0; i < plan.cases.size() && !out.interrupted; ++i) {
    if (run.stored.count(keys[i])) continue;
    const CaseSpec& spec = plan.cases[i];
    progress.start_case(position++, spec.label());
    CaseResult result;
    result.spec = spec;
    try {
      const std::string key = spec.model + "/" + std::string(dtype_name(spec.dtype));
      if (model_key != key) {
        model.reset();  // free the previous weights before building the next
        model_key.clear();
        model = build_model(spec, *run.backend, progress);
        model_key = key;
      }
      result = run_case(*model, spec, peaks_for(spec.dtype), origin, run.probe.get(),
                        run.compute.get(), run.energy ? &*run.energy : nullptr);
      if (run.nvml && !run.energy) result.energy.note = run.nvml->note();
      refresh_stale_peak(plan, result, raised);
    } catch (const Interrupted&) {  // abandoned: not stored; --resume runs it again
      out.interrupted = true;
      break;
    } catch (const std::exception& e) {  // a failed case is recorded, and the run goes on
      result.status = "error";
      result.error = e.what();
      ++out.failed;
    }
    store_case(opts, run, result, plan.case_index[i], created_db, out.results.size(),
               keys.size());
    if (opts.format == "jsonl") {  // one line per case as it ends: a killed sweep leaves whole lines
      const OutputStamp stamp{"run_id", run.run_id, run.store->run_info(run.run_id).git_commit};
      std::cout << case_json(result, &stamp).dump() << std::endl;
    }
    progress.finish_case(outcome_text(result));
    for (const std::string& note : result.notes) notice(opts, "note: " + spec.label() + ": " + note);
    out.results.push_back(std::move(result));
    out.interrupted = interrupt_requested();
  }
  return out;
}

// Prints the results (and the SLO table when limits were given) and says what was stored;
// returns the process's exit code.
int report_sweep(const RunOptions& opts, OpenedRun& run, const SweepOutcome& sweep,
                 std::size_t n_keys) {
  ResultStore& store = *run.store;
  const SloLimits limits{opts.slo_ttft_p99_ms, opts.slo_tpot_p99_ms};
  nlohmann::json extra = nullptr;
  std::vector<SloGroup> groups;
  if (limits.any()) {
    groups = slo_groups(sweep.results, limits);
    extra = {{"slo", slo_json(groups, limits)}};
  }
  print_results(std::cout, opts.format, sweep.results, run.peaks,
                run_json(run.run_id, store.run_info(run.run_id)), extra);
  if (limits.any() && opts.format != "json" && opts.format != "jsonl") {
    std::cout << (opts.format == "csv" ? "\n" : "\nSLO: largest batch meeting the limits\n");
    print_rows(std::cout, opts.format, slo_header(),
               slo_rows(groups, limits, opts.format == "csv" ? "" : "n/a"));
  }
  const std::size_t done = run.stored.size() + sweep.results.size();
  if (sweep.interrupted) {
    const int sig = ScopedInterruptHandler::signal_received();
    fmt::print(stderr, "interrupted: run {} in {} has {} of {} cases stored; rerun with --resume "
               "to continue\n", run.run_id, opts.db, done, n_keys);
    return 128 + (sig ? sig : SIGINT);
  }
  notice(opts, fmt::format("stored run {} ({} case{}{}) in {}", run.run_id, sweep.results.size(),
                           sweep.results.size() == 1 ? "" : "s",
                           run.stored.empty() ? "" : fmt::format(", {} earlier", run.stored.size()),
                           opts.db));
  if (sweep.failed)
    fmt::print(stderr, "{} of {} case{} failed (status 'error' in the database)\n", sweep.failed,
               sweep.results.size(), sweep.results.size() == 1 ? "" : "s");
  return sweep.failed ? 1 : 0;
}

}  // namespace

int run_benchmarks(const RunOptions& opts, const AppliedProfile* profile,
                   const std::string& command_line) {
  const RunPlan plan = make_plan_attributed(opts, profile);  // every input check happens here
  announce_plan(opts, plan);
  const auto origin = std::chrono::steady_clock::now();  // trace timestamps count from here
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
  OpenedRun run;
  open_run(opts, plan, keys, pkey, profile, command_line, created_db, run);
  if (run.already_complete) return 0;
  print_peaks(opts, plan, run.peaks);
  const ScopedInterruptHandler interrupts;  // until the summary is printed
  const SweepOutcome sweep = run_cases(opts, plan, keys, created_db, origin, run);
  run.store->finish_run(run.run_id, sweep.interrupted ? "interrupted" : "complete");
  return report_sweep(opts, run, sweep, keys.size());
}

}  // namespace llmbench
