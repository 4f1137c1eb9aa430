// The serving tracer (see serve_trace.h).
#include "tools/serve/serve_trace.h"

namespace llmbench {

ServeTrace::ServeTrace(TraceLevel level, Backend& backend,
                       std::chrono::steady_clock::time_point origin)
    : level_(level), backend_(backend), origin_(origin), tracer_(fresh()) {}

ServeTrace::~ServeTrace() = default;

std::unique_ptr<Tracer> ServeTrace::fresh() const {
  return std::make_unique<Tracer>(level_, backend_.make_op_timer(TimerMode::kDevice), origin_);
}

void ServeTrace::attach(Scheduler& scheduler) { scheduler.set_tracer(tracer_.get()); }

std::vector<OpRecord> ServeTrace::collect(Scheduler& scheduler, bool idle) {
  if (!tracer_->resolves_at_end()) return tracer_->take_records();
  if (!idle) ++steps_in_window_;
  if (steps_in_window_ == 0 || (!idle && steps_in_window_ < kWindowSteps)) return {};
  // The window ends. The scheduler lets go of the old tracer first and the new one is made
  // only once the old one's timer is gone: CUPTI allows one timer at a time.
  scheduler.set_tracer(nullptr);
  tracer_->finish();
  std::vector<OpRecord> out = tracer_->records();
  tracer_.reset();
  tracer_ = fresh();
  scheduler.set_tracer(tracer_.get());
  steps_in_window_ = 0;
  return out;
}

}  // namespace llmbench
