// SIGINT and SIGTERM during a sweep (sweep/signals.hpp).
#include "sweep/signals.hpp"

#include <csignal>

namespace convbench {

namespace {

volatile std::sig_atomic_t g_signal = 0;

extern "C" void on_interrupt(int signal) {
  g_signal = signal;
  std::signal(signal, SIG_DFL);  // a second signal stops at once
}

}  // namespace

void install_interrupt_handlers() {
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
}
bool interrupted() { return g_signal != 0; }
int interrupt_signal() { return g_signal; }

}  // namespace convbench
