#include "convlab/threads.hpp"

#include <sched.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>

#include "convlab/error.hpp"
#include "convlab/knobs.hpp"

namespace convlab {
namespace {

std::atomic<int> g_threads{0};  // 0: not set, read the environment

int default_threads() {
  if (const auto env = environment_default("CONVLAB_NUM_THREADS")) {
    const char* text = env->c_str();
    char* end = nullptr;
    const long n = std::strtol(text, &end, 10);
    if (end != text && *end == '\0' && n >= 1 && n <= 4096) return static_cast<int>(n);
    throw Error(ErrorCode::invalid_argument, "CONVLAB_NUM_THREADS='" + env->substr(0, 64) +
                                                 "': expected an integer from 1 to 4096");
  }
  // The CPUs this process may run on (taskset, cgroup cpusets, Slurm's binding), not every
  // CPU of the machine: more threads than that only queue for the same cores.
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) == 0) {
    const int n = CPU_COUNT(&allowed);
    if (n >= 1) return n;
  }
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

}  // namespace

int num_threads() {
  int n = g_threads.load();
  if (n == 0) {
    n = default_threads();
    g_threads.store(n);
  }
  return n;
}

void set_num_threads(int n) {
  if (n < 1) {
    throw Error(ErrorCode::invalid_argument,
                "thread count " + std::to_string(n) + ": expected at least 1");
  }
  g_threads.store(n);
}

}  // namespace convlab
