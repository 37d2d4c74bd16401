#pragma once
// SIGINT and SIGTERM during a sweep: finish the running case, write its row, stop cleanly.

namespace convbench {

/// SIGINT and SIGTERM set a flag (the running case finishes and its row is written) and
/// restore the default action, so a second signal stops at once.
void install_interrupt_handlers();
bool interrupted();
/// The signal that interrupted the sweep (SIGINT or SIGTERM), 0 when none.
int interrupt_signal();

}  // namespace convbench
