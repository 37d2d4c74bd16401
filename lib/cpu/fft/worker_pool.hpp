#pragma once
// The threads of cpu.fft: one level of parallelism over independent tasks (chunks of planes
// for the FFTs, ranges of bins for the products), each task single-threaded inside (FFTW
// plans are made for one thread, the bin GEMM is plain code). Nothing nests, so the cores
// are never oversubscribed, and every worker owns its staging buffer.
//
// The pool is process-wide and only grows: reserve() (called by plan()) creates threads, and
// run() starts no thread and allocates nothing; workers sleep on a condition variable in
// between, so an idle pool costs no CPU time (no spinning that would steal cycles from the
// next algorithm a benchmark times).

#include <cstdint>

namespace convlab::cpu_fft {

/// A task: `task(context, index, worker)` for index in [0, tasks); worker < threads names
/// the thread (0 is the caller) so that a task can use that worker's scratch.
using TaskFunction = void (*)(void* context, int64_t index, int worker);

/// Makes sure `threads` - 1 worker threads exist (threads >= 1). May allocate; not for run().
void reserve_workers(int threads);

/// Runs every task once on `threads` threads (the caller and threads - 1 workers), handing
/// out indices dynamically, and returns when all are done. Requires reserve_workers(threads)
/// before. Concurrent calls are serialised. Tasks must not throw.
void run_tasks(int threads, int64_t tasks, TaskFunction task, void* context);

/// run_tasks with a callable: f(index, worker). The callable is referenced, not copied.
template <typename F>
void run_tasks(int threads, int64_t tasks, F& f) {
  run_tasks(threads, tasks,
            [](void* c, int64_t i, int w) { (*static_cast<F*>(c))(i, w); },
            static_cast<void*>(&f));
}

}  // namespace convlab::cpu_fft
