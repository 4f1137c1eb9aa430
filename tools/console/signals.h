// SIGINT/SIGTERM during a sweep: the first signal requests a cooperative interrupt
// (engine/bench/interrupt.h: the current case is abandoned at its next repetition or step boundary,
// or finished and stored if it has already finished running); a second one kills the process at
// once with the default action. Every finished case is already committed, so even that loses
// nothing stored.
#pragma once
#include <csignal>

namespace llmbench {

class ScopedInterruptHandler {
 public:
  ScopedInterruptHandler();   // installs the handlers for SIGINT and SIGTERM
  ~ScopedInterruptHandler();  // restores the previous ones
  ScopedInterruptHandler(const ScopedInterruptHandler&) = delete;
  ScopedInterruptHandler& operator=(const ScopedInterruptHandler&) = delete;

  // The signal that requested the interrupt (SIGINT or SIGTERM), 0 if none.
  static int signal_received();

 private:
  struct sigaction old_int_{}, old_term_{};
};

}  // namespace llmbench
