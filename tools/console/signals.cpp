// Interrupt signal handlers (see signals.h).
#include "tools/console/signals.h"

#include "engine/bench/interrupt.h"

namespace llmbench {

namespace {

volatile std::sig_atomic_t g_signal = 0;

extern "C" void on_interrupt(int sig) {
  g_signal = sig;
  request_interrupt();
  // A second signal of either kind takes the default action (terminate) at once.
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
}

}  // namespace

ScopedInterruptHandler::ScopedInterruptHandler() {
  clear_interrupt();
  g_signal = 0;
  struct sigaction sa{};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old_int_);
  sigaction(SIGTERM, &sa, &old_term_);
}

ScopedInterruptHandler::~ScopedInterruptHandler() {
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
}

int ScopedInterruptHandler::signal_received() { return g_signal; }

}  // namespace llmbench
