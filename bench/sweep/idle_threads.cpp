#include "sweep/idle_threads.hpp"

// OpenBLAS's own shutdown of its pool (what it runs before a fork), looked up weakly: convbench
// does not link OpenBLAS itself, the CPU backends do where the build found it.
extern "C" int blas_thread_shutdown_(void) __attribute__((weak));

namespace convbench {

void stop_idle_blas_threads() {
  if (blas_thread_shutdown_ != nullptr) blas_thread_shutdown_();
}

}  // namespace convbench
