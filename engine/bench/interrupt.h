// Cooperative interruption of a benchmark (Ctrl-C). A signal handler calls
// request_interrupt() (async-signal-safe); run_case polls throw_if_interrupted() between
// repetitions and decode steps and abandons the case by throwing Interrupted, which the sweep
// loop catches: finished cases are already stored, the abandoned one is not.
#pragma once
#include "kernels/common/error.h"

namespace llmbench {

class Interrupted : public Error {
 public:
  Interrupted() : Error("interrupted") {}
};

void request_interrupt() noexcept;  // async-signal-safe
bool interrupt_requested() noexcept;
void clear_interrupt() noexcept;
// Throws Interrupted once request_interrupt() has been called.
void throw_if_interrupted();

}  // namespace llmbench
