#include "worker_pool.hpp"

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace convlab::cpu_fft {
namespace {

class WorkerPool {
 public:
  ~WorkerPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    start_.notify_all();
    for (auto& t : threads_) t.join();
  }

  void reserve(int threads) {
    std::lock_guard<std::mutex> run_lock(run_mutex_);  // no job may be in flight
    while (static_cast<int>(threads_.size()) < threads - 1) {
      const int index = static_cast<int>(threads_.size()) + 1;
      threads_.emplace_back([this, index] { work_loop(index); });
    }
  }

  void run(int threads, int64_t tasks, TaskFunction task, void* context) {
    if (tasks <= 0) return;
    std::lock_guard<std::mutex> run_lock(run_mutex_);
    int helpers = threads - 1;
    if (helpers > static_cast<int>(threads_.size())) helpers = static_cast<int>(threads_.size());
    if (static_cast<int64_t>(helpers) > tasks - 1) helpers = static_cast<int>(tasks - 1);
    next_.store(0, std::memory_order_relaxed);
    task_ = task;
    context_ = context;
    tasks_ = tasks;
    if (helpers > 0) {
      std::lock_guard<std::mutex> lock(mutex_);
      helpers_ = helpers;
      pending_ = helpers;
      ++generation_;
    }
    if (helpers > 0) start_.notify_all();
    drain(0);
    if (helpers > 0) {
      std::unique_lock<std::mutex> lock(mutex_);
      done_.wait(lock, [this] { return pending_ == 0; });
    }
  }

 private:
  void drain(int worker) {
    for (;;) {
      const int64_t i = next_.fetch_add(1, std::memory_order_relaxed);
      if (i >= tasks_) return;
      task_(context_, i, worker);
    }
  }

  void work_loop(int index) {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      start_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      if (index > helpers_) continue;  // not needed for this job
      lock.unlock();
      drain(index);
      lock.lock();
      if (--pending_ == 0) done_.notify_one();
    }
  }

  std::mutex run_mutex_;  // one job at a time; held by reserve() too
  std::mutex mutex_;      // guards generation_, helpers_, pending_, stop_
  std::condition_variable start_, done_;
  std::vector<std::thread> threads_;
  uint64_t generation_ = 0;
  int helpers_ = 0;
  int pending_ = 0;
  bool stop_ = false;
  // The job, written before generation_ is bumped under mutex_ and read after it is seen.
  TaskFunction task_ = nullptr;
  void* context_ = nullptr;
  int64_t tasks_ = 0;
  std::atomic<int64_t> next_{0};
};

WorkerPool& pool() {
  static WorkerPool instance;
  return instance;
}

}  // namespace

void reserve_workers(int threads) { pool().reserve(threads); }

void run_tasks(int threads, int64_t tasks, TaskFunction task, void* context) {
  pool().run(threads, tasks, task, context);
}

}  // namespace convlab::cpu_fft
