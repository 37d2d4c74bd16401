// convbench stops the thread pool OpenBLAS leaves spinning before it times a case
// (sweep/idle_threads.hpp). The pool's spinning shows as CPU time the process spends while its
// only thread of its own sleeps; the test measures that, not any speed.
#include <cblas.h>
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>
#include <thread>
#include <vector>

#include "sweep/idle_threads.hpp"

namespace convbench {
namespace {

double process_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) { return double(t.tv_sec) + 1e-6 * t.tv_usec; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// A product OpenBLAS splits over two threads; afterwards its workers wait for more work
// spinning, for about 70 ms.
void threaded_product(std::vector<float>& c) {
  constexpr int n = 512;
  const std::vector<float> a(n * n, 1.0f), b(n * n, 2.0f);
  c.assign(n * n, 0.0f);
  openblas_set_num_threads(2);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n,
              0.0f, c.data(), n);
}

double cpu_seconds_while_sleeping(std::chrono::milliseconds sleep) {
  const double before = process_cpu_seconds();
  std::this_thread::sleep_for(sleep);
  return process_cpu_seconds() - before;
}

TEST(IdleBlasThreads, StoppedPoolSpendsNoCpuAndStartsAgainWhenCalled) {
  if (std::thread::hardware_concurrency() < 2) {
    GTEST_SKIP() << "one CPU: OpenBLAS runs no worker threads, so none can spin";
  }
  std::vector<float> c;
  // Without the stop the pool spins through most of the sleep (about 70 ms of CPU on an idle
  // machine). Where another process has the other CPU, sched_yield hands it the core and the
  // spinning shows little: a few tries, and without it the stop has nothing to show.
  double spinning = 0;
  for (int attempt = 0; attempt < 5 && spinning <= 0.01; ++attempt) {
    threaded_product(c);
    spinning = cpu_seconds_while_sleeping(std::chrono::milliseconds(60));
  }
  if (spinning <= 0.01) {
    GTEST_SKIP() << "the pool did not spin after five threaded products (at most " << spinning
                 << " s of CPU in 60 ms; another process on the other CPU?): nothing to stop";
  }
  threaded_product(c);
  stop_idle_blas_threads();
  const double stopped = cpu_seconds_while_sleeping(std::chrono::milliseconds(100));
  EXPECT_LT(stopped, 0.01) << "the process spent " << stopped
                           << " s of CPU while its thread slept after the pool was stopped";
  // OpenBLAS starts the pool again for the next product that wants threads.
  threaded_product(c);
  EXPECT_EQ(c.front(), 1024.0f);
  EXPECT_EQ(c.back(), 1024.0f);
  stop_idle_blas_threads();
  stop_idle_blas_threads();  // nothing left to stop: no effect
}

}  // namespace
}  // namespace convbench
