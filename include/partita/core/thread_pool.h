#pragma once
// A small persistent thread pool: worker threads started once and reused, a FIFO task queue,
// results and exceptions returned through std::future.
//
// Contract:
// - submit() never blocks on the tasks; it is thread-safe, also from inside a task.
// - Tasks start in submission order (one queue); with several workers they may finish in
//   any order. A task's exception reaches whoever calls get() on its future.
// - Idle workers wait on a condition variable: nothing spins (DESIGN decision 9).
// - A pool with no workers runs each task inside submit(), on the caller.
// - reserve(n) adds workers up to n; workers are never removed before destruction.
// - The destructor runs every task already queued (so no future is left broken), then
//   joins the workers. A task must not wait for a task queued after it unless the pool has
//   a worker free for that one (the pool does not run queued tasks on waiters).
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace partita {

class ThreadPool {
 public:
  explicit ThreadPool(int workers = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Starts workers until there are at least `workers`. Thread-safe.
  void reserve(int workers);
  int size() const;

  // Queues f() and returns the future of its result (or exception).
  template <class F>
  std::future<std::invoke_result_t<std::decay_t<F>>> submit(F&& f) {
    using R = std::invoke_result_t<std::decay_t<F>>;
    // packaged_task is move-only and std::function copyable: share it.
    auto task = std::make_shared<std::packaged_task<R()>>(std::forward<F>(f));
    std::future<R> result = task->get_future();
    enqueue([task] { (*task)(); });
    return result;
  }

 private:
  // Runs `task` on a worker (inline if there is none). `task` must not throw: submit()
  // wraps it in a packaged_task, which stores the exception instead.
  void enqueue(std::function<void()> task);
  void work();

  mutable std::mutex mutex_;
  std::condition_variable cv_;  // a task was queued, or stopping_
  std::deque<std::function<void()>> queue_;
  std::vector<std::thread> workers_;
  bool stopping_ = false;
};

}  // namespace partita
