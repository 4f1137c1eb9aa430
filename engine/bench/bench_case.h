// One benchmark case: a fixed (model, dtype, backend, batch, prompt length, new tokens), run
// with warm-up and measured repetitions. Lists of values are expanded into cases by the CLI
// (tools/run/run_plan.cpp); printing and storing results is the CLI's job too.
#pragma once
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/bench/energy.h"
#include "engine/bench/interrupt.h"
#include "engine/model/finite.h"
#include "engine/model/memory.h"
#include "engine/bench/metrics.h"
#include "engine/model/model.h"
#include "engine/bench/read_probe.h"
#include "engine/bench/compute_probe.h"
#include "engine/model/trace.h"
#include "engine/model/variants.h"
#include "kernels/common/error.h"

namespace llmbench {

struct CaseSpec {
  std::string model;         // preset name (or checkpoint directory)
  std::string backend = "cpu";
  DType dtype = DType::kFp32;
  int batch = 1;
  int prompt_len = 128;
  int max_new_tokens = 1;
  int warmup = 1;            // unmeasured repetitions before the measured ones
  int repeat = 5;            // measured repetitions
  int threads = 0;           // CPU threads (0: the runtime's default)
  std::uint64_t seed = 0;    // weights and synthetic prompts
  bool distinct_prompts = false;
  // Explicit prompt token ids (--prompt-ids), used for every sequence; empty: synthetic
  // prompts. When set, prompt_len equals its size.
  std::vector<std::int32_t> prompt;
  // After the measured repetitions, one more repetition is traced at this level (off: none).
  TraceLevel trace = TraceLevel::kOps;
  // Bracket the measured repetitions with Backend::profiler_start/stop (--profile-range).
  bool profile_range = false;
  // Engine variants (--qkv, --kv-cache, --kv-cache-block, --logits) and the op timer of the
  // traced repetition (--timer).
  Variants variants;

  // "small fp32 cpu b16 p128 n1", then the non-default variants ("... qkv=permute"): how
  // progress lines, errors and trace tracks name the case.
  std::string label() const;
};

// How a case's decode steps ran with --cuda-graphs on, over every repetition (warm-up and traced
// included).
struct CaseGraphs {
  bool requested = false;      // --cuda-graphs on; nothing below is meaningful otherwise
  int graph_steps = 0;         // launched as a graph: captured, or replayed
  int eager_steps = -1;        // run eagerly (warm-ups, fallbacks, traced steps the op timer
                               // cannot attribute inside a graph); -1: not counted (ragged)
  int traced_graph_steps = 0;  // of graph_steps, those of the traced repetition
  std::string note;            // why graphs were not, or not always, used; "" when they were
};

struct CaseResult {
  CaseSpec spec;
  std::string status = "ok";               // "ok" or "error"
  std::string error;                       // the message when status == "error"
  std::vector<RepSample> samples;          // measured repetitions only
  std::vector<std::int32_t> prompt_ids;    // [batch, prompt_len]; ragged: prompts back to back
  std::vector<int> prompt_lens;            // ragged cases only: each sequence's prompt length
  std::vector<std::vector<std::int32_t>> generated;  // per sequence, max_new_tokens ids
  CaseCost cost;
  CaseMetrics metrics;
  CaseRoof roof;  // the read roof probed beside the case, and MBU's and MFU's denominators
  MemoryEstimate memory;

  // The traced repetition (when spec.trace != off): its records, its own timings, and how
  // much slower tracing made it than the untraced repetitions the headline metrics use.
  std::vector<OpRecord> trace;
  DeviceTrace trace_device;  // the kernels of `trace`'s ops (the CUPTI timer), else empty
  std::optional<RepSample> traced_sample;
  std::optional<double> trace_overhead_ttft;  // traced TTFT / median untraced TTFT
  std::optional<double> trace_overhead_tpot;  // traced mean TPOT / untraced mean TPOT

  // Energy per phase over the measured repetitions (energy.h; a CUDA case with NVML), or the
  // note saying why there is none.
  CaseEnergy energy;
  // One line each about how the case ran that its variants do not say: --cuda-graphs on with
  // the steps run eagerly (why), or the traced repetition's decode steps run eagerly.
  std::vector<std::string> notes;
  // --cuda-graphs on: how the decode steps ran (stored per case: docs/schema.md, version 18).
  CaseGraphs graphs;
};

// Runs the case on `model` (which must have been built for spec.model / dtype / backend).
// Every repetition must generate the same tokens; a difference throws llmbench::Error.
// A ragged case (spec.variants.ragged()) runs through the scheduler (engine/bench/ragged_case.h).
// Trace timestamps are ns since `origin` (the run's start). `peaks` are those of the case's
// dtype. With a `probe` and decode steps, the read roof is probed right before the case (before
// its warm-up) and right after it (after its traced repetition), and MBU divides by the larger
// of the two (apply_case_roof, engine/bench/metrics.h); r.roof records both. With a `compute`
// probe (and no --peak-tflops) the case dtype's GEMM is probed before and after the case too,
// and MFU divides by the larger of the probes and the cached peak. With an `energy` meter (a
// static case), the counter's update and the idle power are measured right before the case
// (after the read probe) and the counter is read around the prefill and around the decode steps
// of every repetition (r.energy; docs/metrics.md, "Energy per phase").
CaseResult run_case(const Model& model, const CaseSpec& spec, const Peaks& peaks,
                    std::chrono::steady_clock::time_point origin, ReadProbe* probe = nullptr,
                    ComputeProbe* compute = nullptr, const EnergyMeter* energy = nullptr);

// Sets r.trace_overhead_ttft and _tpot from r.traced_sample against the untraced metrics.
void set_trace_overheads(CaseResult& r);

// What both case runners (the static one here, run_ragged_case in ragged_case.h) do around
// their own repetition, `run_once(generated)`, which runs one repetition, writes each
// sequence's generated ids to `generated` and returns its timings:

// spec.warmup unmeasured repetitions, then spec.repeat measured ones (inside
// Backend::profiler_start/stop with spec.profile_range) into r.samples; every one must
// generate repetition 0's tokens (r.generated), else llmbench::Error. Ctrl-C (interrupt.h)
// abandons the case between repetitions.
template <class RunOnce>
void run_repetitions(CaseResult& r, const CaseSpec& spec, const Model& model, RunOnce run_once) {
  std::vector<std::vector<std::int32_t>> generated;
  for (int i = 0; i < spec.warmup; ++i) {
    throw_if_interrupted();
    run_once(generated);
  }
  if (spec.profile_range) model.backend().profiler_start();
  for (int i = 0; i < spec.repeat; ++i) {
    throw_if_interrupted();
    r.samples.push_back(run_once(generated));
    if (i == 0) {
      r.generated = generated;
    } else if (generated != r.generated) {
      throw Error("repetition " + std::to_string(i) + " generated other tokens than repetition 0"
                  " (the engine is not deterministic)");
    }
  }
  if (spec.profile_range) model.backend().profiler_stop();
}

// Non-finite logits make every greedy token 0 and the case look fine. `logits` (the last
// pass's, [rows, vocab], copied once per case outside every timed region) are checked; only
// when one is not finite does one more repetition with every op's output checked
// (runner.set_check_ops: a Session or a Scheduler) name the first layer and op at fault. The
// case then fails with llmbench::Error saying where the value is ("<row_name> <row>").
template <class Runner, class RunOnce>
void check_logits_finite(const std::vector<float>& logits, int rows, const char* row_name,
                         Runner& runner, RunOnce run_once) {
  const std::int64_t at = first_non_finite(logits.data(), std::int64_t(logits.size()));
  if (at < 0) return;
  const std::int64_t row = at / (std::int64_t(logits.size()) / rows);
  const std::string found = "non-finite logits (" + float_text(logits[std::size_t(at)]) +
                            " in " + row_name + " " + std::to_string(row) + ")";
  std::vector<std::vector<std::int32_t>> generated;
  runner.set_check_ops(true);
  try {
    run_once(generated);
  } catch (const NonFiniteOutput& e) {
    runner.set_check_ops(false);
    throw Error(found + ": " + e.what());
  }
  runner.set_check_ops(false);
  throw Error(found + "; a rerun checking every op's output found none (not reproducible)");
}

// The traced repetition both case runners end with (nothing when spec.trace is off): a Tracer
// on `runner` (a Session or a Scheduler) for one more run, `run_once(generated)`, which must
// generate the untraced repetitions' tokens (else llmbench::Error); then the records and the
// tracing overheads go into r.
template <class Runner, class RunOnce>
void add_traced_repetition(CaseResult& r, const CaseSpec& spec, const Model& model,
                           std::chrono::steady_clock::time_point origin, Runner& runner,
                           RunOnce run_once) {
  if (spec.trace == TraceLevel::kOff) return;
  Tracer tracer(spec.trace, model.backend().make_op_timer(spec.variants.timer), origin);
  std::vector<std::vector<std::int32_t>> generated;
  runner.set_tracer(&tracer);
  r.traced_sample = run_once(generated);
  runner.set_tracer(nullptr);
  tracer.finish();
  if (generated != r.generated)
    throw Error("the traced repetition generated other tokens than the untraced ones");
  r.trace = tracer.records();
  r.trace_device = tracer.device_trace();
  if (!r.trace_device.nvtx_check.empty()) r.notes.push_back(r.trace_device.nvtx_check);
  set_trace_overheads(r);
}

}  // namespace llmbench
