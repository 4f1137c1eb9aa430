// Energy per phase (docs/metrics.md, "Energy per phase"): the board's energy counter read
// around the prefill and around the decode steps of each measured repetition (run), or around
// spans of engine steps (serve), turned into joules per token and average watts. Plain host-side
// arithmetic on readings, fed by an EnergyMeter (NVML's counter for a CUDA device,
// engine/bench/nvml.h, or any function in tests), so every figure is tested without a GPU.
// Deliberately not: per-decode-step energy. A step takes milliseconds and the counter advances
// in steps NVML does not specify (measured by calibrate()), so a step's difference can be 0 or
// one whole update;
// a phase is measured over its whole span in each repetition and summed over repetitions, and
// energy_check says when a phase's span is shorter than the counter's update.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace llmbench {

// One reading of the energy counter: its value and when it was read.
struct EnergyReading {
  std::uint64_t mj = 0;  // the counter, millijoules
  std::int64_t ns = 0;   // steady_clock at the read, ns (any fixed origin)
};

// The energy of one span (a phase of one repetition, a span of engine steps): the counter's
// difference and the time between the two readings that bracket it.
struct EnergySpan {
  std::int64_t mj = 0;
  std::int64_t ns = 0;
};

// The span between two readings; nullopt when either is missing (a read failed) or the counter
// went backwards (the driver was reloaded).
std::optional<EnergySpan> energy_span(const std::optional<EnergyReading>& before,
                                      const std::optional<EnergyReading>& after);

// The counter's update interval and the board's power with nothing running, measured by
// polling the counter until it has changed twice: the time between the two changes, and the
// energy it counted in between divided by that time.
struct EnergyCalibration {
  std::optional<double> update_ms;  // nullopt: the counter did not change twice in time
  std::optional<double> idle_w;
};

// How long a case's calibration may poll for the counter's two changes (a counter that updates
// every 100 ms needs up to 200).
inline constexpr std::chrono::milliseconds kEnergyCalibrationTimeout{1000};

// A counter read on demand, with the clock read beside it.
class EnergyMeter {
 public:
  using ReadMj = std::function<std::optional<std::uint64_t>()>;
  EnergyMeter(ReadMj read_mj, std::optional<double> power_limit_w)
      : read_mj_(std::move(read_mj)), power_limit_w_(power_limit_w) {}

  // The counter now (nullopt: the read failed), stamped with steady_clock.
  std::optional<EnergyReading> read() const;
  // Polls the counter (about every 0.2 ms) until it has changed twice, for at most `timeout`.
  // Call it with the device idle: idle_w is what the board draws then.
  EnergyCalibration calibrate(std::chrono::milliseconds timeout) const;
  // The board's enforced power limit, watts (nullopt: unknown).
  std::optional<double> power_limit_w() const { return power_limit_w_; }

 private:
  ReadMj read_mj_;
  std::optional<double> power_limit_w_;
};

// One phase's energy summed over the spans it was measured in.
struct PhaseEnergy {
  double joules = 0;
  std::int64_t ns = 0;      // the spans' summed time between their readings
  int spans = 0;            // spans summed (a run: one per measured repetition)
  std::int64_t tokens = 0;  // tokens the phase produced over those spans
  void add(const EnergySpan& s, std::int64_t span_tokens);
  // joules / tokens; nullopt without spans or tokens.
  std::optional<double> j_per_token() const;
  // joules / seconds; nullopt without spans or time.
  std::optional<double> watts() const;
  // ns / spans / 1e6: the mean span, which energy_check compares with the counter's update.
  std::optional<double> mean_span_ms() const;
};

// What a case measured: each phase over its measured repetitions, the counter's update and the
// board's idle power right before the case, its power limit, and why there is nothing when
// there is nothing.
struct CaseEnergy {
  bool metered = false;  // a meter was read for this case
  std::string note;      // why not ("NVML unavailable: ..."), or why a phase is missing
  PhaseEnergy prefill, decode;
  EnergyCalibration calibration;
  std::optional<double> power_limit_w;
};

// A case's energy from its repetitions' spans: prefill_spans[i] and decode_spans[i] are
// repetition i's (nullopt: a read failed there; the phase is then left empty and the note says
// which repetition), each repetition prefilling `prefill_tokens` and decoding `decode_tokens`
// tokens (a case without decode steps passes no decode spans).
CaseEnergy case_energy(const std::vector<std::optional<EnergySpan>>& prefill_spans,
                       const std::vector<std::optional<EnergySpan>>& decode_spans,
                       std::int64_t prefill_tokens, std::int64_t decode_tokens,
                       const EnergyCalibration& calibration,
                       std::optional<double> power_limit_w);

// A phase's watts may lie this far outside [idle, limit] before energy_check flags it: the
// counter's update smears a phase's edges, and boards exceed the limit briefly.
inline constexpr double kEnergyTolerance = 0.10;

// The device check of a measured phase: "ok", or every finding joined by "; ": "prefill 3.1 ms
// per span < counter update 20.0 ms" (the span is shorter than the counter's update: its energy
// is smeared over what ran before and after it), "decode 812.0 W > power limit 700.0 W",
// "decode 40.0 W < idle 60.0 W" (beyond kEnergyTolerance). nullopt when nothing was metered;
// the note when nothing could be.
std::optional<std::string> energy_check(const CaseEnergy& e);
// The same for one phase (`name`: "prefill", "decode", "serve").
std::vector<std::string> phase_energy_findings(const std::string& name, const PhaseEnergy& p,
                                               const EnergyCalibration& calibration,
                                               std::optional<double> power_limit_w);

// Spans of engine steps (serve): a span opens at a reading before a step when none is open,
// and closes at a reading after a step once it is at least `min_span` long or the engine has no
// more work (an idle engine's time is not counted). Busy back-to-back spans share their
// boundary reading, so no step falls between two spans.
class StepSpanEnergy {
 public:
  StepSpanEnergy(const EnergyMeter& meter, std::chrono::nanoseconds min_span)
      : meter_(meter), min_span_ns_(min_span.count()) {}
  // Before a step.
  void before_step();
  // After a step that produced `tokens` output tokens; `idle`: no work is left.
  void after_step(std::int64_t tokens, bool idle);
  // The summed spans (tokens: output tokens of the steps inside them).
  const PhaseEnergy& total() const { return total_; }
  // Spans lost to a failed read or a counter that went backwards.
  int failed_spans() const { return failed_; }

 private:
  const EnergyMeter& meter_;
  std::int64_t min_span_ns_;
  std::optional<EnergyReading> open_;
  std::int64_t open_ns_ = 0;
  bool is_open_ = false;
  std::int64_t tokens_ = 0;
  PhaseEnergy total_;
  int failed_ = 0;
};

}  // namespace llmbench
