// --timer cupti on the CUDA backend: traced ops timed by the device's own record of what ran
// (the CUPTI Activity API), not by event pairs enqueued around every op. Each op pushes an
// external correlation id while it issues work; after the traced repetition the kernels,
// memcpys and memsets CUPTI reports are attributed to the op that launched them
// (activity_attribution.h). An op's time is the sum of its kernels' device durations; a range's
// spans its ops. Nothing is enqueued on the stream and nothing is read back per step, so the
// traced steps run as the untraced ones do (docs/metrics.md, "Op timer").
// Built only when the CUDA toolkit's CUPTI was found (LLMBENCH_HAVE_CUPTI).
#pragma once
#include <memory>

#include "engine/model/trace.h"

namespace llmbench {

// Starts CUPTI activity collection for the timer's lifetime; llmbench::Error when CUPTI
// cannot be initialised (its own error text in the message).
std::unique_ptr<OpTimer> make_cupti_timer();

}  // namespace llmbench
