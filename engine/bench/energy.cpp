// Energy per phase (see energy.h): readings to spans, spans to phases, phases to checks.
#include "engine/bench/energy.h"

#include <cstdio>
#include <thread>

namespace llmbench {

namespace {

using Clock = std::chrono::steady_clock;

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

std::string fixed1(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

}  // namespace

std::optional<EnergySpan> energy_span(const std::optional<EnergyReading>& before,
                                      const std::optional<EnergyReading>& after) {
  if (!before || !after || after->mj < before->mj || after->ns < before->ns) return std::nullopt;
  return EnergySpan{std::int64_t(after->mj - before->mj), after->ns - before->ns};
}

std::optional<EnergyReading> EnergyMeter::read() const {
  const std::optional<std::uint64_t> mj = read_mj_();
  const std::int64_t ns = now_ns();
  if (!mj) return std::nullopt;
  return EnergyReading{*mj, ns};
}

EnergyCalibration EnergyMeter::calibrate(std::chrono::milliseconds timeout) const {
  const std::int64_t end = now_ns() + std::int64_t(timeout.count()) * 1000000;
  std::optional<EnergyReading> last = read();
  std::vector<EnergyReading> changes;  // the first two readings that differ from the one before
  while (last && changes.size() < 2 && now_ns() < end) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    const std::optional<EnergyReading> r = read();
    if (!r) break;
    if (r->mj != last->mj) changes.push_back(*r);
    last = r;
  }
  EnergyCalibration c;
  if (changes.size() < 2 || changes[1].ns <= changes[0].ns || changes[1].mj < changes[0].mj)
    return c;
  const double ns = double(changes[1].ns - changes[0].ns);
  c.update_ms = ns / 1e6;
  c.idle_w = double(changes[1].mj - changes[0].mj) / 1e3 / (ns / 1e9);
  return c;
}

void PhaseEnergy::add(const EnergySpan& s, std::int64_t span_tokens) {
  joules += double(s.mj) / 1e3;
  ns += s.ns;
  ++spans;
  tokens += span_tokens;
}

std::optional<double> PhaseEnergy::j_per_token() const {
  if (spans == 0 || tokens <= 0) return std::nullopt;
  return joules / double(tokens);
}

std::optional<double> PhaseEnergy::watts() const {
  if (spans == 0 || ns <= 0) return std::nullopt;
  return joules / (double(ns) / 1e9);
}

std::optional<double> PhaseEnergy::mean_span_ms() const {
  if (spans == 0) return std::nullopt;
  return double(ns) / spans / 1e6;
}

CaseEnergy case_energy(const std::vector<std::optional<EnergySpan>>& prefill_spans,
                       const std::vector<std::optional<EnergySpan>>& decode_spans,
                       std::int64_t prefill_tokens, std::int64_t decode_tokens,
                       const EnergyCalibration& calibration,
                       std::optional<double> power_limit_w) {
  CaseEnergy e;
  e.metered = true;
  e.calibration = calibration;
  e.power_limit_w = power_limit_w;
  std::vector<std::string> notes;
  // A phase with one failed reading is left out whole: a sum over some repetitions would
  // divide fewer spans' joules by the same per-repetition tokens and look plausible.
  auto sum = [&](const char* name, const std::vector<std::optional<EnergySpan>>& spans,
                 std::int64_t tokens, PhaseEnergy& out) {
    PhaseEnergy p;
    for (std::size_t i = 0; i < spans.size(); ++i) {
      if (!spans[i]) {
        notes.push_back(std::string(name) + ": the energy counter could not be read in "
                        "repetition " + std::to_string(i));
        return;
      }
      p.add(*spans[i], tokens);
    }
    out = p;
  };
  sum("prefill", prefill_spans, prefill_tokens, e.prefill);
  sum("decode", decode_spans, decode_tokens, e.decode);
  e.note = join(notes);
  return e;
}

std::vector<std::string> phase_energy_findings(const std::string& name, const PhaseEnergy& p,
                                               const EnergyCalibration& calibration,
                                               std::optional<double> power_limit_w) {
  std::vector<std::string> out;
  const std::optional<double> w = p.watts();
  if (!w) return out;
  const std::optional<double> span = p.mean_span_ms();
  if (calibration.update_ms && span && *span < *calibration.update_ms)
    out.push_back(name + " " + fixed1(*span) + " ms per span < counter update " +
                  fixed1(*calibration.update_ms) + " ms");
  if (power_limit_w && *w > *power_limit_w * (1 + kEnergyTolerance))
    out.push_back(name + " " + fixed1(*w) + " W > power limit " + fixed1(*power_limit_w) + " W");
  if (calibration.idle_w && *w < *calibration.idle_w * (1 - kEnergyTolerance))
    out.push_back(name + " " + fixed1(*w) + " W < idle " + fixed1(*calibration.idle_w) + " W");
  return out;
}

std::optional<std::string> energy_check(const CaseEnergy& e) {
  if (!e.metered) return e.note.empty() ? std::nullopt : std::optional<std::string>(e.note);
  std::vector<std::string> findings;
  if (!e.note.empty()) findings.push_back(e.note);
  if (!e.calibration.update_ms) findings.push_back("the counter did not advance while idle");
  for (const auto& [name, phase] : {std::pair<const char*, const PhaseEnergy*>{"prefill", &e.prefill},
                                    {"decode", &e.decode}})
    for (std::string& f : phase_energy_findings(name, *phase, e.calibration, e.power_limit_w))
      findings.push_back(std::move(f));
  return findings.empty() ? std::string("ok") : join(findings);
}

void StepSpanEnergy::before_step() {
  if (is_open_) return;
  open_ = meter_.read();
  open_ns_ = now_ns();
  is_open_ = true;
  tokens_ = 0;
}

void StepSpanEnergy::after_step(std::int64_t tokens, bool idle) {
  if (!is_open_) return;
  tokens_ += tokens;
  // The counter is read only when the span closes: when it is long enough or the engine goes
  // idle (an NVML read is a driver call; not one per step).
  if (!idle && now_ns() - open_ns_ < min_span_ns_) return;
  const std::optional<EnergyReading> now = meter_.read();
  if (const std::optional<EnergySpan> s = energy_span(open_, now)) {
    total_.add(*s, tokens_);
  } else {
    ++failed_;
  }
  tokens_ = 0;
  if (idle || !now) {
    is_open_ = false;
    open_.reset();
  } else {
    open_ = now;  // the next span starts where this one ended
    open_ns_ = now_ns();
  }
}

}  // namespace llmbench
