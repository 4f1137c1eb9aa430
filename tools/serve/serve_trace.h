// `llmbench serve --trace steps|ops`: the engine's per-step op records, timed by the same
// timers `run` uses (Backend::make_op_timer(kDevice): the host clock on the CPU, CUPTI on the
// CUDA backend, CUDA event pairs where CUPTI is missing), handed out as the server runs.
// `steps` records one range per engine step ("engine_step"); `ops` adds every op inside it.
// A timer that resolves per step (host clock, event pairs) is drained after every step; one
// that resolves only at the end (CUPTI) gets a new Tracer every kWindowSteps steps and when
// the engine goes idle, so its records arrive at most a window late and nothing is read back
// between steps. Runs on the engine thread only.
// Not here: storing the records (serve_store.h) or which requests a step held (StepStats).
#pragma once
#include <chrono>
#include <memory>
#include <vector>

#include "engine/model/backend.h"
#include "engine/model/trace.h"
#include "engine/serving/scheduler.h"

namespace llmbench {

class ServeTrace {
 public:
  static constexpr int kWindowSteps = 64;

  // level kSteps or kOps; records are ns since `origin` (the server's).
  ServeTrace(TraceLevel level, Backend& backend, std::chrono::steady_clock::time_point origin);
  ~ServeTrace();

  TraceLevel level() const { return level_; }
  // Installs the tracer into `scheduler` (call before the first traced step).
  void attach(Scheduler& scheduler);
  // After a step (or, with `idle`, when the engine has nothing to run): the records that are
  // complete now, every one carrying its step's number (OpRecord::step); parents index into
  // the returned vector. May replace the scheduler's tracer (the windowed case).
  std::vector<OpRecord> collect(Scheduler& scheduler, bool idle);

 private:
  std::unique_ptr<Tracer> fresh() const;

  TraceLevel level_;
  Backend& backend_;
  std::chrono::steady_clock::time_point origin_;
  std::unique_ptr<Tracer> tracer_;
  int steps_in_window_ = 0;
};

}  // namespace llmbench
