// The memory `llmbench serve` needs, estimated from its flags before anything is allocated:
// the weights, the paged KV pool, and the ragged step's activations (sized for
// --max-num-batched-tokens rows and --max-num-seqs sequences), as engine/model/ragged_forward.cpp
// allocates them. `serve` refuses (exit 2) what does not fit, as `run` does for a case.
// Not here: allocation (the Scheduler does it).
#pragma once
#include "engine/model/config.h"
#include "engine/model/memory.h"
#include "engine/serving/scheduler.h"

namespace llmbench {

// `o` as given on the command line (0 = its default, resolved as the Scheduler does).
MemoryEstimate estimate_serve_memory(const ModelConfig& c, DType weight_dtype,
                                     const SchedulerOptions& o);

// BadInput when `need` exceeds `available_bytes` (-1: unknown, no check), naming the flags
// that size each part.
void check_serve_fits(const MemoryEstimate& need, std::int64_t available_bytes);

}  // namespace llmbench
