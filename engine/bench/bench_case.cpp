// Warm-up, measured repetitions and their timing. On the CPU backend every op has finished
// when it returns, and prefill()/decode_step() return only once the sampled tokens are on the
// host, so steady_clock around them measures TTFT and TPOT exactly as docs/metrics.md defines.
#include "engine/bench/bench_case.h"

#include <chrono>

#include "kernels/common/error.h"
#include "kernels/common/layout.h"
#include "engine/bench/interrupt.h"
#include "engine/bench/prompts.h"
#include "engine/bench/ragged_case.h"

namespace llmbench {

std::string CaseSpec::label() const {
  const std::string v = variants.describe();
  return model + " " + std::string(dtype_name(dtype)) + " " + backend + " b" +
         std::to_string(batch) + " p" + std::to_string(prompt_len) + " n" +
         std::to_string(max_new_tokens) + (v.empty() ? "" : " " + v);
}

namespace {

using Clock = std::chrono::steady_clock;

std::int64_t ns_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count();
}

// One repetition: prefill then max_new_tokens - 1 decode steps. Returns its timings and
// writes the generated ids ([batch][max_new_tokens]) to `generated`. With a `meter`, the
// energy counter is read right outside the prefill's clock and right outside the first and
// last decode step's (prefill() and decode_step() return with the device idle), so the reads
// never enter TTFT or TPOT.
RepSample run_once(Session& session, const CaseSpec& spec, const std::vector<std::int32_t>& prompt,
                   std::vector<std::vector<std::int32_t>>& generated,
                   const EnergyMeter* meter) {
  RepSample s;
  generated.assign(std::size_t(spec.batch), {});
  std::optional<EnergyReading> e0, e1;
  if (meter) e0 = meter->read();
  auto t0 = Clock::now();
  std::vector<std::int32_t> next = session.prefill(prompt, spec.prompt_len);
  auto t1 = Clock::now();
  if (meter) {
    e1 = meter->read();
    s.prefill_energy = energy_span(e0, e1);
    e0 = e1;  // the decode steps start right after this read
  }
  s.ttft_ns = ns_between(t0, t1);
  for (int step = 1; step <= spec.max_new_tokens; ++step) {
    for (int b = 0; b < spec.batch; ++b) generated[b].push_back(next[b]);
    if (step == spec.max_new_tokens) break;
    throw_if_interrupted();  // Ctrl-C abandons the case between steps (engine/bench/interrupt.h)
    t0 = Clock::now();
    next = session.decode_step(next);
    t1 = Clock::now();
    s.decode_ns.push_back(ns_between(t0, t1));
  }
  if (meter && !s.decode_ns.empty()) s.decode_energy = energy_span(e0, meter->read());
  return s;
}

CaseResult run_static_case(const Model& model, const CaseSpec& spec, const Peaks& peaks,
                           Clock::time_point origin, const EnergyMeter* meter);

}  // namespace

void set_trace_overheads(CaseResult& r) {
  r.trace_overhead_ttft = double(r.traced_sample->ttft_ns) / 1e6 / r.metrics.ttft_ms.percentile(50);
  if (r.metrics.tpot_ms) {
    double sum = 0;
    for (auto d : r.traced_sample->decode_ns) sum += double(d);
    r.trace_overhead_tpot =
        sum / double(r.traced_sample->decode_ns.size()) / 1e6 / r.metrics.tpot_ms->mean;
  }
}

CaseResult run_case(const Model& model, const CaseSpec& spec, const Peaks& peaks,
                    Clock::time_point origin, ReadProbe* probe, ComputeProbe* compute,
                    const EnergyMeter* energy) {
  // MBU applies only with decode steps; so does the read probe. Every case has a prefill, so
  // every case with a compute probe takes it (unless --peak-tflops fixed MFU's denominator).
  const bool probed = probe != nullptr && spec.max_new_tokens > 1;
  const bool computed = compute != nullptr && !peaks.tflops_given;
  const ProbeShape shape =
      compute_probe_shape(model.config(), std::int64_t(spec.batch) * spec.prompt_len);
  std::optional<double> before, after, gemm_before, gemm_after;
  if (computed) gemm_before = compute->measure(spec.dtype, shape).tflops_best;
  if (probed) before = probe->measure().gbps_best;
  // The counter's update and the idle power, with the device idle right before the case. A
  // ragged case runs through the scheduler and is not metered (its note says so).
  const EnergyMeter* meter = spec.variants.ragged() ? nullptr : energy;
  EnergyCalibration calibration;
  if (meter) calibration = meter->calibrate(kEnergyCalibrationTimeout);
  CaseResult r = spec.variants.ragged() ? run_ragged_case(model, spec, peaks, origin)
                                        : run_static_case(model, spec, peaks, origin, meter);
  if (meter) {
    std::vector<std::optional<EnergySpan>> prefill, decode;
    for (const RepSample& s : r.samples) {
      prefill.push_back(s.prefill_energy);
      if (!s.decode_ns.empty()) decode.push_back(s.decode_energy);
    }
    r.energy = case_energy(prefill, decode, std::int64_t(spec.batch) * spec.prompt_len,
                           std::int64_t(spec.batch) * (spec.max_new_tokens - 1), calibration,
                           meter->power_limit_w());
  } else if (energy) {
    r.energy.note = "energy is not metered for ragged cases";
  }
  if (probed) after = probe->measure().gbps_best;
  if (computed) gemm_after = compute->measure(spec.dtype, shape).tflops_best;
  r.roof = apply_case_roof(r.metrics, peaks, before, after, gemm_before, gemm_after);
  return r;
}

namespace {

CaseResult run_static_case(const Model& model, const CaseSpec& spec, const Peaks& peaks,
                           Clock::time_point origin, const EnergyMeter* meter) {
  const ModelConfig& c = model.config();
  CaseResult r;
  r.spec = spec;
  const int max_len = spec.prompt_len + spec.max_new_tokens;
  r.memory = estimate_memory(c, spec.dtype, spec.batch, spec.prompt_len, max_len, spec.variants);
  // The weights are already resident; only the case's own buffers must still fit.
  check_fits(r.memory, available_host_memory(), "host", r.memory.weight_bytes);

  Session session(model, spec.batch, spec.prompt_len, max_len, spec.variants);
  if (spec.prompt.empty()) {
    r.prompt_ids = synthetic_prompts(spec.seed, spec.batch, spec.prompt_len, c.vocab_size,
                                     spec.distinct_prompts);
  } else {
    LLMBENCH_CHECK(int(spec.prompt.size()) == spec.prompt_len, "prompt ids and prompt_len differ");
    for (int b = 0; b < spec.batch; ++b)
      r.prompt_ids.insert(r.prompt_ids.end(), spec.prompt.begin(), spec.prompt.end());
  }
  r.cost = case_cost(c, spec.batch, spec.prompt_len, spec.max_new_tokens, spec.dtype,
                     kv_dtype_bytes(spec.variants.kv_dtype));

  const auto once = [&](std::vector<std::vector<std::int32_t>>& g) {
    return run_once(session, spec, r.prompt_ids, g, meter);
  };
  run_repetitions(r, spec, model, once);
  check_logits_finite(session.last_logits(), spec.batch, "sequence", session, once);
  r.metrics = compute_metrics(spec.batch, spec.prompt_len, spec.max_new_tokens, r.cost,
                              r.samples, peaks);

  std::vector<std::string> graph_notes;
  if (const std::string note = session.graph_note(); !note.empty()) graph_notes.push_back(note);
  add_traced_repetition(r, spec, model, origin, session, once);
  const StepGraphs* graphs = session.graphs();
  if (graphs && !r.trace.empty() && graphs->traced_launches() == 0)
    graph_notes.push_back("cuda graphs: the traced repetition's decode steps ran eagerly (only "
                          "--timer cupti, with CUPTI's callbacks free, gives a replayed graph's "
                          "kernels to their ops), so trace_overhead_tpot compares eager traced "
                          "steps with graph-replayed untraced ones");
  if (const int n = r.trace_device.unmatched_graph_nodes; n > 0)
    graph_notes.push_back("cuda graphs: " + std::to_string(n) + " kernels, copies or sets of "
                          "replayed graphs ran in nodes no op was recorded for at capture; "
                          "counted, not stored");
  r.notes.insert(r.notes.end(), graph_notes.begin(), graph_notes.end());
  if (spec.variants.decode_attention == DecodeAttention::kStreamed &&
      !streamed_attention_takes(c.head_dim()))
    r.notes.push_back("decode attention: the streamed kernel takes head_dim 64, 128 or 256; this "
                      "model's " + std::to_string(c.head_dim()) +
                      " ran the tiled kernel in every call");
  if (spec.variants.cuda_graphs) {
    r.graphs.requested = true;
    r.graphs.graph_steps = graphs ? graphs->captures() + graphs->replays() : 0;
    r.graphs.eager_steps = session.decode_steps_run() - r.graphs.graph_steps;
    r.graphs.traced_graph_steps = graphs ? graphs->traced_launches() : 0;
    for (const std::string& n : graph_notes)
      r.graphs.note += (r.graphs.note.empty() ? "" : "; ") + n;
  }
  return r;
}

}  // namespace

}  // namespace llmbench
